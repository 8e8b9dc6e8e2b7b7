"""The stages API of jit: trace -> Traced, lower -> Lowered, compile -> Compiled."""

import jit_prims as P
import numpy as np
import pytest

from lamina.interpreters.jaxprs.trace_api import ShapeDtypeStruct
from lamina.interpreters.jit_functions.jit import jit

methods = P.methods
pytestmark = pytest.mark.usefixtures("methods")
X = np.arange(3, dtype=np.float32)


def f(x, scale):
    return {"y": P.sin(x) * scale, "n": x + 1.0}


def test_trace():
    traced = jit(f).trace(X, 2.0)
    assert str(traced.jaxpr).startswith("{ lambda ; a:f32[3] b:f32[]. let")
    assert traced.out_info == {
        "n": ShapeDtypeStruct((3,), np.float32),
        "y": ShapeDtypeStruct((3,), np.float32),
    }


def test_lower_text_and_trees():
    lowered = jit(f).lower(X, 2.0)
    text = lowered.as_text()
    assert text.startswith("module @jit_f attributes")
    assert "func.func public @main" in text
    assert "jax.result_info = \"result['n']\"" in text
    assert str(lowered.in_tree) == "PyTreeDef(((*, *), {}))"
    assert str(lowered.out_tree) == "PyTreeDef({'n': *, 'y': *})"


def test_compile_and_call():
    compiled = jit(f).lower(X, 2.0).compile()
    assert "HloModule jit_f" in compiled.as_text()
    cost = compiled.cost_analysis()
    assert isinstance(cost, dict) and cost["flops"] > 0
    assert compiled.memory_analysis().argument_size_in_bytes == 16
    out = compiled(X, 2.0)
    np.testing.assert_allclose(np.asarray(out["y"]), np.sin(X) * 2, rtol=1e-6)
    with pytest.raises(TypeError, match="expected float32\\[3\\], got float32\\[2\\]"):
        compiled(X[:2], 2.0)


def test_eval_shape_does_not_run():
    out = jit(f).eval_shape(X, 2.0)
    assert out["y"] == ShapeDtypeStruct((3,), np.float32)


def test_lowered_with_static_argument():
    g = jit(lambda x, n: x * float(n), static_argnums=1)
    assert "3.000000e+00" in g.lower(X, 3).as_text()
    np.testing.assert_allclose(np.asarray(g.lower(X, 3).compile()(X, 3)), 3 * X)


def test_lowered_as_xla_hlo():
    # JAX 0.10.2: compiler_ir("hlo") is jaxlib's XlaComputation, as_text("hlo") its text
    lowered = jit(lambda x: x).lower(np.ones(3, np.float32))
    computation = lowered.compiler_ir("hlo")
    assert type(computation).__name__ == "XlaComputation"
    text = lowered.as_text(dialect="hlo")
    assert text == computation.as_hlo_text()
    assert text.startswith("HloModule jit__lambda") and "f32[3]{0} parameter(0)" in text
    for call in (lambda: lowered.as_text(dialect="foo"), lambda: lowered.compiler_ir("foo")):
        with pytest.raises(ValueError, match="unknown dialect: foo"):
            call()
