"""The eager path end to end: device_put -> compile -> execute -> Array, with jaxlib's
C++ result handlers, asynchronous dispatch and data that stays on the device."""

import logging
import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

import lamina.interpreters as li
from lamina.interpreters import execute

AFFINE = """
module @affine attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<8xf32>) -> (tensor<8xf32>) {
    %two = stablehlo.constant dense<2.0> : tensor<8xf32>
    %one = stablehlo.constant dense<1.0> : tensor<8xf32>
    %0 = stablehlo.multiply %x, %two : tensor<8xf32>
    %1 = stablehlo.add %0, %one : tensor<8xf32>
    return %1 : tensor<8xf32>
  }
}
"""


def test_affine_end_to_end():
    x = li.device_put(np.arange(8, dtype=np.float32))
    (y,) = li.execute_stablehlo(AFFINE, [x])
    assert type(y) is li.ArrayImpl and y._npy_value is None  # nothing copied to the host
    assert repr(y) == "Array([ 1.,  3.,  5.,  7.,  9., 11., 13., 15.], dtype=float32)"
    assert not y.committed and y.sharding == x.sharding
    (z,) = li.execute_stablehlo(AFFINE, [y])  # outputs feed straight back in
    np.testing.assert_array_equal(np.asarray(z), np.arange(8) * 4 + 3)


def test_host_arguments_are_put_on_the_device():
    (y,) = li.execute_stablehlo(AFFINE, [np.ones(8, np.float32)])
    np.testing.assert_array_equal(np.asarray(y), np.full(8, 3.0))


def test_compiled_once_per_text(caplog):
    text = AFFINE.replace("@affine", "@affine_cached")
    x = li.device_put(np.zeros(8, np.float32))
    with caplog.at_level(logging.DEBUG, logger="lamina.interpreters.backend"):
        for _ in range(3):
            li.execute_stablehlo(text, [x])
    compiles = [r for r in caplog.records if "compilation of affine_cached" in r.getMessage()]
    assert len(compiles) == 1


def test_several_outputs_and_dtypes():
    text = """
    module @consts {
      func.func public @main(%s: tensor<i32>) -> (tensor<i1>, tensor<2xui8>, tensor<complex<f32>>, tensor<2xbf16>, tensor<2xi4>, tensor<i32>) {
        %b = stablehlo.constant dense<true> : tensor<i1>
        %u = stablehlo.constant dense<[7, 255]> : tensor<2xui8>
        %c = stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f32>>
        %h = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xbf16>
        %q = stablehlo.constant dense<[1, -2]> : tensor<2xi4>
        return %b, %u, %c, %h, %q, %s : tensor<i1>, tensor<2xui8>, tensor<complex<f32>>, tensor<2xbf16>, tensor<2xi4>, tensor<i32>
      }
    }"""  # noqa: E501
    outs = li.execute_stablehlo(text, [np.int32(5)])
    assert [repr(o) for o in outs] == [
        "Array(True, dtype=bool)",
        "Array([  7, 255], dtype=uint8)",
        "Array(1.+2.j, dtype=complex64)",
        "Array([1.5, -2], dtype=bfloat16)",
        "Array([1, -2], dtype=int4)",
        "Array(5, dtype=int32)",
    ]


def test_dispatch_is_asynchronous():
    n = 1500
    mm = f"tensor<{n}x{n}xf32>"
    text = f"""
    module @matmuls {{
      func.func public @main(%a: {mm}) -> {mm} {{
        %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] : ({mm}, {mm}) -> {mm}
        %1 = stablehlo.dot_general %0, %a, contracting_dims = [1] x [0] : ({mm}, {mm}) -> {mm}
        return %1 : {mm}
      }}
    }}"""
    x = li.device_put(np.full((n, n), 1.0 / n, np.float32))
    li.execute_stablehlo(text, [x])[0].block_until_ready()  # compile and warm up
    (y,) = li.execute_stablehlo(text, [x])
    assert not y.is_ready()  # returned before the (~0.1 s) computation finished
    y.block_until_ready()
    assert y.is_ready()
    np.testing.assert_allclose(np.asarray(y)[:2, :2], 1.0 / n, rtol=1e-4)


def test_tensor_type():
    assert execute.tensor_type((2, 3), np.float32) == "tensor<2x3xf32>"
    assert execute.tensor_type((), np.bool_) == "tensor<i1>"
    assert execute.tensor_type((4,), ml_dtypes.bfloat16) == "tensor<4xbf16>"
    assert execute.tensor_type((1,), np.uint32) == "tensor<1xui32>"
    assert execute.tensor_type((), np.complex64) == "tensor<complex<f32>>"


def test_compiled_module_with_given_out_avals():
    from lamina.ir import ShapedArray

    module = li.CompiledModule(
        AFFINE, li.devices()[0], out_avals=[ShapedArray((8,), np.float32, weak_type=True)]
    )
    (y,) = module(li.device_put(np.zeros(8, np.float32)))
    assert y.weak_type and repr(y).endswith("dtype=float32, weak_type=True)")


MULTI_DEVICE = """
import numpy as np
import lamina.interpreters as li
li.config.update("jax_num_cpu_devices", 4)
text = {text!r}
d = li.devices()
x = li.device_put(np.arange(8, dtype=np.float32), d[2])
(y,) = li.execute_stablehlo(text, [x])
print(y.committed, y.devices() == {{d[2]}}, np.asarray(y)[:3].tolist())
(u,) = li.execute_stablehlo(text, [x, ][:1])
rows = list(li.device_put(np.arange(6).reshape(3, 2), d[3]))
print([r.devices() == {{d[3]}} and r.committed for r in rows], [r.tolist() for r in rows])
moved = li.device_put(x, d[1])
same = np.asarray(moved).tolist() == np.asarray(x).tolist()
print(moved.devices() == {{d[1]}}, moved.committed, same)
try:
    li.CompiledModule(text, d[0])(x)
except ValueError as e:
    print("error:", e)
(w,) = li.CompiledModule(text, d[0])(li.device_put(np.ones(8, np.float32)))
print(w.devices() == {{d[0]}}, w.committed)
"""


def test_devices_follow_committed_arguments():
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_FLAGS"))}
    clean["JAX_COMPILATION_CACHE_DIR"] = ""  # cache off, as in conftest.py
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(MULTI_DEVICE.format(text=AFFINE))],
        env=clean, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "True True [1.0, 3.0, 5.0]",
        "[True, True, True] [[0, 1], [2, 3], [4, 5]]",
        "True True True",
        "error: An argument of shape float32[8] is committed to "
        "SingleDeviceSharding(device=CpuDevice(id=2), memory_kind=device), "
        "but this computation runs on CpuDevice(id=0).",
        "True False",
    ]


@pytest.mark.parametrize("n", [1, 99, 100, 101])
def test_unstack_chunk_edges(n):
    host = np.arange(n * 2, dtype=np.int16).reshape(n, 2)
    rows = execute.unstack(li.device_put(host))
    assert len(rows) == n
    np.testing.assert_array_equal(np.stack([np.asarray(r) for r in rows]), host)
