"""What the runtime options do: jax_no_tracing, jax_no_execution, jax_enable_checks,
jax_check_tracer_leaks, jax_explain_cache_misses, the transfer guards and
jax_default_device. Messages recorded from JAX 0.10.2 (with JAX's own functions where
lamina's test-local primitives stand in).

The primitives are test-local (``jit_prims.py``): lax is a higher layer."""

import logging
import os
import re
import subprocess
import sys
import textwrap

import jit_prims as P
import numpy as np
import pytest
from jaxlib import _jax

import lamina.interpreters as li
from lamina.ir import JaxprTypeError, Primitive, ShapedArray

methods = P.methods
pytestmark = pytest.mark.usefixtures("methods")
X = np.arange(3, dtype=np.float32)
JIT_LOGGER = "lamina.interpreters.jit"


def double(x):
    return P.mul(x, 2.0)


def test_no_tracing_refuses_new_traces_only():
    f = li.jit(double)
    f(X)
    with li.no_tracing(True):
        np.testing.assert_allclose(np.asarray(f(X)), X * 2)  # traced before
        with pytest.raises(RuntimeError) as info:
            f(np.ones(4, np.float32))
        assert str(info.value) == (
            f"re-tracing function double at {__file__}:{double.__code__.co_firstlineno} "
            "for `jit`, but 'no_tracing' is set"
        )
        with pytest.raises(RuntimeError, match="re-tracing function sin for `jit`, but"):
            P.sin(np.ones(7, np.float32))  # an eager primitive never compiled for f32[7]
        assert "mul" in str(li.make_jaxpr(double)(X))  # make_jaxpr is not jit


def test_no_execution_refuses_to_run():
    f = li.jit(double)
    with li.no_execution(True):
        with pytest.raises(RuntimeError) as info:
            f(X)
        assert str(info.value) == (
            "JAX tried to execute function jit(double), but the no_execution config option is set"
        )
        with pytest.raises(RuntimeError, match=r"execute function jit\(add\), but the no_exec"):
            P.add(X, X)
        assert "stablehlo.multiply" in f.lower(X).as_text()  # lowering is not execution
    np.testing.assert_allclose(np.asarray(f(X)), X * 2)


_shapes = iter(range(1, 100))
fickle_p = Primitive("fickle", registry=None)  # a new output shape each time it is asked
fickle_p.def_abstract_eval(lambda x: ShapedArray((next(_shapes),), x.dtype))


def test_enable_checks_type_checks_traced_jaxprs():
    fun = lambda x: fickle_p.bind(x)  # noqa: E731
    li.make_jaxpr(fun)(X)  # unchecked: the inconsistency goes unnoticed
    with li.enable_checks(True), pytest.raises(JaxprTypeError):
        li.make_jaxpr(fun)(X)
    with li.enable_checks(True):
        li.jit(double)(X)  # consistent Jaxprs pass


def test_check_tracer_leaks_in_jit():
    store = []

    @li.jit
    def leaky(x):
        store.append(P.mul(x, 2.0))
        return P.add(x, 1.0)

    with li.checking_leaks(), pytest.raises(Exception) as info:
        leaky(1.0)
    assert type(info.value) is Exception
    message = str(info.value)
    assert message.startswith("Leaked trace DynamicJaxprTrace. Leaked tracer(s):\n\nJitTracer(")
    assert "The error occurred while tracing the function leaky at" in message
    assert "is referred to by <list" in message
    store.clear()
    with li.checking_leaks():  # no leak: no error
        li.jit(double)(1.0)
        li.vmap(lambda x: (x, [x]))(X)


def test_check_tracer_leaks_in_vmap():
    store = []

    def leaky(x):
        store.append(x)
        return x

    with li.check_tracer_leaks(True), pytest.raises(Exception, match=r"^Leaked trace BatchTrace"):
        li.vmap(leaky)(X)
    li.vmap(leaky)(X)  # off: not checked


def _miss_messages(caplog, call):
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=JIT_LOGGER):
        call()
    return [r.getMessage() for r in caplog.records if "CACHE MISS" in r.getMessage()]


