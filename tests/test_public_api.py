"""The meta-package's public face: `import lamina as jax` for what has landed."""

import numpy as np
import pytest

import lamina as jax


def test_tree_modules_behave_like_jax():
    tree = {"b": (1, 2.0), "a": [np.ones(2)]}
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    assert [type(x) for x in leaves] == [np.ndarray, int, float]
    assert str(treedef) == "PyTreeDef({'a': [*], 'b': (*, *)})"
    doubled = jax.tree.map(lambda x: x * 2, tree)
    assert doubled["b"] == (2, 4.0)
    assert jax.tree.structure(doubled) == treedef
    with pytest.raises(ValueError, match="different pytree metadata"):
        jax.tree.map(lambda x, y: x, {"a": 1}, {"b": 1})


def test_partial_is_a_pytree():
    add = jax.tree_util.Partial(lambda x, y: x + y, 3)
    assert add(4) == 7
    assert jax.tree.leaves(add) == [3]
    assert jax.Partial is jax.tree_util.Partial


def test_dtypes_module():
    assert jax.dtypes.result_type(1, np.int8) == np.int8
    assert jax.dtypes.promote_types(jax.dtypes.bfloat16, np.float16) == np.float32
    assert jax.dtypes.issubdtype(jax.dtypes.bfloat16, np.floating)
    assert float(jax.dtypes.finfo(jax.dtypes.bfloat16).eps) == 2.0**-7


@pytest.mark.parametrize("name", ["dtypes", "tree", "tree_util"])
def test_public_modules_star_import_their_names(name):
    namespace: dict = {}
    exec(f"from lamina.{name} import *", namespace)
    names = set(namespace) - {"__builtins__"}
    assert names == set(getattr(jax, name).__all__)
    assert {"result_type", "map", "tree_flatten"} & names


def test_runtime_names_from_the_top_level():
    x = jax.device_put(np.arange(3, dtype=np.float32))
    assert isinstance(x, jax.Array)
    assert repr(x) == "Array([0., 1., 2.], dtype=float32)"
    assert jax.devices()[0].platform == "cpu"
    assert jax.device_count() >= 1 and jax.process_count() == 1
    shape = jax.eval_shape(lambda a: a, jax.ShapeDtypeStruct((2,), np.int32))
    assert shape == jax.ShapeDtypeStruct((2,), np.int32)
    assert str(jax.make_jaxpr(lambda a: a)(x)) == "{ lambda ; a:f32[3]. let  in (a,) }"
    assert issubclass(jax.errors.TracerBoolConversionError, jax.errors.ConcretizationTypeError)


def test_softmax_custom_jvp_switch_from_the_top_level():
    x = np.array([0.5, -1.0, 2.0], np.float32)
    assert not jax.softmax_custom_jvp.value
    with jax.softmax_custom_jvp():
        assert jax.config.jax_softmax_custom_jvp
        jaxpr = str(jax.make_jaxpr(jax.grad(lambda a: jax.nn.softmax(a)[0]))(x))
    assert not jax.config.jax_softmax_custom_jvp
    assert "custom_jvp_call" in jaxpr or "_softmax" in jaxpr
    assert jaxpr != str(jax.make_jaxpr(jax.grad(lambda a: jax.nn.softmax(a)[0]))(x))
