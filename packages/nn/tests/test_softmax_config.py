"""The ``jax_softmax_custom_jvp`` option: off by default, set by ``config.update`` or by
the ``softmax_custom_jvp`` context manager (in this thread, restored on exit), part of
the jit cache key. Off, ``nn.softmax`` is differentiated through its formula (the shift
by the maximum held constant); on, by its custom JVP rule. Values, derivatives and
Jaxprs against JAX 0.10.2's."""

import numpy as np
import pytest

import lamina.interpreters as api
import lamina.nn as nn
import lamina.numpy as jnp
from lamina.interpreters import config, softmax_custom_jvp

X = np.array([[0.5, -1.25, 3.0, 2.0], [1e3, 1e3, -1e3, 0.0], [-np.inf, 1.0, 2.0, 0.5]], np.float32)
WHERE = np.array([[True, True, False, True], [True, False, True, True], [True, True, True, False]])
WEIGHTS = np.array([1.0, -2.0, 0.5, 3.0], np.float32)


@pytest.fixture(autouse=True)
def option_left_off():
    assert config.jax_softmax_custom_jvp is False
    yield
    assert config.jax_softmax_custom_jvp is False, "a test left jax_softmax_custom_jvp on"


def _derivatives(x):
    weighted = api.grad(lambda x: (nn.softmax(x) * WEIGHTS).sum())(x)
    masked = api.grad(lambda x: (nn.softmax(x, where=WHERE) * WEIGHTS).sum())(x)
    _, tangent = api.jvp(nn.softmax, (x,), (jnp.ones_like(x),))
    return {"grad": weighted, "grad_where": masked, "jvp": tangent}


def test_option_defaults_off_and_the_context_manager_restores_it():
    assert softmax_custom_jvp.value is False
    with softmax_custom_jvp(True):
        assert config.jax_softmax_custom_jvp is True and softmax_custom_jvp.value is True
        with softmax_custom_jvp(False):
            assert config.jax_softmax_custom_jvp is False
        assert config.jax_softmax_custom_jvp is True
    with softmax_custom_jvp():  # as JAX's: no argument means on
        assert config.jax_softmax_custom_jvp is True
    with pytest.raises(RuntimeError, match="inside"), softmax_custom_jvp(True):
        raise RuntimeError("inside")
    assert config.jax_softmax_custom_jvp is False
    assert "jax_softmax_custom_jvp" in config.values


def test_config_update_sets_the_option_as_a_bool():
    try:
        config.update("jax_softmax_custom_jvp", 1)
        assert config.jax_softmax_custom_jvp is True
        assert str(api.make_jaxpr(nn.softmax)(X)).count("custom_jvp_call[") == 1
    finally:
        config.update("jax_softmax_custom_jvp", False)
    assert "custom_jvp_call" not in str(api.make_jaxpr(nn.softmax)(X))


@pytest.mark.parametrize("custom", [False, True])
def test_values_match_jax_under_both_settings(custom):
    with softmax_custom_jvp(custom):
        value = nn.softmax(X)
        masked = nn.softmax(X, axis=0, where=WHERE)
        log_grad = api.grad(lambda x: (nn.log_softmax(x) * WEIGHTS).sum())(X)
    assert value.dtype == np.float32
    np.testing.assert_array_equal(value, np.float32(VALUE))
    np.testing.assert_array_equal(masked, np.float32(VALUE_WHERE))
    # log_softmax does not read the option.
    np.testing.assert_array_equal(log_grad, np.float32(LOG_SOFTMAX_GRAD))


def test_custom_jvp_derivatives_are_bit_identical_to_jax():
    with softmax_custom_jvp(True):
        got = _derivatives(X)
        jitted = api.jit(lambda x: api.grad(lambda x: (nn.softmax(x) * WEIGHTS).sum())(x))(X)
    for name, value in got.items():
        np.testing.assert_array_equal(value, np.float32(RECORDED[True, name]), err_msg=name)
    # Under jit XLA fuses the operations and rounds differently, in JAX as well.
    np.testing.assert_array_equal(jitted, np.float32(RECORDED[True, "jit_grad"]))


def test_default_derivatives_match_jax():
    # Through the formula, the derivative of its division rounds differently from JAX's
    # in the last bit (lax.div's rule for the denominator), hence a tolerance.
    got = _derivatives(X)
    for name, value in got.items():
        want = np.float32(RECORDED[False, name])
        np.testing.assert_allclose(value, want, rtol=1e-6, atol=1e-7, err_msg=name)
    # The two rules agree up to rounding; both give zero where the input is -inf.
    with softmax_custom_jvp(True):
        custom = _derivatives(X)
    np.testing.assert_allclose(got["grad"], custom["grad"], rtol=1e-6, atol=1e-7)
    assert got["grad"][2, 0] == 0 and custom["grad"][2, 0] == 0


def test_jaxprs_with_the_custom_rule_print_as_jax_does():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    with softmax_custom_jvp(True):
        assert str(api.make_jaxpr(nn.softmax)(x)) == CUSTOM_JVP_JAXPR
        jvp_jaxpr = api.make_jaxpr(lambda x: api.jvp(nn.softmax, (x,), (x,)))(x)
    assert str(jvp_jaxpr) == CUSTOM_JVP_JAXPR.replace(*JVP_TAIL)