def test_explain_cache_misses(caplog):
    def g(x, y):
        return P.add(x, y)

    jg = li.jit(g)
    where = f"defined at {__file__}:{g.__code__.co_firstlineno}"
    with li.explain_cache_misses(True):
        (first,) = _miss_messages(caplog, lambda: jg(X, X))
        assert first.startswith(f"TRACING CACHE MISS at {__file__}:")
        assert first.endswith(f"  never seen function:\n    g id={id(g)} {where}")
        assert _miss_messages(caplog, lambda: jg(X, X)) == []
        (shape,) = _miss_messages(caplog, lambda: jg(np.ones(4, np.float32), X[:1]))
        assert shape.split("\n")[1:] == [  # format recorded from JAX 0.10.2
            f"  for g {where}",
            "  all previously seen cache keys differ. For the closest previous key:",
            "  different input types:",
            "  * at x, now f32[4] and before f32[3]",
            "  * at y, now f32[1] and before f32[3]",
        ]
        (weak,) = _miss_messages(caplog, lambda: jg(X, 1.0))
        assert weak.split("\n")[-1] == (
            "  * at y, now f32[]({}){weak_type=True} and before f32[3]({}){weak_type=False}"
            "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"
        )
        (kwarg,) = _miss_messages(caplog, lambda: jg(X, y=X))
        assert kwarg.split("\n")[3:] == [
            "  different input pytree:",
            "  * at input path [0], now tuple of length 1 and before tuple of length 2, so "
            "the lengths do not match",
            "  * at input path [1], now <class 'dict'> with 1 child and before <class 'dict'> "
            "with 0 child, so the numbers of children do not match, with the symmetric "
            "difference of key sets: {'y'}",
        ]
        with li.numpy_rank_promotion("raise"):
            (context,) = _miss_messages(caplog, lambda: jg(X, X))
        assert context.split("\n")[3:] == [
            "  Tracing context doesn't match, e.g. due to config or context manager.",
            "  * jax_numpy_rank_promotion differs: now raise and before allow",
        ]
        scaled = li.jit(lambda x, n: P.mul(x, float(n)), static_argnums=1)
        _miss_messages(caplog, lambda: scaled(X, 2))
        (static,) = _miss_messages(caplog, lambda: scaled(X, 3))
        static_class = "<class 'lamina.interpreters.jit_functions.cache_miss.Static'>"
        assert static.split("\n")[-1] == (  # JAX names its own class
            f"  * at input path [0][1], now {static_class} with pytree metadata Static(val=3) "
            f"and before {static_class} with pytree metadata Static(val=2), so the pytree "
            "node metadata does not match"
        )
    assert _miss_messages(caplog, lambda: jg(np.ones(5, np.float32), X[:1])) == []  # off


def test_cache_misses_are_per_function_not_per_jit(caplog):
    """Recorded from JAX 0.10.2: one function jitted twice shares its traces (no miss);
    a function re-defined on one line gets the re-definition hint."""

    def h(x):
        return P.mul(x, x)

    with li.explain_cache_misses(True):
        (first,) = _miss_messages(caplog, lambda: li.jit(h)(X))
        assert "never seen function" in first
        assert _miss_messages(caplog, lambda: li.jit(h)(X)) == []
        misses = _miss_messages(caplog, lambda: [li.jit(lambda x: x)(X) for _ in range(2)])
        assert [m.count("never seen function") for m in misses] == [1, 1]
        assert "but seen another function defined on the same line" not in misses[0]
        assert misses[1].endswith(
            "  but seen another function defined on the same line; maybe the function is\n"
            "  being re-defined repeatedly, preventing caching?"
        )
        # the call site: file:line:column (function), the column only where it is not 0
        line = h.__code__.co_firstlineno + 4
        assert re.fullmatch(
            rf"TRACING CACHE MISS at {re.escape(__file__)}:{line}:[1-9]\d* \(<lambda>\):",
            first.split("\n")[0],
        )


# Recorded from JAX 0.10.2: jaxlib's guard library raises this.
H2D = (
    "INVALID_ARGUMENT: Disallowed host-to-device transfer: aval=ShapedArray(float32[3]), "
    "dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
)


def test_transfer_guard_host_to_device():
    f = li.jit(double)
    f(X)
    on_device = li.device_put(X)
    with li.transfer_guard("disallow"):
        with pytest.raises(_jax.JaxRuntimeError) as info:
            f(X)  # a NumPy argument: an implicit transfer
        assert str(info.value) == H2D
        np.testing.assert_allclose(np.asarray(f(on_device)), X * 2)
        li.device_put(X)  # explicit: allowed
        np.asarray(on_device)  # on CPU, reading an array is not a transfer
        li.device_get(on_device)
    explicit_refused = pytest.raises(_jax.JaxRuntimeError, match="Disallowed host-to-device")
    with li.transfer_guard_host_to_device("disallow_explicit"), explicit_refused:
        li.device_put(X)
    with li.transfer_guard("log"):
        f(X)  # logs through jaxlib, does not raise


def test_transfer_guard_set_globally():
    f = li.jit(double)
    f(X)
    try:
        li.config.update("jax_transfer_guard", "disallow")
        with pytest.raises(_jax.JaxRuntimeError, match="Disallowed host-to-device"):
            f(X)
        with li.transfer_guard_host_to_device("allow"):
            f(X)
    finally:
        li.config.update("jax_transfer_guard", None)
    f(X)


def test_default_device_places_new_arrays():
    code = """
        import numpy as np
        import lamina.interpreters as li
        import jit_prims as P
        d0, d1 = li.devices()
        f = li.jit(lambda a: P.mul(a, 2.0))
        x = li.device_put(np.ones(3, np.float32))
        with li.default_device(d1):
            y = li.device_put(np.ones(3, np.float32))
            print(y.devices() == {d1}, y.committed, f(y).devices() == {d1},
                  f(x).devices() == {d1}, P.add(x, x).devices() == {d1},
                  li.config.jax_default_device == d1)
        with li.default_device("cpu"):
            print(li.device_put(1.0).devices() == {d0})
        print(li.device_put(1.0).devices() == {d0}, f(x).devices() == {d0})
    """
    clean = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    clean["JAX_COMPILATION_CACHE_DIR"] = ""  # cache off, as in conftest.py
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**clean, "JAX_NUM_CPU_DEVICES": "2", "PYTHONPATH": os.path.dirname(__file__)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    # Recorded from JAX 0.10.2 (with jnp.ones for device_put): uncommitted, on d1.
    assert out.stdout.split("\n")[:3] == [
        "True False True True True True",
        "True",
        "True True",
    ]
