"""``jax.transfer_guard`` on common programs: which ones transfer from the host (and so
raise under "disallow"), as recorded from JAX 0.10.2 on CPU. Every case runs twice first,
so nothing lamina caches (device scalars, compiled programs) hides a transfer."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from jaxlib import _jax

import lamina as jax
import lamina.numpy as jnp

X = jnp.ones(3)
XS = jnp.ones(())
F = jax.jit(lambda a: a * 2)


def _h2d(aval: str) -> str:
    return (
        f"INVALID_ARGUMENT: Disallowed host-to-device transfer: aval=ShapedArray({aval}), "
        "dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    )


# The program and the first transfer JAX refuses (None: it transfers nothing).
CASES = {
    "x + 1": (lambda: X + 1, "int32[], weak_type=True"),
    "x * 2.0": (lambda: X * 2.0, "float32[], weak_type=True"),
    "jnp.add(x, 1)": (lambda: jnp.add(X, 1), "int32[], weak_type=True"),
    "lax.add(x, 1.0)": (lambda: jax.lax.add(X, 1.0), "float32[], weak_type=True"),
    "x > 0": (lambda: X > 0, "int32[], weak_type=True"),
    "bool(xs > 0)": (lambda: bool(XS > 0), "int32[], weak_type=True"),
    "jnp.maximum(x, 0.0)": (lambda: jnp.maximum(X, 0.0), "float32[], weak_type=True"),
    "jnp.full(3, 2.0)": (lambda: jnp.full(3, 2.0), "float32[], weak_type=True"),
    "jnp.zeros(3)": (lambda: jnp.zeros(3), "float32[]"),
    "jnp.eye(2)": (lambda: jnp.eye(2), "int32[]"),
    "jnp.array(np)": (lambda: jnp.array(np.ones(3)), "float32[3]"),
    "jnp.asarray(list)": (lambda: jnp.asarray([1.0, 2.0]), "float32[2]"),
    "jit(numpy)": (lambda: F(np.ones(3, np.float32)), "float32[3]"),
    "jit(1.0)": (lambda: F(1.0), "float32[], weak_type=True"),
    "wrap_key_data": (
        lambda: jax.random.wrap_key_data(np.array([0, 1], np.uint32)),
        "uint32[2]",
    ),
    "new_ref": (lambda: jax.new_ref(np.ones(2, np.float32)), "float32[2]"),
    "random.key(0)": (lambda: jax.random.key(0), "int32[]"),
    "x + x": (lambda: X + X, None),
    "x ** 2": (lambda: X**2, None),
    "jnp.sin(x)": (lambda: jnp.sin(X), None),
    "x.sum()": (lambda: X.sum(), None),
    "jnp.dot(x, x)": (lambda: jnp.dot(X, X), None),
    "jnp.arange(3)": (lambda: jnp.arange(3), None),
    "jit(x)": (lambda: F(X), None),
    "np.asarray(x)": (lambda: np.asarray(X), None),
    "float(xs)": (lambda: float(XS), None),
    "xs.item()": (lambda: XS.item(), None),
    "x.tolist()": (lambda: X.tolist(), None),
    "str(x)": (lambda: str(X), None),
    "repr(x)": (lambda: repr(X), None),
    "device_put": (lambda: jax.device_put(np.ones(3)), None),  # explicit
    "device_get": (lambda: jax.device_get(X), None),  # explicit
}


@pytest.mark.parametrize("name", CASES)
def test_disallow(name):
    program, refused = CASES[name]
    program()
    program()
    with jax.transfer_guard("disallow"):
        if refused is None:
            program()
        else:
            with pytest.raises(_jax.JaxRuntimeError) as info:
                program()
            assert str(info.value) == _h2d(refused)
    program()  # allowed again after the block


def test_disallow_set_globally_and_the_explicit_levels():
    X + 1
    try:
        jax.config.update("jax_transfer_guard", "disallow")
        with pytest.raises(_jax.JaxRuntimeError, match="Disallowed host-to-device"):
            X + 1
        with jax.transfer_guard_host_to_device("allow"):
            X + 1
    finally:
        jax.config.update("jax_transfer_guard", None)
    X + 1
    with jax.transfer_guard("log_explicit"):  # both allowed (explicit ones logged)
        jax.device_put(np.ones(3))
        X + 1
    with jax.transfer_guard("disallow_explicit"):  # both refused
        for program in (lambda: X + 1, lambda: jax.device_put(np.ones(3))):
            with pytest.raises(_jax.JaxRuntimeError, match="Disallowed host-to-device"):
                program()


def test_log_writes_jaxlibs_line():
    """Under "log" each implicit transfer is logged by jaxlib (on stderr), cached device
    scalars included."""
    code = textwrap.dedent(
        """
        import numpy as np
        import lamina as jax, lamina.numpy as jnp
        x = jnp.ones(3)
        x + 1; x + 1
        with jax.transfer_guard("log"):
            x + 1
            jax.device_put(np.ones(2))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "transfer:" in line]
    assert len(lines) == 1
    assert lines[0].endswith(
        "host-to-device transfer: aval=ShapedArray(int32[], weak_type=True), "
        "dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
    )
