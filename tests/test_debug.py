"""lamina.debug: printed output compared with JAX 0.10.2's (recorded from JAX 0.10.2),
under jit, vmap, grad, scan, while_loop and cond."""

import io
import logging
import re
import sys

import numpy as np
import pytest

import lamina as jax
import lamina.numpy as jnp
from lamina import lax


def _printed(capsys) -> list[str]:
    jax.effects_barrier()
    return capsys.readouterr().out.splitlines()


def _scan_program(ordered):
    def step(c, x):
        jax.debug.print("c={c} x={x}", c=c, x=x, ordered=ordered)
        return c + x, c * x

    return jax.jit(jax.vmap(lambda xs: lax.scan(step, jnp.float32(0), xs)))


# recorded from JAX 0.10.2
SCAN_OUTPUT = [
    "c=0.0 x=0.0",
    "c=0.0 x=3.0",
    "c=0.0 x=1.0",
    "c=3.0 x=4.0",
    "c=1.0 x=2.0",
    "c=7.0 x=5.0",
]


def test_print_in_scan_under_jit_vmap_ordered(capsys):
    c, ys = _scan_program(True)(jnp.arange(6.0).reshape(2, 3))
    assert _printed(capsys) == SCAN_OUTPUT
    np.testing.assert_array_equal(c, [3.0, 12.0])
    np.testing.assert_array_equal(ys, [[0, 0, 2], [0, 12, 35]])


def test_print_in_scan_under_jit_vmap_unordered(capsys):
    _scan_program(False)(jnp.arange(6.0).reshape(2, 3))
    # XLA schedules the unordered prints of one step; JAX's order, batch element first
    assert _printed(capsys) == SCAN_OUTPUT


def test_eager_print_formats_like_jax(capsys):
    jax.debug.print("hello {} {y}", 1, y=jnp.arange(3))
    jax.debug.print("no placeholders", jnp.arange(3), 2.5, skip_format_check=True)
    jax.debug.print("{x:.2f}", x=jnp.float32(3.14159))
    jax.debug.print("{}", jnp.array([[1.5, 2], [3, 4]]))
    jax.debug.print("{}", jnp.array(True))
    jax.debug.print("{}", jnp.sin(1.0))
    jax.debug.print("static {} {}", "s", None)
    jax.debug.print(ordered=True)("two {}", 1)
    assert _printed(capsys) == [
        "hello 1 [0 1 2]",
        "no placeholders [0 1 2] 2.5",
        "3.14",
        "[[1.5 2. ]",
        " [3.  4. ]]",
        "True",
        "0.8414709568023682",
        "static s None",
        "two 1",
    ]


def _g(x):
    jax.debug.print("x={}", x)
    y = jnp.sin(x)
    jax.debug.print("y={}", y)
    return y * 2


def test_print_under_grad_and_jvp_prints_primals(capsys):
    np.testing.assert_allclose(jax.grad(_g)(1.0), 2 * np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(_g))(1.0), 2 * np.cos(1.0), rtol=1e-6)
    jax.jvp(_g, (1.0,), (1.0,))
    assert _printed(capsys) == ["x=1.0", "y=0.8414709568023682"] * 3


def test_print_under_vmap_prints_each_element(capsys):
    jax.vmap(lambda x: jax.debug.print("v {}", x))(jnp.arange(3))
    jax.vmap(lambda x, y: jax.debug.print("v {} {}", x, y), in_axes=(1, None))(
        jnp.arange(6).reshape(2, 3), 5
    )
    assert _printed(capsys) == ["v 0", "v 1", "v 2", "v [0 3] 5", "v [1 4] 5", "v [2 5] 5"]


def test_print_in_cond_and_while(capsys):
    def h(p, x):
        def yes(x):
            jax.debug.print("true {}", x, ordered=True)
            return x

        def no(x):
            jax.debug.print("false {}", x, ordered=True)
            return -x

        return lax.cond(p, yes, no, x)

    jax.jit(h)(True, 1.0)
    jax.jit(h)(False, 2.0)

    def body(c):
        jax.debug.print("i={}", c, ordered=True)
        return c + 1

    assert int(jax.jit(lambda n: lax.while_loop(lambda c: c < n, body, 0))(3)) == 3
    assert _printed(capsys) == ["true 1.0", "false 2.0", "i=0", "i=1", "i=2"]


def test_ordered_print_in_while_condition(capsys):
    def f(n):
        jax.debug.print("start", ordered=True)

        def cond(c):
            jax.debug.print("cond {}", c, ordered=True)
            return c < n

        def body(c):
            jax.debug.print("body {}", c, ordered=True)
            return c + 1

        out = lax.while_loop(cond, body, 0)
        jax.debug.print("end {}", out, ordered=True)
        return out

    assert int(jax.jit(f)(2)) == 2
    assert int(f(1)) == 1
    vf = jax.vmap(
        lambda n, x: lax.while_loop(
            lambda c: (jax.debug.print("vc {}", c[0], ordered=True), c[0] < n)[1],
            lambda c: (c[0] + 1, c[1] * 2),
            (0, x),
        ),
        in_axes=(None, 0),
    )
    np.testing.assert_array_equal(jax.jit(vf)(2, jnp.arange(3.0))[1], [0.0, 4.0, 8.0])
    # recorded from JAX 0.10.2
    assert _printed(capsys) == [
        *["start", "cond 0", "body 0", "cond 1", "body 1", "cond 2", "end 2"],
        *["start", "cond 0", "body 0", "cond 1", "end 1"],
        *["vc 0", "vc 1", "vc 2"],
    ]


def _two_prints(x):
    jax.debug.print("a {}", x)
    jax.debug.print("b {}", x * 2)
    return x + 1


