"""The ``jax._src`` names libraries use (``lamina._src``), ``jax.experimental.layout`` and
``jax.experimental.hijax``, and a primitive written the JAX way through the semi-public
modules under the import alias: each name is lamina's own object, so what a library
registers or patches through it changes what lamina does."""

import importlib.util
import subprocess
import sys
import textwrap
from collections import OrderedDict, defaultdict, namedtuple

import numpy as np
import pytest

import lamina
import lamina.numpy as jnp
from lamina import _src
from lamina._src import (
    ad_util,
    checkify,
    compiler,
    core,
    dispatch,
    dtypes,
    traceback_util,
    tree_util,
    xla_bridge,
)
from lamina._src.interpreters import ad as src_ad
from lamina._src.state import types as state_types
from lamina.experimental.layout import Format, Layout


def test_each_name_is_laminas_object():
    assert ad_util.stop_gradient_p is lamina.lax.stop_gradient_p
    assert checkify.checkify is lamina.experimental.checkify.checkify
    assert checkify.Error is lamina.experimental.checkify.Error
    assert checkify.user_checks is lamina.experimental.checkify.user_checks
    assert all(issubclass(e, checkify.JaxException) for e in checkify.user_checks)
    assert core.ShapedArray is lamina.core.ShapedArray and core.Tracer is lamina.core.Tracer
    assert dispatch.wait_for_tokens is lamina.effects_barrier
    assert dtypes.TypePromotionError is lamina.dtypes.TypePromotionError
    assert dtypes.extended is lamina.dtypes.extended
    assert dtypes.ExtendedDType is lamina.dtypes.ExtendedDType
    assert state_types.AbstractRef is lamina.ref.AbstractRef
    assert traceback_util.api_boundary is lamina.ir.api_boundary
    assert traceback_util._exclude_paths is lamina.ir.excluded_paths
    assert tree_util.prefix_errors is lamina.ir.prefix_errors
    assert issubclass(src_ad.CustomVJPException, Exception)
    assert src_ad.primitive_jvps is lamina.interpreters.ad.primitive_jvps


def test_src_lists_its_modules_and_nothing_else():
    assert set(_src._MODULES) <= set(dir(_src))
    with pytest.raises(AttributeError):
        _src.api_util  # noqa: B018  (not a name the libraries use)


def test_physical_aval_of_a_plain_array_is_itself():
    aval = core.ShapedArray((2, 3), np.float32)
    assert core.physical_aval(aval) == aval


def test_type_promotion_error_is_what_strict_promotion_raises():
    with lamina.numpy_dtype_promotion("strict"), pytest.raises(dtypes.TypePromotionError):
        jnp.ones(2, jnp.float32) + jnp.ones(2, jnp.int32)


def test_registry_holds_the_node_types():
    # Recorded from JAX 0.10.2: ``t in jax._src.tree_util._registry``.
    for t in (tuple, list, dict, type(None), lamina.tree_util.Partial, OrderedDict, defaultdict):
        assert t in tree_util._registry, t
    assert int not in tree_util._registry
    assert namedtuple("Point", "x y") not in tree_util._registry

    class Box:
        pass

    assert Box not in tree_util._registry
    lamina.tree_util.register_pytree_node(Box, lambda b: ((), None), lambda _, c: Box())
    assert Box in tree_util._registry


def test_backends_are_the_started_ones():
    lamina.devices()
    backends = xla_bridge._backends
    assert backends["cpu"] is lamina.interpreters.backend.get_backend("cpu")


def test_a_wrapped_compile_function_sees_every_compilation():
    # What chex's restrict_backends does: replace the function, then put it back.
    inner = compiler.backend_compile_and_load
    platforms = []

    def wrapper(backend, *args, **kwargs):
        platforms.append(backend.platform)
        return inner(backend, *args, **kwargs)

    compiler.backend_compile_and_load = wrapper
    try:
        assert lamina.interpreters.backend.backend_compile_and_load is wrapper
        out = lamina.jit(lambda x: x * 3.0 + 0.25)(np.float32(2.0))
    finally:
        compiler.backend_compile_and_load = inner
    assert float(out) == 6.25
    assert platforms == ["cpu"]
    assert lamina.interpreters.backend.backend_compile_and_load is inner


def test_registered_exclusions_are_dropped_from_filtered_tracebacks(tmp_path):
    # A library's wrapper of the user's function, traced under jit (its file registered,
    # as equinox and flax do), is removed from filtered tracebacks like lamina's frames.
    helper = tmp_path / "libwrapper.py"
    helper.write_text(
        "def wrap(f):\n    def wrapped(x):\n        return f(x)\n    return wrapped\n"
    )
    spec = importlib.util.spec_from_file_location("libwrapper", helper)
    libwrapper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(libwrapper)

    def bad(x):
        return x + "text"

    def files(exc):
        tb, out = exc.__traceback__, []
        while tb is not None:
            out.append(tb.tb_frame.f_code.co_filename)
            tb = tb.tb_next
        return out

    lamina.config.update("jax_traceback_filtering", "quiet_remove_frames")
    try:
        with pytest.raises(TypeError) as kept:
            lamina.jit(libwrapper.wrap(bad))(1.0)
        traceback_util.register_exclusion(str(tmp_path))
        try:
            with pytest.raises(TypeError) as dropped:
                lamina.jit(libwrapper.wrap(bad))(1.0)
        finally:
            traceback_util._exclude_paths.remove(str(tmp_path))
    finally:
        lamina.config.update("jax_traceback_filtering", "auto")
    assert str(helper) in files(kept.value)
    assert str(helper) not in files(dropped.value)
    assert files(dropped.value).count(__file__) == 2  # the call and the raising line


