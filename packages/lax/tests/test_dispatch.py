"""Eager dispatch: one executable per (primitive, params, input types, device), reused;
and a multi-primitive Jaxpr lowered and run against NumPy."""

import threading

import numpy as np

from lamina import lax
from lamina.interpreters import (
    CompiledModule,
    apply_primitive,
    compile_count,
    device_put,
    devices,
    lower_jaxpr,
    make_jaxpr,
    primitive_executable,
)
from lamina.ir import ShapedArray


def test_executable_is_compiled_once_and_reused():
    # A shape no other test uses, so no earlier test has compiled x * 2 already.
    x = device_put(np.arange(17, dtype=np.float32))
    lax.mul(x, x)  # warm
    before = compile_count()
    for _ in range(5):
        lax.mul(x, x)
        y = lax.mul(x, 2.0)  # a Python scalar: weak f32, one more executable
    assert compile_count() == before + 1
    np.testing.assert_array_equal(np.asarray(y), np.arange(17) * 2)
    aval = x.aval
    weak = ShapedArray((), np.float32, weak_type=True)
    assert primitive_executable(lax.mul_p, [aval, weak], {}) is primitive_executable(
        lax.mul_p, [aval, weak], {}
    )


def test_new_types_and_params_compile_new_executables():
    # a shape no other test uses, so that no earlier test has compiled these already
    x = device_put(np.arange(39, dtype=np.float32).reshape(3, 13))
    lax.reduce_sum(x, (0,))
    before = compile_count()
    lax.reduce_sum(x, (0,))
    assert compile_count() == before
    lax.reduce_sum(x, (1,))  # new params
    assert compile_count() == before + 1
    lax.reduce_sum(device_put(np.ones((3, 13), np.int32)), (1,))  # new dtype
    assert compile_count() == before + 2


def test_weak_type_is_part_of_the_key_and_kept():
    out = apply_primitive(lax.add_p, 1.0, 2.0)
    assert out.weak_type and float(out) == 3.0
    strong = apply_primitive(lax.add_p, np.float32(1), np.float32(2))
    assert not strong.weak_type


def test_host_values_are_put_on_the_device():
    out = lax.add(np.arange(3, dtype=np.int32), 1)
    np.testing.assert_array_equal(np.asarray(out), [1, 2, 3])
    assert out.dtype == np.int32


def test_committed_inputs_run_on_their_device():
    device = devices()[-1]
    x = device_put(np.ones(3, np.float32), device)
    out = lax.sin(x)
    assert out.devices() == {device} and out.committed


def test_threads_dispatch_concurrently():
    x = device_put(np.arange(4, dtype=np.float32))
    results = []

    def work():
        for _ in range(20):
            results.append(np.asarray(lax.add(x, x)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 80
    for r in results:
        np.testing.assert_array_equal(r, np.arange(4) * 2)


def test_multi_primitive_jaxpr_lowers_and_runs():
    def f(x, w, which):
        h = lax.dot_general(x, w, (((1,), (0,)), ((), ())))
        h = lax.tanh(h * 0.5 + 1)
        s = lax.reduce_sum(h, (1,))
        t = lax.reduce_max(lax.transpose(h, (1, 0)), (0,))
        b = lax.broadcast_in_dim(s, (3, 4), (0,))
        r = lax.reshape(b, (4, 3))
        c = lax.convert_element_type(which, np.float32)
        sel = lax.select_n(which > 0, s, t)
        return r, lax.exp(lax.neg(c)) + sel, lax.iota(np.int32, 3)

    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 2)).astype(np.float32)
    w = rng.normal(size=(2, 4)).astype(np.float32)
    which = np.array([0, 1, 0], np.int32)
    closed = make_jaxpr(f)(x, w, which)
    lowered = lower_jaxpr(closed, module_name="jit_f")
    text = lowered.as_text()
    assert "stablehlo.dot_general" in text and "stablehlo.reduce" in text
    run = CompiledModule(text, devices()[0], out_avals=closed.out_avals)
    r, y, io = run(*(device_put(a) for a in (x, w, which)))
    h = np.tanh((x @ w) * 0.5 + 1)
    s, t = h.sum(1), h.max(1)
    np.testing.assert_allclose(np.asarray(r), np.broadcast_to(s[:, None], (3, 4)).reshape(4, 3),
                               rtol=1e-5)  # fmt: skip
    np.testing.assert_allclose(np.asarray(y), np.exp(-which) + np.where(which > 0, t, s), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(io), np.arange(3))
