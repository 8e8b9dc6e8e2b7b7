"""What libraries built on JAX (equinox, flax) rely on beyond the documented API, each
as JAX 0.10.2 does it (values recorded from JAX 0.10.2)."""

import subprocess
import sys

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina.extend.core import find_top_trace
from lamina.interpreters.ad import JVPTracer


def test_tracers_of_one_jvp_share_their_traces_main():
    # equinox's filter_jvp tells its own tracers apart by ``tracer._trace.main``.
    seen = []

    def f(x, y):
        main = find_top_trace([x]).main
        seen.append(main is y._trace.main and isinstance(x, JVPTracer))
        inner = jax.jvp(lambda z: z * x, (x,), (x,))[0]
        seen.append(find_top_trace([inner]).main is not None)
        return x * y

    jax.jvp(f, (1.0, 2.0), (1.0, 1.0))
    assert seen == [True, True]


def test_vmap_of_a_callable_object_with_odd_attributes():
    class Model:
        __name__ = object()  # an equinox Module's class attributes can be anything

        def __call__(self, x):
            return x * 2

    out = jax.vmap(Model())(jnp.arange(3.0))
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])


def test_add_and_sub_give_array_tangents_for_python_and_numpy_tangents():
    # Recorded from JAX 0.10.2: [ArrayImpl, ArrayImpl] for each, weak for Python floats.
    for fun, primal, tangent in [
        (lambda x: x + 1, 1.0, 1.0),
        (lambda x: x - 1, 1.0, 1.0),
        (lambda x: x + 1, np.ones(2, np.float32), np.ones(2, np.float32)),
    ]:
        out = jax.jvp(fun, (primal,), (tangent,))
        assert all(isinstance(v, jax.Array) for v in out), out
    _, t = jax.jvp(lambda x: x + 1, (1.0,), (1.0,))
    assert t.weak_type and t.dtype == np.float32
    # A function that passes its input through leaves it alone (also as JAX).
    assert type(jax.jvp(lambda x: x, (1.0,), (1.0,))[1]) is float


def test_parse_flags_with_absl_reads_the_jax_options_of_the_command_line():
    # As JAX 0.10.2 (with absl installed) sets them from this command line.
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import lamina as jax; jax.config.parse_flags_with_absl(); "
            "print(jax.config.jax_enable_x64, jax.config.jax_default_matmul_precision, "
            "jax.config.jax_debug_nans, jax.config.jax_debug_infs)",
            "--jax_enable_x64",
            "--jax_default_matmul_precision=highest",
            "--nojax_debug_nans",
            "--other=1",
            "--",
            "--jax_debug_infs",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "highest", "False", "False"]


def test_isinstance_array_of_objects_answering_any_attribute_under_the_alias():
    # flax's Rngs answers every attribute; with ``jax`` being lamina, jaxlib must keep
    # asking only lamina's tracers whether they are arrays.
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import lamina.compat; lamina.compat.install(); import jax, jax.numpy as jnp\n"
            "class Anything:\n"
            "    def __getattr__(self, name):\n"
            "        return Anything()\n"
            "print(isinstance(Anything(), jax.Array), isinstance(jnp.ones(2), jax.Array))\n"
            "print(jax.jit(lambda x: isinstance(x, jax.Array))(1.0))",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True", "True"]


def test_cond_outputs_take_the_first_branchs_weak_types():
    # Recorded from JAX 0.10.2: the bound cond's outputs are typed as its first branch
    # (the false branch of lax.cond); equinox's error checks rely on it.
    x, y = jnp.where(True, 1, -1), jnp.int32(3)
    false_weak = jax.jit(lambda p, x, y: jax.lax.cond(p, lambda: y, lambda: x))(True, x, y)
    true_weak = jax.jit(lambda p, x, y: jax.lax.cond(p, lambda: x, lambda: y))(True, x, y)
    switch = jax.jit(lambda i, x, y: jax.lax.switch(i, [lambda: y, lambda: x]))(0, x, y)
    assert (false_weak.weak_type, true_weak.weak_type, switch.weak_type) == (True, False, False)