def test_default_jaxpr_holds_the_shift_constant():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    text = str(api.make_jaxpr(nn.softmax)(x))
    # Not jitted and no custom rule, as in JAX; the exact text differs from JAX's in how
    # jnp.max prints its ``initial`` (a convert_element_type before the max).
    assert "custom_jvp_call" not in text and "jit[" not in text
    assert text.count("stop_gradient") == 1
    assert "log_softmax" in str(api.make_jaxpr(nn.log_softmax)(x))  # jitted under its name


def test_option_is_part_of_the_jit_cache_key():
    f = api.jit(nn.softmax)
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    assert "custom_jvp_call" not in str(api.make_jaxpr(f)(x))
    with softmax_custom_jvp(True):
        assert "custom_jvp_call" in str(api.make_jaxpr(f)(x))
        traced_on = api.jit(api.grad(lambda x: (nn.softmax(x) * WEIGHTS).sum()))
        np.testing.assert_array_equal(traced_on(X), np.float32(RECORDED[True, "jit_grad"]))
    # The same jitted functions, called again with the option off, trace again.
    assert "custom_jvp_call" not in str(api.make_jaxpr(f)(x))
    off = np.float32(RECORDED[False, "jit_grad"])
    np.testing.assert_allclose(traced_on(X), off, rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------ recorded from JAX 0.10.2

CUSTOM_JVP_JAXPR = """\
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = custom_jvp_call[
      name=_softmax
      call_jaxpr={ lambda ; c:f32[2,3] d:f32[]. let
          e:f32[2] = reduce_max[axes=(1,)] c
          f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          g:f32[2] = max f e
          h:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] g
          i:f32[2,3] = sub c h
          j:f32[2,3] = exp i
          k:f32[2] = reduce_sum[axes=(1,) out_sharding=None] j
          l:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] k
          m:f32[2,3] = div j l
        in (m,) }
      jvp=_softmax_jvp
      symbolic_zeros=False
    ] a -inf:f32[]
  in (b,) }"""
# make_jaxpr of jvp(softmax, (x,), (x,)) is the same up to its last line, then:
JVP_TAIL = (
    "  in (b,) }",
    """\
    n:f32[2,3] = mul b a
    o:f32[2] = reduce_sum[axes=(1,) out_sharding=None] n
    p:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] o
    q:f32[2,3] = sub a p
    r:f32[2,3] = mul b q
  in (b, r) }""",
)
VALUE = [
    [0.05606023594737053, 0.009741807356476784, 0.6829534769058228, 0.25124454498291016],
    [0.5, 0.5, 0.0, 0.0],
    [0.0, 0.23122389614582062, 0.6285316944122314, 0.14024437963962555],
]
VALUE_WHERE = [
    [0.0, 0.09534946084022522, 0.0, 0.8807970285415649],
    [1.0, 0.0, 0.0, 0.11920291185379028],
    [0.0, 0.9046505093574524, 1.0, 0.0],
]
LOG_SOFTMAX_GRAD = [
    [0.8598493933677673, -2.0243544578552246, -1.207383632659912, 2.3718886375427246],
    [-0.25, -3.25, 0.5, 3.0],
    [1.0, -2.578059673309326, -1.0713292360305786, 2.6493890285491943],
]
RECORDED = {
    (False, "grad"): [
        [-0.007388005033135414, -0.03050926700234413, -0.4314810633659363, 0.46937841176986694],
        [0.75, -0.75, 0.0, 0.0],
        [0.0, -0.5254681706428528, 0.14295876026153564, 0.38250938057899475],
    ],
    (False, "grad_where"): [
        [-0.2639440596103668, -0.13804683089256287, 0.0, 0.40199100971221924],
        [0.0, 0.0, -0.0, 0.0],
        [0.0, -0.49152982234954834, 0.4915298819541931, 0.0],
    ],
    (False, "jvp"): [
        [2.897399653534194e-09, 4.4652370689846066e-10, 0.0, 4.696154576322442e-09],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, -1.6797159219095192e-08, -5.960464477539063e-08, -1.289681961225142e-08],
    ],
    (True, "grad"): [
        [-0.00738801434636116, -0.03050926700234413, -0.43148118257522583, 0.4693783223628998],
        [0.75, -0.75, 0.0, 0.0],
        [0.0, -0.5254681706428528, 0.14295877516269684, 0.38250938057899475],
    ],
    (True, "grad_where"): [
        [-0.2639441192150116, -0.13804683089256287, 0.0, 0.4019908905029297],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, -0.4915298521518707, 0.4915298521518707, 0.0],
    ],
    (True, "jvp"): [
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 1.3782018193353451e-08, 3.746340837551543e-08, 8.359216430164906e-09],
    ],
    (False, "jit_grad"): [
        [-0.007388005033135414, -0.03050926700234413, -0.4314810633659363, 0.46937835216522217],
        [0.75, -0.75, 0.0, 0.0],
        [0.0, -0.5254681706428528, 0.14295877516269684, 0.38250938057899475],
    ],
    (True, "jit_grad"): [
        [-0.00738801434636116, -0.03050926700234413, -0.43148118257522583, 0.4693783223628998],
        [0.75, -0.75, 0.0, 0.0],
        [0.0, -0.525468111038208, 0.14295879006385803, 0.38250938057899475],
    ],
}
