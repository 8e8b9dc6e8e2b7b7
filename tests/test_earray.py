"""``lamina.experimental.EArray`` with user extended dtypes written the JAX way.

Expected values recorded from JAX 0.10.2 running the same programs (with
``pxla.global_result_handlers`` in the result handler, which lamina does not need)."""

import dataclasses

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import core, dtypes
from lamina.experimental import EArray, primal_tangent_dtype


class scale(dtypes.extended):
    pass


class ScaleRules:
    allow_conversion = True

    @staticmethod
    def physical_element_aval(dt):
        return core.ShapedArray((), dt.float_dtype)

    @staticmethod
    def global_sharded_result_handler(aval, out_sharding, committed):
        return lambda data: EArray(aval, data)


@dataclasses.dataclass(frozen=True)
class ScaleTy(dtypes.ExtendedDType):
    float_dtype: object
    name: str = "scale"
    _rules: type = ScaleRules
    type: type = scale


DT = ScaleTy(np.dtype("float32"))


def _earray(shape=(3,)):
    data = jnp.arange(np.prod(shape), dtype="float32").reshape(shape)
    return EArray(core.ShapedArray(shape, DT), data)


def test_properties_and_repr():
    e = _earray()
    assert repr(e) == "EArray([0., 1., 2.], dtype=float32)"
    assert str(e) == repr(e)
    assert str(e.aval) == "scale[3]"
    assert e.dtype == DT and e.shape == (3,) and e.ndim == 1 and e.size == 3
    assert len(e) == 3
    assert isinstance(e, jax.Array)
    assert e.committed is False
    assert e.device == jax.devices()[0] and e.devices() == {jax.devices()[0]}
    assert type(e.sharding).__name__ == "SingleDeviceSharding"
    assert e.sharding.device_set == {jax.devices()[0]}
    assert e.is_deleted() is False
    assert e.block_until_ready() is e
    c = e.copy()
    assert type(c) is EArray and repr(c) == repr(e)
    with pytest.raises(AttributeError, match="'ScaleTy' object has no attribute 'itemsize'"):
        _ = e.itemsize
    with pytest.raises(TypeError, match="unhashable type: 'EArray'"):
        hash(e)
    # recorded from JAX 0.10.2: the dtype prints as its dataclass repr
    assert str(DT).startswith("ScaleTy(float_dtype=dtype('float32'), name='scale'")


def test_scalar():
    s = EArray(core.ShapedArray((), DT), jnp.float32(1.5))
    assert repr(s) == "EArray(1.5, dtype=float32)"
    with pytest.raises(TypeError, match=r"len\(\) of unsized object"):
        len(s)
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(s)
    with pytest.raises(NotImplementedError):
        list(_earray())


def test_tree_util_leaf():
    # recorded from JAX 0.10.2: public tree_util treats an EArray as one leaf
    e = _earray()
    leaves, tree = jax.tree_util.tree_flatten(e)
    assert leaves == [e] and str(tree) == "PyTreeDef(*)"
    assert jax.tree_util.tree_unflatten(tree, leaves) is e
    assert jax.tree_util.tree_map(lambda v: v, e) is e


def test_jit_identity():
    e = _earray()
    f = jax.jit(lambda x: x)
    for _ in range(2):  # first call compiles, the second takes the cached path
        y = f(e)
        assert type(y) is EArray and y.dtype == DT and y.shape == (3,)
        assert repr(y) == "EArray([0., 1., 2.], dtype=float32)"
    jaxpr = jax.make_jaxpr(lambda x: x)(e)
    assert str(jaxpr.in_avals[0]) == "scale[3]"
    assert str(jaxpr).startswith("{ lambda ; a:ScaleTy(float_dtype=dtype('float32')")


def test_jit_lax_structural_ops():
    e = _earray()
    r = jax.jit(lambda x: jax.lax.reshape(x, (3, 1)))(e)
    assert type(r) is EArray and r.shape == (3, 1)
    assert repr(r) == "EArray([[0.],\n       [1.],\n       [2.]], dtype=float32)"
    b = jax.jit(lambda x: jax.lax.broadcast_in_dim(x, (2, 3), (1,)))(e)
    assert b.shape == (2, 3) and b.dtype == DT
    assert repr(b) == "EArray([[0., 1., 2.],\n       [0., 1., 2.]], dtype=float32)"


def test_result_handler_error_propagates():
    class NoEArrayRules(ScaleRules):
        @staticmethod
        def global_sharded_result_handler(aval, out_sharding, committed):
            raise NotImplementedError("convert back under the jit")

    dt = ScaleTy(np.dtype("float32"), _rules=NoEArrayRules)
    e = EArray(core.ShapedArray((3,), dt), jnp.zeros(3, "float32"))
    with pytest.raises(NotImplementedError, match="convert back under the jit"):
        jax.jit(lambda x: x)(e)


def test_primal_tangent_dtype():
    pt = primal_tangent_dtype(jnp.float32, jnp.float32)
    e = EArray(core.ShapedArray((2,), pt), jnp.array([1.0, 2.0], jnp.float32))
    assert repr(e) == "EArray([1., 2.], dtype=float32)"
    assert str(e.dtype) == "PrimalTangentDType{f32/f32}"
    jaxpr = jax.make_jaxpr(lambda x: x)(e)
    assert str(jaxpr.in_avals[0]) == "PrimalTangentDType{f32/f32}[2]"
