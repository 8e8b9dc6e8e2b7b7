"""The Jaxprs of ``jvp`` and ``grad`` of every differentiable lax primitive are the ones
JAX 0.10.2 prints (texts recorded from JAX 0.10.2 by ``jvp_cases.py record``), so the
derivatives round the same way. Compared up to line wrapping and JAX's ``np.int64(k)``
parameters, printed by lamina as ``k``."""

from __future__ import annotations

import json
import re
import types

import numpy as np
import pytest
from jvp_cases import DATA, build_cases, loss

from lamina import lax
from lamina.interpreters import grad, jvp, make_jaxpr
from lamina.ir import tree_util

JAX = json.loads(DATA.read_text())
LAMINA = types.SimpleNamespace(jvp=jvp, grad=grad, make_jaxpr=make_jaxpr, tree_util=tree_util)
CASES = build_cases(LAMINA, lax)

# Cases whose Jaxprs still differ from JAX's (left to do).
DIFFERENT = {
    f"{kind} {name}"
    for kind in ("jvp", "grad")
    for name in (
        # lax.linalg rules: other formulas than JAX's
        "eigh",
        "eigh_w",
        "lu",
        "qr",
        "qr_q",
        "svd",
        "svd_uv",
    )
} | {
    "jvp random_gamma_grad",  # JAX differentiates its series evaluation
    "grad integer_pow_arr",  # JAX's linearization keeps a dead zeros broadcast
    "grad scatter_min",  # JAX's transposed scatter-add gets a jaxpr of its own
    "grad scatter_max",
}


def normalized(text: str) -> str:
    text = re.sub(r"np\.int64\((-?\d+)\)", r"\1", text)
    return " ".join(text.split()).replace("[ ", "[").replace(" ]", "]")


def lamina_text(key: str) -> str:
    kind, name = key.split(" ", 1)
    f, args = CASES[name]
    n = len(args)
    try:
        if kind == "jvp":
            tangents = [
                np.full(np.shape(a), 1.0 + i, np.asarray(a).dtype) for i, a in enumerate(args)
            ]
            return str(make_jaxpr(lambda *at: jvp(f, at[:n], at[n:]))(*args, *tangents))
        return str(make_jaxpr(grad(loss(LAMINA, lax, f), argnums=tuple(range(n))))(*args))
    except Exception as e:  # JAX's error type is recorded where it has no rule
        kind = NotImplementedError if isinstance(e, NotImplementedError) else type(e)
        return f"ERR {kind.__name__}"


@pytest.mark.parametrize("key", sorted(k for k in JAX if k not in DIFFERENT))
def test_jaxpr_matches_jax(key):
    assert normalized(lamina_text(key)) == normalized(JAX[key])


def test_every_case_recorded():
    assert sorted(JAX) == sorted(f"{k} {n}" for n in CASES for k in ("jvp", "grad"))
