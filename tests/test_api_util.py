"""``lamina.api_util`` (``jax.api_util``): values recorded from JAX 0.10.2."""

import numpy as np
import pytest

import lamina as jax
import lamina.extend.linear_util as lu
from lamina import api_util, tree_util


def _f(x, y=2, *, z=3):
    return {"s": x + y, "p": (x * z,)}


def test_toplevel_module():
    assert jax.api_util is api_util
    assert "api_util" in dir(jax) and "interpreters" in dir(jax)


def test_debug_info():
    di = api_util.debug_info("jit", _f, (1.0,), {"z": 4.0})
    assert di.traced_for == "jit"
    assert di.func_name == "_f" and di.func_src_info.startswith("_f at ")
    assert di.arg_names == ("x", "z")
    di = api_util.debug_info("jit", _f, (1.0, {"a": 2.0}), {}, static_argnums=(0,))
    assert di.arg_names == ("y['a']",)


def test_flatten_fun():
    args, in_tree = tree_util.tree_flatten(((1.0,), {"z": 4.0}))
    di = api_util.debug_info("jit", _f, (1.0,), {"z": 4.0})
    wf, out_tree = api_util.flatten_fun(lu.wrap_init(_f, debug_info=di), in_tree)
    assert wf.call_wrapped(*args) == [4.0, 3.0]
    assert str(out_tree()) == "PyTreeDef({'p': (*,), 's': *})"


def test_flatten_fun_nokwargs():
    def g(a, b):
        return (a, [b, a])

    args, in_tree = tree_util.tree_flatten((1, 2))
    di = api_util.debug_info("x", g, (1, 2), {})
    wf, out_tree = api_util.flatten_fun_nokwargs(lu.wrap_init(g, debug_info=di), in_tree)
    assert wf.call_wrapped(*args) == [1, 2, 1]
    assert str(out_tree()) == "PyTreeDef((*, [*, *]))"


def test_argnums_partial():
    def h(a, b, c):
        return a * 10 + b + c

    di = api_util.debug_info("x", h, (1, 2, 3), {})
    wf, dyn = api_util.argnums_partial(lu.wrap_init(h, debug_info=di), (0, 2), (1, 2, 3))
    assert dyn == (1, 3)
    assert wf.call_wrapped(*dyn) == 15 and wf.call_wrapped(5, 6) == 58
    wf2, _ = api_util.argnums_partial(lu.wrap_init(h, debug_info=di), (0, 2), (1, 2, 3))
    assert wf == wf2 and hash(wf) == hash(wf2)  # equal static args: one cache entry
    wf3, _ = api_util.argnums_partial(lu.wrap_init(h, debug_info=di), (0, 2), (1, 2.0, 3))
    assert wf != wf3


def test_rebase_donate_argnums():
    assert api_util.rebase_donate_argnums((3, 4), (0, 1)) == (1, 2)
    assert api_util.rebase_donate_argnums((0,), (1,)) == (0,)
    assert api_util.rebase_donate_argnums((2, 5), (1, 3)) == (1, 3)


def test_donation_vector():
    _, t = tree_util.tree_flatten(((1.0, (2.0, 3.0)), {"k": 4.0}))
    assert api_util.donation_vector((1,), (), t) == (False, True, True, False)
    assert api_util.donation_vector((0,), ("k",), t) == (True, False, False, True)
    assert api_util.donation_vector((), (), t) == (False,) * 4
    _, t = tree_util.tree_flatten((1.0, (2.0, 3.0)))
    assert api_util.donation_vector((1,), (), t, kws=False) == (False, True, True)


def test_flatten_axes():
    _, t = tree_util.tree_flatten((1.0, (2.0, 3.0)))
    assert api_util.flatten_axes("vmap in_axes", t, (0, 1)) == [0, 1, 1]
    assert api_util.flatten_axes("vmap in_axes", t, (None, (0, 1))) == [None, 0, 1]
    assert api_util.flatten_axes("x", t, 0) == [0, 0, 0]
    with pytest.raises(ValueError) as e:
        api_util.flatten_axes("vmap in_axes", t, (0, 1, 2))
    # recorded from JAX 0.10.2
    assert str(e.value) == (
        "vmap in_axes specification must be a tree prefix of the corresponding value; \n"
        "  Mismatch details (1 found):\n"
        "  pytree structure error: different lengths of tuple at key path\n"
        "    vmap in_axes\n"
        "At that key path, the prefix pytree vmap in_axes has a subtree of type tuple of "
        "length 3, but the full pytree has a subtree of the same type but of length 2."
    )


def test_shaped_abstractify_and_safe_map():
    assert str(api_util.shaped_abstractify(np.ones((2, 3), np.float32))) == "float32[2,3]"
    assert str(api_util.shaped_abstractify(1.0)) == "~float32[]"
    assert str(api_util.shaped_abstractify(3)) == "~int32[]"
    assert api_util.safe_map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    with pytest.raises(ValueError, match=r"safe_map\(\) argument 2 is shorter than argument 1"):
        api_util.safe_map(lambda a, b: a + b, [1, 2], [3])


def test_debug_info_names_follow_the_signature():
    def g(*args, **kw):
        pass

    # recorded from JAX 0.10.2
    di = api_util.debug_info("jit", g, (1.0, (2.0, 3.0)), {"b": 1, "a": 2})
    assert di.arg_names == ("args[0]", "args[1][0]", "args[1][1]", "kw['a']", "kw['b']")
    di = api_util.debug_info("jit", _f, (1.0, {"a": 2.0}), {"z": [1, 2]}, static_argnames=("x",))
    assert di.arg_names == ("x", "y['a']", "z[0]", "z[1]")