def test_include_frame():
    assert traceback_util.include_frame(sys._getframe())
    traceback_util.register_exclusion(__file__)
    try:
        assert not traceback_util.include_frame(sys._getframe())
    finally:
        traceback_util._exclude_paths.remove(__file__)


# ------------------------------------------------------------------ jax.experimental


def test_layout_and_format_values():
    # Printed forms and errors recorded from JAX 0.10.2.
    layout = Layout((1, 0))
    assert repr(layout) == (
        "Layout(major_to_minor=(1, 0), tiling=None, sub_byte_element_size_in_bits=0)"
    )
    assert repr(Format()) == "Format(layout=None, sharding=None)"
    assert repr(Format(Layout.AUTO)) == "Format(layout=AUTO, sharding=None)"
    sharding = lamina.sharding.SingleDeviceSharding(lamina.devices()[0])
    assert Format(layout, sharding) == Format(Layout((1, 0)), sharding)
    assert hash(Format()) == hash(Format())
    assert layout.update(tiling=((8, 128),)).tiling == ((8, 128),)
    with pytest.raises(ValueError, match="Sharding has to be concrete"):
        Format(layout)
    with pytest.raises(TypeError, match="Got x of type <class 'str'>"):
        Format("x")
    with pytest.raises(TypeError, match="Got 3 of type <class 'int'>"):
        Format(None, 3)
    with pytest.raises(ValueError, match="rank of the value"):
        layout.check_compatible_aval((2, 3, 4))


# ------------------------------------------------------------------ through the alias


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True
    )


def test_hijax_primitive_registers_its_rules():
    # In a fresh process: the primitive would otherwise stay in the registry that
    # tests/test_rule_inventory.py and test_primitive_table.py check.
    result = _run(
        """
        import lamina
        from lamina.experimental import hijax

        class Twice(hijax.HiPrimitive):
            def jvp(self, primals, tangents):
                return primals[0] * 2, tangents[0] * 2

        p = Twice("twice_hi")
        assert lamina.interpreters.ad.primitive_jvps[p] == p.jvp
        assert p.is_high()
        method = hijax.aval_method(len)
        assert method.fun is len
        hijax.register_hitype(Twice, lambda v: None)
        assert Twice in hijax.hitypes
        assert hijax.AvalQDD(1, 2).qdd == 2
        assert issubclass(hijax.MutableHiType, lamina.core.AbstractValue)
        print("ok")
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"


def test_user_primitive_through_the_semi_public_modules():
    # A primitive defined as a JAX user writes one: its rules registered through
    # jax.interpreters' tables and its lowering written with mlir.ir / StableHLO ops.
    result = _run(
        """
        import lamina.compat
        lamina.compat.install()
        import numpy as np
        import jax, jax.numpy as jnp
        from jax.extend.core import Primitive
        from jax.extend.mlir.dialects import stablehlo as hlo
        from jax.interpreters import ad, batching, mlir
        import lamina
        assert issubclass(Primitive, lamina.ir.Primitive)

        scale_p = Primitive("scale_by")  # y = k * x, linear in x

        def scale(x, k):
            return scale_p.bind(x, k=k)

        scale_p.def_impl(lambda x, k: np.asarray(x) * k)
        scale_p.def_abstract_eval(lambda x, k: x)

        def lowering(ctx, x, k):
            (aval,) = ctx.avals_out
            assert isinstance(x.type, mlir.ir.RankedTensorType)
            factor = mlir.ir_constant(np.full(aval.shape, k, aval.dtype))
            return [hlo.multiply(x, factor)]

        mlir.register_lowering(scale_p, lowering)
        ad.primitive_jvps[scale_p] = lambda p, t, k: (scale(p[0], k), scale(t[0], k))
        ad.primitive_transposes[scale_p] = lambda ct, x, k: [scale(ct, k)]
        batching.primitive_batchers[scale_p] = lambda args, dims, k: (
            scale(args[0], k), dims[0])

        x = jnp.arange(3.0)
        print(jax.jit(scale, static_argnums=1)(x, 3.0).tolist())
        print(float(jax.grad(lambda v: jnp.sum(scale(v, 2.5)))(1.0)))
        print(jax.vmap(lambda v: scale(v, -1.0))(jnp.ones((2, 2))).tolist())
        print(jax.jit(jax.vmap(jax.grad(lambda v: scale(v, 4.0))))(x).tolist())
        print(jax.linear_transpose(lambda v: scale(v, 5.0), 1.0)(1.0)[0].tolist())
        text = jax.jit(lambda v: scale(v, 2.0)).lower(x).as_text()
        assert "stablehlo.multiply" in text, text
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:5] == [
        "[0.0, 3.0, 6.0]",
        "2.5",
        "[[-1.0, -1.0], [-1.0, -1.0]]",
        "[4.0, 4.0, 4.0]",
        "5.0",
    ]


def test_src_modules_through_the_alias():
    result = _run(
        """
        import lamina, lamina.compat
        lamina.compat.install()
        import jax
        import jax._src.traceback_util as traceback_util
        from jax._src import compiler, core, dtypes
        from jax._src.tree_util import _registry
        from jax._src.state.types import AbstractRef
        from jax.experimental.layout import Format
        from jax.experimental import hijax
        assert traceback_util is lamina._src.traceback_util
        assert jax._src.xla_bridge is lamina._src.xla_bridge
        assert jax._src.dispatch.wait_for_tokens is lamina.effects_barrier
        assert core.ShapedArray is jax.core.ShapedArray
        assert dict in _registry and AbstractRef is lamina.ref.AbstractRef
        assert Format is lamina.experimental.layout.Format
        assert hasattr(compiler, "backend_compile_and_load")
        try:
            import jax._src.api
        except ModuleNotFoundError as e:
            print(e.name)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "jax._src.api"
