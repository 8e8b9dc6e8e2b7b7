"""The methods and properties of ``jax.Array`` on lamina arrays (eager) and tracers
(under jit), against NumPy's methods of the same name; the Python protocols (``round``,
``in``, ``copy``, ``hex``, ``@``) and the attributes JAX refuses."""

import copy
import importlib

import numpy as np
import pytest

import lamina.numpy as jnp
from lamina import lax
from lamina.interpreters import ConcretizationTypeError, TracerArrayConversionError, device_put, jit
from lamina.ir import dtypes

F = np.array([[3.5, -1.0, 2.25, 8.0], [0.5, 7.0, -4.0, 1.0], [6.0, 2.0, 9.5, -3.0]], np.float32)
I32 = np.array([[3, 0, 2, 8], [5, 7, 0, 1], [6, 2, 9, 0]], np.int32)
B = I32 > 2
C = (F[:2] + 1j * F[1:]).astype(np.complex64)
F3 = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
SORTED = np.array([1.0, 2.0, 2.0, 5.0, 9.0], np.float32)

# (method, operand, args, kwargs)
CASES = [
    ("all", B, (), {}), ("all", B, (1,), {"keepdims": True}), ("any", B, (0,), {}),
    ("argmax", F, (), {}), ("argmax", F, (1,), {"keepdims": True}), ("argmin", F, (0,), {}),
    ("argsort", F, (), {}), ("argsort", I32, (0,), {"stable": True}),
    ("choose", np.array([0, 1, 1, 0], np.int32), ([F[0], F[1]],), {"mode": "clip"}),
    ("clip", F, (0.0, 4.0), {}), ("clip", I32, (), {"max": 3}),
    ("compress", F, (np.array([True, False, True]),), {"axis": 0}),
    ("conj", C, (), {}), ("conjugate", F, (), {}),
    ("cumprod", I32, (1,), {}), ("cumsum", F, (), {}), ("cumsum", I32, (0,), {}),
    ("diagonal", F, (1,), {}), ("diagonal", F3, (0, 1, 2), {}), ("dot", F, (F.T,), {}),
    ("flatten", F, (), {}), ("flatten", F, ("F",), {}),
    ("max", F, (0,), {}), ("max", F, (), {"initial": 100.0}), ("mean", I32, (1,), {}),
    ("mean", F, (), {"keepdims": True}), ("min", I32, (), {}), ("min", F, (1,), {}),
    ("nonzero", I32, (), {}),
    ("prod", I32[:, :2], (0,), {}), ("ptp", F, (1,), {}), ("ravel", F3, (), {}),
    ("repeat", F, (2,), {"axis": 1}), ("repeat", I32, (np.array([1, 0, 2]),), {"axis": 0}),
    ("reshape", F, (4, 3), {}), ("reshape", F, ((2, -1),), {}), ("reshape", F, (-1,), {}),
    ("reshape", F, ([6, 2],), {}), ("reshape", F, (4, 3), {"order": "F"}),
    ("round", F / 3, (2,), {}), ("round", F, (), {}),
    ("searchsorted", SORTED, (np.array([2.0, 7.0, 0.0]),), {}),
    ("searchsorted", SORTED, (np.array([2.0, 9.0]),), {"side": "right"}),
    ("sort", F, (), {}), ("sort", F, (0,), {}), ("squeeze", F[None, :, None], (), {}),
    ("squeeze", F[None], (0,), {}), ("std", F, (0,), {"ddof": 1}), ("sum", I32, (), {}),
    ("sum", F, (1,), {"keepdims": True}), ("swapaxes", F3, (0, 2), {}),
    ("take", F, (np.array([0, 5, 11]),), {}), ("take", F, (np.array([3, 0]),), {"axis": 1}),
    ("trace", F, (), {}), ("trace", F, (1,), {}), ("transpose", F3, (), {}),
    ("transpose", F3, (1, 0, 2), {}), ("transpose", F3, ((2, 0, 1),), {}),
    ("var", F, (), {}), ("var", I32, (1,), {}),
    ("astype", F, (np.int8,), {}), ("astype", I32, (np.float32,), {}),
    ("astype", B, (np.float16,), {}), ("copy", F, (), {}),
    ("view", I32, (np.float32,), {}), ("view", F, (np.uint8,), {}),
    ("view", np.arange(8, dtype=np.int16).reshape(2, 4), (np.int32,), {}),
    ("view", B, (np.uint8,), {}), ("view", C, (np.float32,), {}),
    ("byteswap", I32, (), {}), ("byteswap", F, (), {}),
]  # fmt: skip


# NumPy's sort sorts in place and NumPy 2 has no ndarray.ptp: their functions instead
REFERENCES = {"sort": np.sort, "ptp": np.ptp}
# Their results' shapes depend on values: not traceable without size=, in JAX too.
EAGER_ONLY = {"nonzero", "compress"}


