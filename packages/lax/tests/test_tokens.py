"""create_token and after_all: eager tokens, printed Jaxprs (as JAX 0.10.2 prints
them), tokens passed into and out of jit, and under vmap."""

import numpy as np
import pytest

import lamina.lax as lax
from lamina.interpreters import Token, jit, make_jaxpr, vmap
from lamina.ir import abstract_token


def test_eager_tokens_are_token_values():
    token = lax.create_token()
    assert isinstance(token, Token)
    assert token.aval == abstract_token
    assert isinstance(lax.create_token(3.0), Token)  # the argument is ignored
    assert isinstance(lax.after_all(token, lax.create_token()), Token)
    assert isinstance(lax.after_all(), Token)


def test_printed_jaxprs_match_jax():
    assert str(make_jaxpr(lambda: lax.create_token())()) == (
        "{ lambda ; . let a:Tok = create_token  in (a,) }"
    )
    assert str(make_jaxpr(lambda: lax.after_all())()) == (
        "{ lambda ; . let a:Tok = after_all  in (a,) }"
    )
    jaxpr = make_jaxpr(lambda t, x: lax.after_all(t, lax.create_token()))(lax.create_token(), 1.0)
    assert str(jaxpr) == (
        "{ lambda ; a:Tok b:f32[]. let\n"
        "    c:Tok = create_token \n"
        "    d:Tok = after_all a c\n"
        "  in (d,) }"
    )
    assert str(make_jaxpr(lambda t: t)(lax.create_token())) == "{ lambda ; a:Tok. let  in (a,) }"


def test_tokens_pass_through_jit():
    token = lax.create_token()
    assert isinstance(jit(lambda t: t)(token), Token)

    @jit
    def f(t, x, u):
        return lax.after_all(t, u, lax.create_token()), x * 2, t

    out_token, doubled, same = f(token, np.float32(3.0), token)
    assert isinstance(out_token, Token) and isinstance(same, Token)
    np.testing.assert_allclose(np.asarray(doubled), 6.0)
    # A second call hits the cache and still hands back tokens.
    out_token, doubled, _ = f(lax.create_token(), np.float32(4.0), token)
    assert isinstance(out_token, Token)
    np.testing.assert_allclose(np.asarray(doubled), 8.0)
    assert isinstance(jit(lambda: lax.create_token())(), Token)
    lowered = jit(lambda t: lax.after_all(t, t)).lower(token).as_text()
    assert "@main(%arg0: !stablehlo.token) -> (!stablehlo.token" in lowered
    assert "stablehlo.after_all %arg0, %arg0 : !stablehlo.token" in lowered


def test_nested_jit_with_tokens():
    inner = jit(lambda t, x: (lax.after_all(t), x + 1))
    out = jit(lambda t, x: inner(t, x))(lax.create_token(), np.float32(1.0))
    assert isinstance(out[0], Token)
    np.testing.assert_allclose(np.asarray(out[1]), 2.0)


def test_tokens_inside_vmap():
    def f(x):
        lax.after_all(lax.create_token(x))
        return x * 2

    xs = np.arange(3.0, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(vmap(f)(xs)), xs * 2)
    jaxpr = make_jaxpr(vmap(f))(xs)
    assert str(jaxpr).splitlines()[1:3] == [
        "    b:Tok = create_token ",
        "    _:Tok = after_all b",
    ]


def test_after_all_rejects_arrays():
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        lax.after_all(1.0)
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        make_jaxpr(lambda t, x: lax.after_all(t, x))(lax.create_token(), 1.0)


def test_ahead_of_time_compiled_function_takes_and_returns_tokens():
    f = jit(lambda t, x: (lax.after_all(t), x * 2))
    token = lax.create_token()
    compiled = f.lower(token, 1.0).compile()
    out_token, out = compiled(token, 3.0)
    assert isinstance(out_token, type(token))
    assert float(out) == 6.0
    with pytest.raises(TypeError, match="pass a token"):
        compiled(1.0, 3.0)
