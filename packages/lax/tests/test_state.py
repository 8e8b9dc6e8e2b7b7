"""lamina.lax's mutable array reference primitives (get, swap, addupdate, new_ref,
freeze, free_ref, empty_ref): indexing against NumPy, discharge, effects, batching."""

import numpy as np
import pytest

from lamina import lax
from lamina.interpreters import discharge_state, jit, make_jaxpr, vmap
from lamina.ir import AbstractRef, ReadEffect, ShapedArray, WriteEffect

X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)

INDICES = [
    (),
    0,
    (1, 2),
    (slice(None), 1),
    (slice(1, 3), slice(None, None, 2)),
    (Ellipsis, 3),
    (0, slice(None), np.array([0, 3, 1])),
    (np.array([1, 0]), slice(None), np.array([2, 3])),
    (np.array([[1], [0]]), 2),
]


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_read_write_accumulate_against_numpy(idx):
    ref = lax.new_ref(X)
    np.testing.assert_array_equal(lax.ref_get(ref, idx), X[idx])
    update = np.full(X[idx].shape, 100.0, np.float32)
    expected = X.copy()
    expected[idx] = update
    old = lax.ref_swap(ref, idx, update)
    np.testing.assert_array_equal(old, X[idx])
    np.testing.assert_array_equal(lax.freeze(ref), expected)
    lax.ref_addupdate(ref, idx, update)
    expected[idx] += update
    np.testing.assert_array_equal(lax.ref_get(ref, ...), expected)


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_jit_matches_eager(idx):
    def f(x, u):
        r = lax.new_ref(x)
        old = lax.ref_swap(r, idx, u)
        lax.ref_addupdate(r, idx, u)
        return old, lax.freeze(r)

    u = np.full(X[idx].shape, 3.0, np.float32)
    for a, b in zip(jit(f)(X, u), f(X, u), strict=True):
        np.testing.assert_array_equal(a, b)


def test_dynamic_indices_against_numpy():
    def f(x, i, j):
        r = lax.new_ref(x)
        r[i, lax.ds(j, 2)] = r[i, lax.ds(j, 2)] * 10.0
        return lax.freeze(r)

    expected = X.copy()
    expected[1, 1:3] *= 10
    np.testing.assert_array_equal(jit(f)(X, 1, 1), expected)


def test_effects_name_the_reference():
    def f(r, x):
        r[...] = r[...] + x
        s = lax.new_ref(x)
        return s[...]

    closed = make_jaxpr(f)(lax.new_ref(np.zeros(3, np.float32)), np.ones(3, np.float32))
    ref_var = closed.jaxpr.invars[0]
    get_eqn, _, swap_eqn, *_ = closed.jaxpr.eqns
    assert get_eqn.effects == {ReadEffect(ref_var)}
    assert swap_eqn.effects == {WriteEffect(ref_var)}
    # The internal reference's reads are no effect of the whole Jaxpr.
    refs = {e for e in closed.jaxpr.effects if isinstance(e, (ReadEffect, WriteEffect))}
    assert refs == {ReadEffect(ref_var), WriteEffect(ref_var)}
    text = closed.pretty_print(print_effects=True)
    assert "Read<a>" in text and "Write<a>" in text


def test_discharge_passes_arrays():
    def f(r, x):
        r[1] += x
        return r[0]

    closed = make_jaxpr(f)(lax.new_ref(np.zeros((2, 3), np.float32)), np.ones(3, np.float32))
    discharged = discharge_state(closed)
    assert discharged.written == (True, False)
    assert [str(a) for a in discharged.jaxpr.in_avals] == ["float32[2,3]", "float32[3]"]
    assert [str(a) for a in discharged.jaxpr.out_avals] == ["float32[3]", "float32[2,3]"]
    assert not any(isinstance(a, AbstractRef) for a in discharged.jaxpr.in_avals)
    names = {e.primitive.name for e in discharged.jaxpr.eqns}
    assert not names & {"get", "swap", "addupdate", "new_ref", "freeze"}


def test_abstract_eval_errors():
    ref = AbstractRef(ShapedArray((2, 3), np.float32))
    with pytest.raises(ValueError, match="`get` must be called on `Ref` types"):
        lax.get_p.abstract_eval(ShapedArray((3,), np.float32), indexer=None)
    with pytest.raises(ValueError, match="Invalid shape for `addupdate`"):
        lax.addupdate_p.abstract_eval(ref, ShapedArray((3,), np.float32), indexer=None)


def test_vmap_batched_reference_argument_and_index():
    xs = np.arange(6.0, dtype=np.float32).reshape(2, 3)

    def f(x, i):
        r = lax.new_ref(x)
        r[i] = -1.0
        return lax.freeze(r), r[i]

    out, taken = vmap(f)(xs, np.array([0, 2]))
    expected = xs.copy()
    expected[0, 0] = expected[1, 2] = -1
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(taken, [-1.0, -1.0])