def test_linearize_with_aux():
    # Values recorded from JAX 0.10.2 (diffrax linearizes with has_aux).
    y, f_jvp, aux = jax.linearize(lambda x: (x * 2, {"a": x, "b": x * 3}), 1.0, has_aux=True)
    assert float(y) == 2.0 and float(f_jvp(1.0)) == 2.0
    assert aux["a"] == 1.0 and float(aux["b"]) == 3.0 and isinstance(aux["b"], jax.Array)


def test_custom_vjp_fwd_checked_against_primal_only_when_staged():
    # Recorded from JAX 0.10.2 (equinox's filter_custom_vjp relies on it): under grad
    # only fwd and bwd run, so fwd's output structure need not match the primal
    # function's; once the call is staged (grad of jit) the mismatch is a TypeError.
    @jax.custom_vjp
    def f(x):
        return x * 2.0, x

    f.defvjp(lambda x: ((x * 2.0, None), 2.0), lambda res, ct: (3.0 * ct[0],))
    assert float(jax.grad(lambda x: f(x)[0])(1.5)) == 3.0
    assert float(jax.jit(jax.grad(lambda x: f(x)[0]))(1.5)) == 3.0
    with pytest.raises(TypeError, match="fwd rule output's first element had container"):
        jax.grad(jax.jit(lambda x: f(x)[0]))(1.5)


def test_lowered_compile_passes_compiler_options_to_xla():
    # Recorded from JAX 0.10.2: the options reach XLA, which rejects an unknown name.
    lowered = jax.jit(lambda x: 2 * x).lower(jnp.float32(3))
    assert float(lowered.compile(compiler_options={"xla_gpu_autotune_level": "0"})(3.0)) == 6.0
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option: 'bad'"):
        lowered.compile(compiler_options={"bad": "value"})


def test_compiler_options_naming_build_options():
    # Recorded from JAX 0.10.2: the effort options are build options, not XLA flags; a
    # level must be XLA's number (a name such as "O1" is a TypeError).
    lowered = jax.jit(lambda x: 2 * x).lower(jnp.float32(3))
    for options in ({"exec_time_optimization_effort": 0.5}, {"memory_fitting_effort": -0.5},
                    {"optimization_level": 19}, {"memory_fitting_level": 9}):  # fmt: skip
        assert float(lowered.compile(compiler_options=options)(3.0)) == 6.0
    with pytest.raises(TypeError, match="incompatible function arguments"):
        lowered.compile(compiler_options={"memory_fitting_level": "O1"})