def _check(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _check(g, w)
        return
    want = np.asarray(want)
    assert got.shape == want.shape
    assert got.dtype == dtypes.canonicalize_dtype(want.dtype)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("k, case", list(enumerate(CASES)), ids=lambda v: str(v)[:50])
def test_method_matches_numpy(k, case):
    name, a, args, kwargs = case
    reference = REFERENCES.get(name)
    if reference is None:
        want = getattr(a.copy(), name)(*args, **kwargs)
    else:
        want = reference(a, *args, **kwargs)
    _check(getattr(device_put(a), name)(*args, **kwargs), want)
    if k % 2 == 0 and name not in EAGER_ONLY:  # on a tracer too, for half of the cases
        _check(jit(lambda x: getattr(x, name)(*args, **kwargs))(a), want)


@pytest.mark.parametrize("name", ["T", "mT", "real", "imag"])
@pytest.mark.parametrize("a", [F3, C, I32], ids=["f32", "c64", "i32"])
def test_properties_match_numpy(name, a):
    want = np.swapaxes(a, -1, -2) if name == "mT" else getattr(a, name)
    _check(getattr(device_put(a), name), want)
    _check(jit(lambda x: getattr(x, name))(a), want)


def test_argpartition_partitions():
    a = np.array([5.0, 1.0, 4.0, 2.0, 3.0, 0.5], np.float32)
    order = np.asarray(device_put(a).argpartition(2))
    part = a[order]
    assert sorted(order.tolist()) == list(range(6))
    assert part[2] == np.sort(a)[2] and (part[:2] <= part[2]).all() and (part[3:] >= part[2]).all()


def test_python_protocols():
    x = device_put(np.array([2.5, -1.5, 7.0], np.float32))
    rounded = round(x)
    assert rounded.dtype == np.int32 and rounded.tolist() == [2, -2, 7]
    assert round(device_put(np.float32(2.567)), 1).dtype == np.float32
    assert float(round(device_put(np.float32(2.567)), 1)) == pytest.approx(2.6)
    assert 7.0 in x and 3 not in x
    assert bool(jit(lambda v: v.__contains__(-1.5))(x))
    with pytest.raises(ValueError, match="search array must be one-dimensional"):
        1.0 in device_put(F)  # noqa: B015
    with pytest.raises(ValueError, match="query value must be a scalar"):
        x.__contains__(np.array([1.0, 2.0]))
    for c in (copy.copy(x), copy.deepcopy(x), x.copy()):
        assert c is not x and c.tolist() == x.tolist()
    assert hex(device_put(np.int32(255))) == "0xff" and oct(device_put(np.int32(8))) == "0o10"
    assert device_put(np.int32(255)).__hex__() == "0xff"
    with pytest.raises(TypeError, match="Only integer scalar arrays"):
        x.__hex__()
    assert x.__array_namespace__() is importlib.import_module("lamina.numpy")
    assert x.__array_module__((type(x),)) is jnp
    assert x.__array_module__((np.ndarray,)) is NotImplemented
    assert x.itemsize == 4 and device_put(C).itemsize == 8
    assert x.__numpy_dtype__ == np.float32


def test_item():
    assert device_put(F).item(5) == 7.0 and device_put(I32).item(1, 2) == 0
    assert isinstance(device_put(np.float32(2.5)).item(), float)
    with pytest.raises(ConcretizationTypeError, match="item"):
        jit(lambda v: v.item())(np.float32(1.0))
    with pytest.raises(TracerArrayConversionError):
        jit(lambda v: v.tolist())(F)


def test_matmul_operator_batches():
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    b = np.arange(40.0, dtype=np.float32).reshape(2, 4, 5)
    np.testing.assert_allclose(np.asarray(device_put(a) @ device_put(b)), a @ b)
    np.testing.assert_allclose(np.asarray(a @ device_put(b)), a @ b)
    np.testing.assert_allclose(np.asarray(jit(lambda x, y: x @ y)(a, b[0])), a @ b[0])
    assert device_put(a).__matmul__("s") is NotImplemented


def test_astype_rules():
    x = lax.full((2,), 1.0)  # weakly typed
    assert x.weak_type and not x.astype(np.float32).weak_type
    assert device_put(I32).astype(None).dtype == np.float32
    with pytest.warns(DeprecationWarning, match="Casting from complex to real"):
        out = device_put(C).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(out), C.real)
    device = device_put(F).devices().pop()
    assert device_put(F).astype(np.int32, device=device).dtype == np.int32
    assert device_put(F).to_device(device).tolist() == F.tolist()


def test_view_errors_and_round_trips():
    with pytest.raises(ValueError, match="size must be a divisor"):
        device_put(np.arange(3, dtype=np.int16)).view(np.int32)
    with pytest.raises(TypeError, match="view"):
        device_put(F).view(np.ndarray)
    assert device_put(F).view() is not None and device_put(F).view(None).dtype == np.float32
    x = device_put(np.array([1.0, 2.0, -3.0, 0.5], np.float32))
    np.testing.assert_array_equal(np.asarray(x.view(np.complex64)), np.asarray(x).view("c8"))
    np.testing.assert_array_equal(np.asarray(x.view(np.uint16).view(np.float32)), np.asarray(x))


def test_refused_attributes_say_what_to_use():
    x = device_put(F)
    with pytest.raises(NotImplementedError, match=r"consider arr.flatten\(\) instead"):
        x.flat  # noqa: B018
    with pytest.raises(AttributeError, match=r"addressable_data\(0\)"):
        x.device_buffer  # noqa: B018
    with pytest.raises(AttributeError, match="addressable_shards"):
        x.device_buffers  # noqa: B018
    with pytest.raises(ValueError, match="at least two-dimensional"):
        device_put(SORTED).mT  # noqa: B018


def test_tracers_have_the_methods():
    def uses_methods(x):
        assert isinstance(x.at[0], object) and x.T.shape == (4, 3)
        return x.reshape(2, 6).sum(axis=1).astype(np.int32), [r.max() for r in x]

    total, maxima = jit(uses_methods)(F)
    np.testing.assert_array_equal(np.asarray(total), F.reshape(2, 6).sum(1).astype(np.int32))
    assert [float(m) for m in maxima] == F.max(1).tolist()