def test_unordered_prints_of_vmapped_steps_in_jax_order(capsys):
    def scanned(xs):
        def step(c, x):
            jax.debug.print("s {} {}", c, x)
            return c + x, None

        return lax.scan(step, 0, xs)

    jax.jit(jax.vmap(_two_prints))(jnp.arange(3))
    jax.jit(jax.vmap(scanned))(jnp.arange(6).reshape(2, 3))
    jax.vmap(scanned)(jnp.arange(6).reshape(2, 3))
    jax.jit(lambda xs: lax.scan(lambda c, x: (c, jax.vmap(_two_prints)(x)), 0, xs))(
        jnp.arange(4).reshape(2, 2)
    )
    steps = ["s 0 0", "s 0 3", "s 0 1", "s 3 4", "s 1 2", "s 7 5"]
    # recorded from JAX 0.10.2
    assert _printed(capsys) == [
        *["a 0", "a 1", "a 2", "b 0", "b 4", "b 2"],
        *steps,
        *steps,
        *["a 1", "a 0", "b 2", "b 0", "a 3", "a 2", "b 6", "b 4"],
    ]


def test_debug_callback(capsys):
    seen = []
    jax.debug.callback(lambda x, y: seen.append((type(x), x.tolist(), y)), jnp.arange(2), y=3)
    jax.jit(lambda x: jax.debug.callback(lambda a: seen.append(a.tolist()), x, ordered=True))(
        jnp.ones(2)
    )
    jax.debug.callback(ordered=True)(lambda a: seen.append(int(a)), 5)
    jax.effects_barrier()
    assert issubclass(seen[0][0], jax.Array) and seen[0][1:] == ([0, 1], 3)
    assert seen[1:] == [[1.0, 1.0], 5]


def test_debug_jaxprs():
    # recorded from JAX 0.10.2
    jaxpr = jax.make_jaxpr(lambda x: jax.debug.print("x={x}", x=x))(jnp.ones(3))
    (eqn,) = jaxpr.eqns
    assert eqn.primitive.name == "debug_print"
    assert sorted(eqn.params) == [
        "fmt",
        "has_placeholders",
        "in_tree",
        "logging_record",
        "np_printoptions",
        "ordered",
        "partitioned",
        "static_args",
    ]
    assert "fmt=x={x}\n      has_placeholders=True\n      in_tree=PyTreeDef(((), {'x': *}))" in str(
        jaxpr
    )
    assert [str(e) for e in jaxpr.effects] == ["Debug"]
    jaxpr = jax.make_jaxpr(lambda x: jax.debug.callback(print, x, ordered=True))(1.0)
    assert (
        "debug_callback[\n      callback=<function debug_callback.<locals>._debug_callback.<locals>._flat_callback"  # noqa: E501
        in str(jaxpr)
    )
    assert "effect=OrderedDebug\n      partitioned=False\n    ] a" in str(jaxpr)
    assert [str(e) for e in jaxpr.effects] == ["OrderedDebug"]


def test_debug_errors():
    # messages recorded from JAX 0.10.2
    with pytest.raises(
        TypeError, match="debug_print received unexpected arguments in the two-call form"
    ):
        jax.debug.print(ordered=True, x=1)
    with pytest.raises(
        ValueError, match=re.escape("Unused keyword arguments to `jax.debug.print`: ['x']")
    ):
        jax.debug.print("{}", 1, x=2)
    with pytest.raises(ValueError, match=r"Unused positional arguments to `jax.debug.print`"):
        jax.debug.print("none", 1)
    with pytest.raises(
        TypeError,
        match=r"first argument to jax.debug.callback must be callable, but got an object of type <class 'int'>",  # noqa: E501
    ):
        jax.debug.callback(3, 1)


def test_debug_log(caplog):
    with caplog.at_level(logging.INFO):
        jax.jit(lambda x: jax.debug.log("log {}", x))(3)
        jax.effects_barrier()
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.INFO][-1] == "log 3"


def test_breakpoint_cli(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("p x\np y + 1\nc\n"))

    def f(x):
        y = x * 2
        jax.debug.breakpoint()
        return y

    out = jax.jit(f)(jnp.arange(3.0))
    # recorded from JAX 0.10.2
    assert _printed(capsys) == [
        "Entering jdb:",
        "(jdb) Array([0., 1., 2.], dtype=float32)",
        "(jdb) Array([1., 3., 5.], dtype=float32)",
        "(jdb) ",
    ]
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])


def test_breakpoint_frames_and_token(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("u\np z\nd\np w\nc\n"))

    def inner(w):
        return jax.debug.breakpoint(token=w)

    def outer(z):
        return inner(z + 1)

    out = jax.jit(outer)(jnp.float32(1.0))
    lines = _printed(capsys)
    assert any("Array(1., dtype=float32)" in s for s in lines)  # z, one frame up
    assert any("Array(2., dtype=float32)" in s for s in lines)
    assert float(out) == 2.0


def test_sharding_helpers():
    seen = []
    jax.debug.inspect_array_sharding(jnp.ones(2), callback=seen.append)
    assert seen == [jnp.ones(2).sharding]
    with pytest.raises(NotImplementedError, match="issue 17"):
        jax.jit(lambda x: jax.debug.inspect_array_sharding(x, callback=print))(jnp.ones(2))


def test_visualize_array_sharding(capsys):
    # recorded from JAX 0.10.2 (drawn with rich, no colour)
    jax.debug.visualize_array_sharding(jnp.ones(2))
    assert capsys.readouterr().out == "┌──────────┐\n│  CPU 0   │\n└──────────┘\n"