def _aligned_ones(n):
    raw = np.zeros(4 * n + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    out = raw[start : start + 4 * n].view(np.float32)
    out[...] = 1.0
    return out


def test_jnp_array_copies_host_memory_so_it_can_be_donated():
    # Recorded from JAX 0.10.2 on CPU: jnp.array and jnp.asarray never share a
    # (64-byte aligned) NumPy array's memory, jax.device_put may; a donated array made
    # by jnp.array gives its buffer to the output (equinox's donation tests).
    a = _aligned_ones(1024)
    assert jnp.array(a).unsafe_buffer_pointer() != a.ctypes.data
    assert jnp.asarray(a).unsafe_buffer_pointer() != a.ctypes.data
    assert jax.device_put(a).unsafe_buffer_pointer() == a.ctypes.data
    x, y = jnp.array(0.0), jnp.array(_aligned_ones(1).reshape(()))
    old = y.unsafe_buffer_pointer()
    z = jax.jit(lambda x, y: x + y, donate_argnums=1)(x, y)
    assert y.is_deleted() and not x.is_deleted()
    assert z.unsafe_buffer_pointer() == old and float(z) == 1.0


@jax.tree_util.register_pytree_node_class
class _TraceRecordingNode:
    """A pytree node that records the trace it was made under (as flax's Variable)."""

    def __init__(self, value):
        self.value, self.trace = value, jax.extend.core.get_opaque_trace_state()

    def tree_flatten(self):
        return (self.value,), None

    @classmethod
    def tree_unflatten(cls, _, children):
        return cls(*children)


def test_aux_outputs_are_rebuilt_under_the_callers_trace():
    # Recorded from JAX 0.10.2: the aux output of grad, linearize and vjp is unflattened
    # after their trace ended (flax nnx checks its Variables' traces on jit's outputs).
    seen = []

    @jax.jit
    def f(x):
        g, aux = jax.grad(lambda x: (x * x, _TraceRecordingNode(x)), has_aux=True)(x)
        aux2 = jax.linearize(lambda x: (x * x, _TraceRecordingNode(x)), x, has_aux=True)[2]
        aux3 = jax.vjp(lambda x: (x * x, _TraceRecordingNode(x)), x, has_aux=True)[2]
        here = jax.extend.core.get_opaque_trace_state()
        seen.extend(a.trace == here for a in (aux, aux2, aux3))
        return g + aux.value

    assert float(f(2.0)) == 6.0 and seen == [True, True, True]


@jax.tree_util.register_pytree_node_class
class _ForwardingVariable:
    """A pytree that converts itself through ``__jax_array__`` and forwards other
    attributes (``aval`` among them) to its value, as flax's nnx.Variable does."""

    def __init__(self, value):
        self.value = value

    def __jax_array__(self):
        return self.value

    def __getattr__(self, name):
        return getattr(self.value, name)

    def tree_flatten(self):
        return (self.value,), None

    @classmethod
    def tree_unflatten(cls, _, children):
        return cls(*children)


def test_jnp_functions_convert_a_pytree_with_jax_array():
    # Recorded from JAX 0.10.2: the variable's array is an input of the Jaxpr (not a
    # constant holding a tracer), so a later vmap of the same call works.
    w = _ForwardingVariable(jnp.ones(4))
    jaxpr = jax.make_jaxpr(lambda x, w: jnp.dot(x, w))(jnp.ones(4), w)
    assert not jaxpr.consts and len(jaxpr.jaxpr.invars) == 2
    out = jax.vmap(lambda x: jnp.dot(x, w))(jnp.ones((3, 4)))
    np.testing.assert_array_equal(out, [4.0, 4.0, 4.0])


def test_sharding_constraint_over_the_abstract_mesh_outside_jit():
    # Recorded from JAX 0.10.2 (flax lays out new variables this way): a NamedSharding
    # over the abstract mesh of set_mesh lays out an array over the concrete mesh.
    mesh = jax.make_mesh((1, 1), ("a", "b"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    spec = jax.sharding.PartitionSpec("a", "b")
    with jax.set_mesh(mesh):
        abstract = jax.sharding.NamedSharding(jax.sharding.get_abstract_mesh(), spec)
        y = jax.lax.with_sharding_constraint(jnp.ones((2, 3)), abstract)
    assert type(y.sharding.mesh) is jax.sharding.Mesh
    assert y.sharding == jax.sharding.NamedSharding(mesh, spec)


def test_traced_function_returning_a_shape_dtype_struct():
    # Recorded from JAX 0.10.2 (equinox's filter_closure_convert): a scalar
    # ShapeDtypeStruct returned by a traced function is a constant, not a literal.
    s = jax.ShapeDtypeStruct((), jnp.float32)
    assert jax.eval_shape(lambda: s) == s
    assert jax.eval_shape(lambda: (1.0, s))[1] == s
    assert str(jax.make_jaxpr(lambda: s)()) == "{ lambda a:f32[]; . let  in (a,) }"


def test_aval_to_tangent_aval():
    # Recorded from JAX 0.10.2 (equinox turns None cotangents into symbolic zeros of it).
    cases = [jnp.float32(1), jnp.int32(1), 1.0, np.float32(1), jax.random.key(0)]
    got = [str(jax.typeof(x).to_tangent_aval()) for x in cases]
    assert got == ["float32[]", "float0[]", "~float32[]", "float32[]", "float0[]"]
