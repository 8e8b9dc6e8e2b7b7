"""lamina.stages: the stage classes of jit (`jax.stages`)."""

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import stages


def test_jit_stages_are_the_stage_classes():
    f = jax.jit(lambda x, y: x * y, donate_argnums=1)
    assert isinstance(f, stages.Wrapped)
    assert not isinstance(lambda x: x, stages.Wrapped)
    traced = f.trace(jnp.ones(2), jnp.ones(2))
    lowered = traced.lower()
    compiled = lowered.compile()
    assert isinstance(traced, stages.Traced)
    assert isinstance(lowered, stages.Lowered)
    assert isinstance(compiled, stages.Compiled)
    np.testing.assert_array_equal(compiled(jnp.full(2, 3.0), jnp.full(2, 2.0)), [6.0, 6.0])


def test_args_info_describes_arguments():
    f = jax.jit(lambda x, y, *, z: x * y + z, donate_argnums=1)
    lowered = f.lower(jnp.ones(2), jnp.ones(2, jnp.float32), z=1.0)
    args, kwargs = lowered.args_info
    # Recorded from JAX 0.10.2 (for the positional arguments).
    assert repr(args[0]) == "ArgInfo(_aval=ShapedArray(float32[2]), donated=False)"
    assert [a.donated for a in args] == [False, True]
    assert args[1].shape == (2,) and args[1].dtype == np.float32
    assert (
        repr(kwargs["z"]) == "ArgInfo(_aval=ShapedArray(float32[], weak_type=True), donated=False)"
    )
    compiled = lowered.compile()
    assert (
        compiled.args_info
        == lowered.args_info
        == f.trace(jnp.ones(2), jnp.ones(2), z=1.0).args_info
    )
    assert lowered.donate_argnums == compiled.donate_argnums == (1,)
    assert stages.ArgInfo(args[0]._aval, False) == args[0]


def test_stage_properties():
    f = jax.jit(lambda x: (x.sum(), x * 2))
    traced = f.trace(jnp.ones((2, 3)))
    assert traced.fun_name == "<lambda>"
    assert [str(a) for a in traced.out_avals] == ["float32[]", "float32[2,3]"]
    lowered = traced.lower()
    assert str(lowered.in_avals[0][0]) == "float32[2,3]"
    assert lowered.out_info[1].shape == (2, 3)
    assert "func.func public @main" in lowered.as_text()
    assert stages.CompilerOptions == dict[str, str | bool]


def test_compiled_checks_its_argument_types():
    compiled = jax.jit(lambda x: x + 1).lower(jnp.ones(3)).compile()
    with pytest.raises(TypeError):
        compiled(jnp.ones(4))


def test_compiled_calls_after_the_first_run_in_cpp():
    x = jnp.arange(3.0)
    compiled = jax.jit(lambda v, w: {"sum": v + w, "v": v}).lower(x, w=x).compile()
    python_calls = []
    call = compiled._call
    compiled._call = lambda *a, **k: (python_calls.append(1), call(*a, **k))[1]
    for _ in range(3):
        out = compiled(x, w=x)
        np.testing.assert_array_equal(out["sum"], [0.0, 2.0, 4.0])
        np.testing.assert_array_equal(out["v"], x)
    assert python_calls == [1]  # then jaxlib's C++ path, without Python
    np.testing.assert_array_equal(compiled(np.ones(3, np.float32), w=x)["sum"], [1, 2, 3])
    assert python_calls == [1, 1]  # a NumPy argument: another signature, seen once
    with pytest.raises(TypeError, match="Argument types differ"):
        compiled(jnp.ones(4), w=jnp.ones(4))
