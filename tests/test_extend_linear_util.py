"""lamina.extend.linear_util: wrapped functions with stacked transformations."""

import pytest

from lamina.extend import linear_util as lu


def test_transformations_stack_and_aux_is_stored():
    def scale(inner, factor, x):
        return inner(x * factor)

    def count(inner, store, x):
        out = inner(x)
        store.store(("seen", x))
        return out

    f = lu.wrap_init(lambda x, offset: x + offset, {"offset": 1})
    g = lu.transformation2(scale, f, 10)
    h, aux = lu.transformation_with_aux2(count, g)
    assert h.call_wrapped(2) == 21
    assert aux() == ("seen", 2)
    with pytest.raises(lu.StoreException):
        h.call_wrapped(3)  # the store takes one value


def test_generator_transformations():
    @lu.transformation
    def double_input(x):
        out = yield (x * 2,), {}
        yield out + 1

    @lu.transformation_with_aux
    def with_aux(x):
        out = yield (x,), {}
        yield out, "aux"

    f, aux = with_aux(double_input(lu.wrap_init(lambda x: x * 3)))
    assert f.call_wrapped(5) == 31 and aux() == "aux"


def test_equality_and_cache():
    def base(x):
        return x + 1

    def step(inner, x):
        return inner(x)

    a = lu.transformation2(step, lu.wrap_init(base))
    b = lu.transformation2(step, lu.wrap_init(base))
    assert a == b and hash(a) == hash(b)
    assert a != lu.wrap_init(base)
    calls = []

    @lu.cache
    def run(fun, x):
        calls.append(x)
        return fun.call_wrapped(x)

    assert run(a, 1) == run(b, 1) == 2
    assert calls == [1]
    assert run(a, 2) == 3 and calls == [1, 2]


def test_merge_linear_aux():
    full, empty = lu.Store(), lu.Store()
    full.store(7)
    assert lu.merge_linear_aux(lambda: full.val, lambda: empty.val) == (True, 7)
    assert lu.merge_linear_aux(lambda: empty.val, lambda: full.val) == (False, 7)
    with pytest.raises(lu.StoreException, match="neither store occupied"):
        lu.merge_linear_aux(lambda: empty.val, lambda: empty.val)
    with pytest.raises(lu.StoreException, match="both stores occupied"):
        lu.merge_linear_aux(lambda: full.val, lambda: full.val)


def test_debug_info():
    info = lu.DebugInfo("jit", "f at /tmp/x.py:3", ("x",), None)
    assert (info.func_name, info.func_filename, info.func_lineno) == ("f", "/tmp/x.py", 3)
    assert info.replace_func_name("g").func_src_info == "g at /tmp/x.py:3"
    assert lu.wrap_init(len).debug_info.func_src_info == "<missing_debug_info>"
