"""The Jaxpr parser: JAX 0.10.2's printed Jaxprs read back, params of every kind,
errors, and ``parse(print(j)) == j`` for random Jaxprs.

The texts at the end of this file were printed by ``jax.make_jaxpr`` (JAX 0.10.2) for
the programs named above each one. The primitives they use are made in a test-local
registry, with the three printing rules these texts need: ``jit`` prints its sub-Jaxpr
with the caller's names; ``jit`` and the custom-derivative calls print ``name`` first;
``broadcast_in_dim`` hides ``shape``, ``sharding`` and empty ``broadcast_dimensions``.
"""

from __future__ import annotations

import contextlib
import math
import random
import time

import ml_dtypes
import numpy as np
import pytest

from lamina.ir import dtypes
from lamina.ir.core.avals import ShapedArray, abstract_token
from lamina.ir.core.jaxpr import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    new_jaxpr_eqn,
    pp_jaxpr,
)
from lamina.ir.core.primitives import Primitive, PrimitiveRegistry
from lamina.ir.parsing.parse_params import param_readers, value_readers
from lamina.ir.parsing.parser import (
    JaxprSyntaxError,
    MissingConst,
    OpaqueParam,
    declare_param,
    parse_call_args,
    parse_closed_jaxpr,
    parse_jaxpr,
    register_value_reader,
)

f32 = np.dtype("float32")
i32 = np.dtype("int32")

# ------------------------------------------------------------------ test helpers


class _FryKey(dtypes.ExtendedDType):
    """A stand-in for the PRNG key dtype ``key<fry>`` that lax registers."""

    name = "key<fry>"
    type = dtypes.prng_key

    def __eq__(self, other):
        return type(other) is _FryKey

    def __hash__(self):
        return hash(_FryKey)


def _key_dtype():
    """``key<fry>`` as the parser reads it now: the random layer's, where it is loaded
    (perhaps after this module), else a stand-in."""
    try:
        return dtypes.dtype_from_short_name("key<fry>")
    except ValueError:
        return dtypes.register_extended_dtype(_FryKey())


# Values that no lamina.ir reader knows are kept as text: the tests here read them so
# even where other layers that register readers for them are loaded.
pytestmark = pytest.mark.usefixtures("ir_readers_only")

# Every primitive in the recorded texts.
JAX_NAMES = [
    *("abs", "add", "add_any", "and", "argmax", "bitcast_convert_type", "broadcast_in_dim"),
    *("clamp", "concatenate", "cond", "conv_general_dilated", "convert_element_type", "cos"),
    *("create_token", "custom_jvp_call", "custom_vjp_call", "debug_print", "div"),
    *("dot_general", "erf_inv", "exp", "gather", "gt", "iota", "jit", "log", "log1p", "lt"),
    *("max", "mul", "ne", "neg", "or", "pad", "pure_callback", "random_bits", "random_split"),
    *("random_wrap", "reduce_max", "reduce_sum", "remat2", "reshape", "scan", "scatter-add"),
    *("select_n", "shift_right_logical", "sin", "sort", "split", "stop_gradient", "sub"),
    *("tanh", "transpose", "while"),
]


def _name_first(params):
    return [("name", params["name"]), *sorted((k, v) for k, v in params.items() if k != "name")]


def _hide_broadcast_params(params):
    hidden = ("shape", "sharding")
    return {
        k: v
        for k, v in params.items()
        if k not in hidden and not (k == "broadcast_dimensions" and v == ())
    }


def _complete_broadcast_params(params, in_avals, out_avals):
    return {"shape": out_avals[0].shape, "broadcast_dimensions": (), "sharding": None, **params}


def _jax_registry() -> PrimitiveRegistry:
    registry = PrimitiveRegistry()
    for name in JAX_NAMES:
        p = Primitive(name, registry=registry)
        if name in ("jit", "custom_jvp_call", "custom_vjp_call"):
            p.def_pp_params(_name_first, lambda params, ins, outs: params)
        if name == "broadcast_in_dim":
            p.def_pp_params(_hide_broadcast_params, _complete_broadcast_params)
    registry.lookup("jit").def_shared_names()
    return registry


JAX = _jax_registry()


def parse(text: str, **kw) -> Jaxpr:
    return parse_jaxpr(text, registry=JAX, **kw)


def prims(jaxpr) -> list[str]:
    return [e.primitive.name for e in jaxpr.eqns]


def eqn_of(jaxpr, name: str) -> JaxprEqn:
    return next(e for e in jaxpr.eqns if e.primitive.name == name)


def sa(shape, dtype=f32):
    return ShapedArray(shape, dtype)


def error_of(text: str, **kw) -> JaxprSyntaxError:
    with pytest.raises(JaxprSyntaxError) as info:
        parse(text, **kw)
    return info.value


# ------------------------------------------------------------------ recorded JAX texts


def test_mlp_gradient_structure():
    j = parse(MLP_GRAD)
    assert [v.aval for v in j.invars] == [
        sa((8,)),
        sa((3,)),
        sa((4, 8)),
        sa((8, 3)),
        sa((2, 4)),
        sa((2, 3)),
    ]
    assert j.constvars == []
    assert len(j.eqns) == 34
    assert prims(j)[:4] == ["dot_general", "broadcast_in_dim", "add", "tanh"]
    assert {"transpose", "reduce_sum", "reshape", "add_any", "neg"} <= set(prims(j))
    dot = j.eqns[0]
    assert dot.params == {
        "dimension_numbers": (([1], [0]), ([], [])),
        "preferred_element_type": f32,
    }
    assert isinstance(dot.params["preferred_element_type"], np.dtype)
    assert dot.invars == [j.invars[4], j.invars[2]]
    assert dot.outvars[0].aval == sa((2, 8))
    # broadcast_in_dim's completion rule restored the params JAX hides.
    bcast = j.eqns[1]
    assert bcast.params == {"shape": (1, 8), "broadcast_dimensions": (1,), "sharding": None}
    hidden = [e for e in j.eqns if e.primitive.name == "broadcast_in_dim"][2]
    assert hidden.params == {"shape": (2,), "broadcast_dimensions": (), "sharding": None}
    # np.int64(0) as NumPy 2 prints it.
    bdims = [e for e in j.eqns if e.primitive.name == "broadcast_in_dim"][3]
    assert bdims.params["broadcast_dimensions"] == (0,)
    assert type(bdims.params["broadcast_dimensions"][0]) is np.int64
    # A literal and an unused output.
    sub = j.eqns[4]
    assert isinstance(sub.invars[0], Literal) and sub.invars[0].val == np.float32(1.0)
    assert type(sub.invars[0].val) is np.float32
    assert isinstance(j.eqns[13].outvars[0], DropVar)
    # The nested jit is its own scope: it rebinds outer names (n, o, p, q).
    jit = j.eqns[8]
    assert jit.params["name"] == "log_softmax"
    inner = jit.params["jaxpr"]
    assert isinstance(inner, ClosedJaxpr) and inner.consts == []
    assert len(inner.eqns) == 10 and len(inner.jaxpr.outvars) == 3
    assert inner.jaxpr.invars[0] is not j.eqns[7].outvars[0]
    assert eqn_of(inner, "max").invars[0].val == np.float32(-np.inf)
    assert eqn_of(inner, "reduce_sum").params == {"axes": (1,), "out_sharding": None}
    assert len(j.outvars) == 4


def test_scan_structure():
    j = parse(SCAN)
    (scan,) = j.eqns
    assert len(scan.outvars) == 2
    body = scan.params["jaxpr"]
    assert isinstance(body, ClosedJaxpr)
    assert prims(body) == ["convert_element_type", "add", "convert_element_type", "mul"]
    assert {k: scan.params[k] for k in ("length", "num_carry", "num_consts", "unroll")} == {
        "length": 5,
        "num_carry": 1,
        "num_consts": 0,
        "unroll": 1,
    }
    assert scan.params["reverse"] is False
    assert body.eqns[0].params == {"new_dtype": f32, "weak_type": False}


def test_scan_with_consts_and_reverse():
    j = parse(SCAN_REVERSE_CONSTS)
    assert len(j.constvars) == 1 and j.constvars[0].aval == sa((3,))
    (scan,) = j.eqns
    assert scan.invars == [j.constvars[0], *j.invars]
    assert scan.params["reverse"] is True and scan.params["num_consts"] == 1
    assert [v.aval for v in scan.outvars] == [sa((3,)), sa((4,))]


def test_cond_and_switch_branches():
    cond = eqn_of(parse(COND), "cond")
    branches = cond.params["branches"]
    assert type(branches) is tuple and len(branches) == 2
    assert all(isinstance(b, ClosedJaxpr) for b in branches)
    assert [prims(b) for b in branches] == [["cos"], ["sin"]]
    switch = parse(SWITCH)
    clamp = eqn_of(switch, "clamp")
    assert [x.val for x in (clamp.invars[0], clamp.invars[2])] == [0, 2]
    assert type(clamp.invars[0].val) is np.int32
    branches = eqn_of(switch, "cond").params["branches"]
    assert [len(b.eqns) for b in branches] == [1, 1, 0]
    identity = branches[2].jaxpr
    assert identity.outvars == identity.invars


def test_while_loops():
    (w,) = parse(WHILE).eqns
    assert set(w.params) == {"body_jaxpr", "body_nconsts", "cond_jaxpr", "cond_nconsts"}
    assert prims(w.params["cond_jaxpr"]) == ["lt"]
    lt = w.params["cond_jaxpr"].eqns[0]
    assert lt.invars[1].val == 10 and lt.invars[1].aval == sa((), i32)
    (w,) = parse(WHILE_CONSTS).eqns
    assert w.params["body_nconsts"] == 1 and w.params["cond_nconsts"] == 1
    assert isinstance(w.invars[2], Literal)
    (w,) = parse(FORI_DYNAMIC).eqns
    assert [type(v) for v in w.outvars] == [DropVar, DropVar, Var]
    (s,) = parse(FORI_STATIC).eqns
    assert s.params["num_carry"] == 2 and isinstance(s.outvars[0], DropVar)


def test_nested_and_shared_jits():
    (jit,) = parse(JIT_SAME_ARG_TWICE).eqns
    inner = jit.params["jaxpr"].jaxpr
    assert jit.params["name"] == "<lambda>"
    assert len(inner.invars) == 2 and inner.outvars[1] is inner.invars[0]
    # let sin = { ... } in: every reference is the same object.
    j = parse(SHARED_JIT)
    k_jit, sin_jit, _ = j.eqns
    nested = [e.params["jaxpr"] for e in k_jit.params["jaxpr"].eqns]
    assert nested[0] is nested[1] is sin_jit.params["jaxpr"]
    assert sin_jit.params["name"] == "sin"
    assert prims(sin_jit.params["jaxpr"]) == ["sin"]
    # let f refers to g, which is bound after it.
    j = parse(SHARED_FORWARD)
    f = j.eqns[0].params["jaxpr"]
    assert f is j.eqns[2].params["jaxpr"]
    assert prims(f) == ["jit", "add", "jit", "add"]
    assert prims(f.eqns[0].params["jaxpr"]) == ["sin"]
    # branches=(jaxpr jaxpr): a tuple of names separated by a space.
    cond = eqn_of(parse(SHARED_BRANCHES), "cond")
    a, b = cond.params["branches"]
    assert a is b and prims(a) == ["jit"]


def test_custom_derivatives_and_checkpoint():
    j = parse(RELU_SOFTPLUS)
    relu = j.eqns[0]
    assert relu.primitive.name == "custom_jvp_call"
    assert relu.params["name"] == "relu" and relu.params["jvp"] == "jvp"
    assert relu.params["symbolic_zeros"] is False
    assert isinstance(relu.params["call_jaxpr"], ClosedJaxpr)
    logaddexp = j.eqns[1].params["jaxpr"].eqns[0]
    assert logaddexp.params["jvp"] == "_logaddexp_jvp"
    assert len(logaddexp.params["call_jaxpr"].eqns) == 10
    vjp = parse(CUSTOM_VJP).eqns[0]
    assert vjp.params["bwd"] == vjp.params["fwd"] == "<lambda>"
    remat = parse(CHECKPOINT).eqns[0]
    assert remat.params["policy"] is None and remat.params["prevent_cse"] is True
    assert prims(remat.params["jaxpr"]) == ["sin", "sin"]  # one-line, ';' separated
    grad = parse(GRAD_CHECKPOINT)
    assert isinstance(grad.eqns[1].outvars[0], DropVar)
    assert grad.eqns[2].params["differentiated"] is True
    assert len(parse(GRAD_RELU).eqns) == 7


def test_gather_and_scatter_params():
    gather = eqn_of(parse(GATHER), "gather")
    dnums = gather.params["dimension_numbers"]
    assert isinstance(dnums, OpaqueParam)
    assert str(dnums).startswith("GatherDimensionNumbers(offset_dims=(1,), ")
    assert gather.params["mode"] == OpaqueParam("GatherScatterMode.PROMISE_IN_BOUNDS")
    assert gather.params["slice_sizes"] == (1, 3)
    assert gather.params["fill_value"] is None
    scatter = eqn_of(parse(SCATTER_ADD), "scatter-add")
    assert scatter.params["update_consts"] == ()
    assert prims(scatter.params["update_jaxpr"]) == ["add"]
    assert isinstance(scatter.invars[2], Literal)


def test_random_keys():
    j = parse(RANDOM_NORMAL)
    key = _key_dtype()
    assert j.invars[0].aval == sa((), key)
    assert str(j.invars[0].aval.dtype) == "key<fry>"
    uniform = j.eqns[0].params["jaxpr"].eqns[0].params["jaxpr"].eqns[0]
    assert uniform.params["name"] == "_uniform"
    bits = eqn_of(uniform.params["jaxpr"], "random_bits")
    assert bits.params == {"bit_width": 32, "shape": (3,)}
    assert eqn_of(uniform.params["jaxpr"], "or").invars[1].val == np.uint32(1065353216)
    old = parse(RANDOM_UNIFORM_OLD_KEY)
    assert old.eqns[0].params == {"impl": "fry"}
    split = parse(RANDOM_SPLIT).eqns[0]
    assert split.outvars[0].aval == sa((2,), key)


def test_debug_print_params():
    (p,) = parse(DEBUG_PRINT).eqns
    assert p.outvars == [] and p.params["fmt"] == "x={}"
    assert p.params["in_tree"] == OpaqueParam("PyTreeDef(((*,), {}))")
    opts = p.params["np_printoptions"]
    assert opts[0] == ("edgeitems", 3) and opts[-1] == ("override_repr", None)
    assert p.params["static_args"] == () and p.params["logging_record"] is None
    p = parse(DEBUG_PRINT_ORDERED).eqns[1]
    assert p.params["fmt"] == "v {x} and {y}" and p.params["ordered"] is True
    assert str(p.params["in_tree"]) == "PyTreeDef(((), {'x': *, 'y': *}))"


def test_convert_element_type_dtypes():
    j = parse(CONVERT)
    assert [e.params["new_dtype"] for e in j.eqns] == [
        np.dtype(ml_dtypes.int4),
        np.dtype(ml_dtypes.bfloat16),
        np.dtype(ml_dtypes.float8_e4m3fn),
        np.dtype("uint8"),
    ]
    assert [v.aval.dtype.name for v in j.outvars] == ["int4", "bfloat16", "float8_e4m3fn", "uint8"]


def test_special_literals():
    j = parse(LITERALS)
    vals = [e.invars[1].val for e in j.eqns if len(e.invars) == 2]
    inf, neg_inf_sub, nan, neg_zero, small, big, three, zero = vals
    assert inf == np.inf and type(inf) is np.float32
    assert neg_inf_sub == np.inf  # x - inf
    assert np.isnan(nan)
    assert neg_zero == 0 and np.signbit(neg_zero)
    assert small == np.float32(1e-5) and big == np.float32(1e30)
    assert three == 3 and type(three) is np.int32
    assert not np.signbit(zero)
    f16, bf16 = (e.invars[1].val for e in parse(SMALL_FLOAT_LITERALS).eqns)
    assert f16 == np.float16(0.1) and type(f16) is np.float16
    assert bf16 == ml_dtypes.bfloat16(0.1) and type(bf16) is ml_dtypes.bfloat16
    c = parse(COMPLEX_LITERAL).eqns[0].invars[1]
    assert c.val == np.complex64(1 + 2j) and type(c.val) is np.complex64
    b, u = parse(BOOL_UINT_LITERALS).eqns
    assert b.invars[1].val is np.True_ and u.invars[1].val == np.uint32(7)


def test_constvars_tokens_and_empty_bodies():
    j = parse(TOP_CONST)
    assert len(j.constvars) == 1 and j.eqns[0].invars == [j.invars[0], j.constvars[0]]
    inner = parse(NESTED_CONST).eqns[0].params["jaxpr"]
    assert len(inner.jaxpr.constvars) == 1 and inner.consts == [MissingConst(sa((5,)))]
    (tok,) = parse(TOKEN).eqns
    assert tok.invars == [] and tok.outvars[0].aval is abstract_token
    j = parse(NO_EQUATIONS)
    assert j.eqns == [] and j.outvars[0] is j.outvars[2] is j.invars[0]
    assert j.outvars[1].val == 1.0
    j = parse(NO_INPUTS)
    assert j.invars == [] and j.outvars[0].aval == sa(())
    inner = parse(JIT_LITERAL_OUT).eqns[0].params["jaxpr"].jaxpr
    assert inner.outvars[1].val == 2 and inner.outvars[1].aval == sa((), i32)


def test_shaped_arrays_read_as_their_repr_writes_them():
    read = value_readers["ShapedArray"]
    for aval in (sa(()), sa((2, 3), i32), ShapedArray((4,), f32, weak_type=True)):
        back = read(repr(aval))
        assert back == aval and back.weak_type == aval.weak_type
    with pytest.raises(ValueError, match="not a ShapedArray"):
        read("ShapedArray(float32[2, 3])")


def test_other_param_forms():
    cb = parse(PURE_CALLBACK).eqns[0].params
    assert str(cb["callback"]).startswith("_FlatCallback(callback_func=<function <lambda>")
    assert cb["result_avals"] == (sa(()),)
    assert cb["sharding"] is None and cb["vmap_method"] is None
    dot = parse(DOT_PRECISION).eqns[0].params
    assert dot["precision"] == (OpaqueParam("Precision.HIGHEST"),) * 2
    conv = parse(CONV).eqns[0].params
    assert conv["padding"] == ((1, 1), (1, 1)) and conv["preferred_element_type"] is None
    assert isinstance(conv["dimension_numbers"], OpaqueParam)
    pad = eqn_of(parse(PAD).eqns[0].params["jaxpr"], "pad").params
    assert pad["padding_config"] == ((2, 2, 0),)
    assert [type(x) for x in pad["padding_config"][0]] == [np.int64, np.int64, int]
    split = parse(SPLIT).eqns[0]
    assert split.params["sizes"] == (2, 2, 2) and len(split.outvars) == 3
    assert parse(DONATE).eqns[0].params["donated_invars"] == (True,)
    sort = eqn_of(parse(ARGSORT).eqns[0].params["jaxpr"], "sort")
    assert sort.params == {"dimension": 0, "is_stable": True, "num_keys": 1}
    iota = eqn_of(parse(ARGSORT).eqns[0].params["jaxpr"], "iota")
    assert iota.invars == [] and iota.params["dtype"] == i32 and iota.params["shape"] == (5,)


def test_jit_outputs_dropped_outside_are_named_underscore_inside():
    (jit,) = parse(JIT_DROPPED_OUTPUTS).eqns
    assert [type(v) for v in jit.outvars] == [Var, DropVar, DropVar]
    inner = jit.params["jaxpr"].jaxpr
    mul_out = inner.eqns[1].outvars[0]
    assert type(mul_out) is Var  # printed '_', but used: 'in (b, _, a)'
    assert inner.outvars == [inner.eqns[0].outvars[0], mul_out, inner.invars[0]]


# ------------------------------------------------------------------ layout


def test_one_line_and_multi_line_forms_agree():
    one_line = "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = sin b in (c,) }"
    multi_line = """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = sin b
  in (c,) }"""
    reflowed = "{lambda;a:f32[].let\n\n b:f32[]=sin a;;\n\tc:f32[] = sin\n   b in(c ,)}"
    assert parse(one_line) == parse(multi_line) == parse(reflowed)


def test_whitespace_collapsed_texts_read_the_same(all_texts):
    # Every newline and indent replaced by one space (JAX's one-line layout without
    # the '; ' separators) still reads as the same Jaxpr.
    for name, text in all_texts:
        assert parse(" ".join(text.split())) == parse(text), name


def test_variables_named_like_keywords():
    # JAX names the 222nd variable 'in' and the 5752nd 'inf'.
    names = [_alphabetic(i) for i in range(235)]
    assert names[221] == "in" and _alphabetic(5751) == "inf"
    lines = [f"    {names[i + 1]}:f32[] = sin {names[i]}" for i in range(233)]
    text = "{ lambda ; a:f32[]. let\n" + "\n".join(lines) + f"\n  in ({names[233]}, in) }}"
    j = parse(text)
    assert len(j.eqns) == 233 and j.outvars[1] is j.eqns[220].outvars[0]
    assert pp_jaxpr(j) == text
    # 'inf' as a variable beside the literal inf.
    text = """\
{ lambda ; a:f32[]. let
    inf:f32[] = add a inf:f32[]
    nan:f32[] = mul inf nan:f32[]
    True:bool[] = gt nan a
    b:f32[] = select_n True inf nan
    c:f32[] = add b inf:f32[]
    in:f32[] = add c inf
  in (in, nan:f32[], True:bool[]) }"""
    j = parse(text)
    add, mul, gt, select, add2, add3 = j.eqns
    assert isinstance(add.invars[1], Literal) and add.invars[1].val == np.inf
    assert mul.invars[0] is add.outvars[0] and isinstance(mul.invars[1], Literal)
    assert select.invars == [gt.outvars[0], add.outvars[0], mul.outvars[0]]
    assert isinstance(add2.invars[1], Literal) and add3.invars[1] is add.outvars[0]
    assert j.outvars[0] is add3.outvars[0] and j.outvars[1].val != j.outvars[1].val
    assert j.outvars[2].val is np.True_


def _alphabetic(n: int) -> str:
    name = ""
    while True:
        n, digit = divmod(n, 26)
        name = chr(ord("a") + digit) + name
        if n == 0:
            return name


def test_literal_words_at_line_starts_and_complex_after_in():
    # A literal wrapped onto its own line is an operand; a binder named like a literal
    # at the equation's indentation starts the next equation.
    text = """\
{ lambda ; a:f32[] in:c64[]. let
    b:f32[] = f a
      inf:f32[]
    inf:f32[] = f b
    c:c64[] = g in
      (1+2j):c64[]
    h in
    d:c64[] = g in 2j:c64[]
    e:c64[] = g in -infj:c64[]
  in (inf, c, d, e) }"""
    j = parse(text, unknown_primitives="create")
    f1, f2, g1, h, g2, g3 = j.eqns
    assert isinstance(f1.invars[1], Literal) and f2.outvars[0] is j.outvars[0]
    assert g1.invars[1].val == np.complex64(1 + 2j)
    assert h.outvars == [] and h.invars == [j.invars[1]]
    assert g2.invars[1].val == 2j and g3.invars[1].val == complex(0, -math.inf)


def test_equations_without_outputs_or_params():
    text = """\
{ lambda ; a:f32[] b:f32[]. let
    effect a b
    effect
    c:f32[] = add a b
    effect[k=1] c
  in (c,) }"""
    j = parse(text, unknown_primitives="create")
    assert prims(j) == ["effect", "effect", "add", "effect"]
    assert [len(e.invars) for e in j.eqns] == [2, 0, 2, 1]
    one_line = "{ lambda ; a:f32[] b:f32[]. let effect a b; effect ; c:f32[] = add a b in (c,) }"
    assert [len(e.invars) for e in parse(one_line, unknown_primitives="create").eqns] == [2, 0, 2]


def test_variable_suffixes_and_weak_types():
    text = "{ lambda ; a':f32[] b:~f32[3]. let c'':~f32[3] = mul b a' in (c'', 2.0:~f32[]) }"
    j = parse(text)
    a, b = j.invars
    assert a.suffix == "'" and j.eqns[0].outvars[0].suffix == "''"
    assert b.aval == ShapedArray((3,), f32, weak_type=True)
    assert j.outvars[1].aval.weak_type
    assert pp_jaxpr(j, print_weak_types=True) == text


# ------------------------------------------------------------------ params


def params_of(params_text: str, primitive: str = "p") -> dict:
    text = f"{{ lambda ; a:f32[]. let b:f32[] = {primitive}[{params_text}] a in (b,) }}"
    return parse(text, unknown_primitives="create").eqns[0].params


def test_scalar_params():
    p = params_of("a=1 b=-7 c=1.5 d=1e-05 e=inf f=-inf g=nan h=-0.0 i=True j=False k=None")
    assert p["a"] == 1 and type(p["a"]) is int and p["b"] == -7
    assert p["c"] == 1.5 and p["d"] == 1e-05 and p["e"] == math.inf and p["f"] == -math.inf
    assert math.isnan(p["g"]) and p["h"] == 0 and math.copysign(1, p["h"]) == -1
    assert p["i"] is True and p["j"] is False and p["k"] is None
    p = params_of("c=(1+2j) d=1e+30 e=123456789012345678901234567890")
    assert p["c"] == 1 + 2j and p["d"] == 1e30 and p["e"] == 123456789012345678901234567890


def test_container_params():
    p = params_of(
        "t=((1, 2), (3,)) e=() one=(1,) l=[[1], []] d={'a': 1, 'b': (2, None)} s={1, 2} "
        "n=((('x', 3),),) f=frozenset({1, 2, 3}) ef=frozenset({}) m=[1.5, -inf, nan, -0.0]"
    )
    assert p["t"] == ((1, 2), (3,)) and p["e"] == () and p["one"] == (1,)
    assert p["l"] == [[1], []] and type(p["l"]) is list
    assert p["d"] == {"a": 1, "b": (2, None)} and p["s"] == {1, 2}
    assert p["n"] == ((("x", 3),),)
    assert p["f"] == frozenset({1, 2, 3}) and p["ef"] == frozenset()
    assert p["m"][:2] == [1.5, -math.inf] and math.isnan(p["m"][2])
    assert math.copysign(1, p["m"][3]) == -1


def test_quoted_strings_inside_containers():
    p = params_of("""t=('a b', "it's", 'x\\'y', '', 'new\\nline')""")
    assert p["t"] == ("a b", "it's", "x'y", "", "new\nline")


def test_dtype_and_numpy_params():
    p = params_of(
        "a=int32 b=bfloat16 c=float8_e4m3fn d=bool e=(dtype('float32'), dtype('int4')) "
        "f=(np.int64(2), np.float32(1.5), np.True_, np.float32(nan), np.uint8(255))"
    )
    assert p["a"] == i32 and isinstance(p["a"], np.dtype)
    assert p["b"] == np.dtype(ml_dtypes.bfloat16) and p["c"].name == "float8_e4m3fn"
    assert p["d"] == np.dtype(bool)
    assert p["e"] == (f32, np.dtype(ml_dtypes.int4))
    i, f, t, n, u = p["f"]
    assert (type(i), type(f), type(u)) == (np.int64, np.float32, np.uint8)
    assert (i, f, u) == (2, 1.5, 255) and t is np.True_ and np.isnan(n)


def test_words_strings_and_opaque_values():
    p = params_of(
        "name=int32 jvp=jvp fwd=<lambda> impl=fry mode=GatherScatterMode.FILL_OR_DROP "
        "dn=ConvDimensionNumbers(lhs_spec=(0, 1), rhs_spec=(1, 0)) "
        "fn=<function f at 0x7f00>"
    )
    assert p["name"] == "int32"  # 'name' is declared a string
    assert p["jvp"] == "jvp" and p["fwd"] == "<lambda>" and p["impl"] == "fry"
    assert p["mode"] == OpaqueParam("GatherScatterMode.FILL_OR_DROP")
    assert p["mode"] != OpaqueParam("GatherScatterMode.CLIP")
    assert p["mode"] != "GatherScatterMode.FILL_OR_DROP"
    assert hash(p["mode"]) == hash(OpaqueParam("GatherScatterMode.FILL_OR_DROP"))
    assert repr(p["dn"]) == str(p["dn"]) == "ConvDimensionNumbers(lhs_spec=(0, 1), rhs_spec=(1, 0))"
    assert p["fn"] == "<function f at 0x7f00>"
    p = params_of("t=(Precision.HIGH, <function g at 0x1>, ShapedArray(float32[3]), odd one)")
    opaque = [OpaqueParam(s) for s in ("Precision.HIGH", "<function g at 0x1>", "odd one")]
    assert p["t"] == (*opaque[:2], sa((3,)), opaque[2])
    assert str(p["t"]) == "(Precision.HIGH, <function g at 0x1>, ShapedArray(float32[3]), odd one)"


def test_raw_string_params_end_at_the_next_key():
    p = params_of("fmt=x={} and {y} has_placeholders=True other=a b == c d")
    assert p == {"fmt": "x={} and {y}", "has_placeholders": True, "other": "a b == c d"}
    multi_line = "\n      ".join(["", "fmt=", "name=<unnamed wrapped function>", "s=1 2 3", ""])
    p = params_of(multi_line)
    assert p == {"fmt": "", "name": "<unnamed wrapped function>", "s": "1 2 3"}
    assert params_of("fmt=[{}] g=a[0]")["g"] == "a[0]"
    assert params_of("fmt=it's {x}")["fmt"] == "it's {x}"
    assert params_of("s='quoted'")["s"] == "'quoted'"  # str() writes strings unquoted


def test_declared_params():
    text = """\
{ lambda ; a:f32[]. let
    b:f32[] = test_declared[
      body={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }
      call={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }
      dt=float32
      size=3
    ] a
  in (b,) }"""
    declare_param("test_declared", "body", Jaxpr)
    declare_param("test_declared", "dt", str)
    declare_param("test_declared", "size", lambda text: ("size", int(text)))
    try:
        params = parse(text, unknown_primitives="create").eqns[0].params
    finally:
        for key in ("body", "dt", "size"):
            del param_readers[("test_declared", key)]
    assert type(params["body"]) is Jaxpr and type(params["call"]) is ClosedJaxpr
    assert params["dt"] == "float32" and params["size"] == ("size", 3)
    assert params_of("dt=float32")["dt"] == f32


def test_registered_value_readers():
    class Precision:
        def __init__(self, name):
            self.name = name

    register_value_reader("Precision", lambda text: Precision(text.split(".")[1]))
    register_value_reader("Dims", lambda text: ("Dims", parse_call_args(text)))
    try:
        p = params_of("p=(Precision.HIGHEST, None) d=Dims((0, 1), 'x', k=[2], n=None)")
        with pytest.raises(JaxprSyntaxError, match="cannot read Dims"):
            params_of("d=Dims(1, k=)")
    finally:
        del value_readers["Precision"], value_readers["Dims"]
    assert p["p"][0].name == "HIGHEST" and p["p"][1] is None
    assert p["d"] == ("Dims", (((0, 1), "x"), {"k": [2], "n": None}))


def test_parse_call_args():
    args, kwargs = parse_call_args(
        "GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), mode=X.Y)"
    )
    assert args == () and kwargs == {
        "offset_dims": (1,),
        "collapsed_slice_dims": (0,),
        "mode": OpaqueParam("X.Y"),
    }
    assert parse_call_args("np.float32(-0.5)") == ((-0.5,), {})
    for bad in ("f(1", "f(1) x", "(1)", "f(,)"):
        with pytest.raises(JaxprSyntaxError):
            parse_call_args(bad)


def test_param_completion_rules_run_after_parsing():
    registry = PrimitiveRegistry()
    p = Primitive("bcast", registry=registry)
    Primitive("sin", registry=registry)
    seen = []

    def complete(params, in_avals, out_avals):
        seen.append((in_avals, out_avals))
        return {**params, "shape": out_avals[0].shape}

    p.def_pp_params(lambda params: params, complete)
    text = "{ lambda ; a:f32[]. let b:f32[2,3] = bcast[dims=()] a in (b,) }"
    (eqn,) = parse_jaxpr(text, registry=registry).eqns
    assert eqn.params == {"dims": (), "shape": (2, 3)} and eqn.primitive is p
    assert seen == [([sa(())], [sa((2, 3))])]

    def broken(params, in_avals, out_avals):
        return {**params, "shape": in_avals[5]}

    p.def_pp_params(lambda params: params, broken)
    with pytest.raises(JaxprSyntaxError, match="cannot complete the params of 'bcast'"):
        parse_jaxpr(text, registry=registry)


def test_unknown_primitives_are_created_once_per_parse():
    text = "{ lambda ; a:f32[]. let b:f32[] = mystery a; c:f32[] = mystery b in (c,) }"
    with pytest.raises(JaxprSyntaxError, match="unknown primitive 'mystery'"):
        parse(text)
    j = parse(text, unknown_primitives="create")
    m1, m2 = (e.primitive for e in j.eqns)
    assert m1 is m2 and m1.name == "mystery" and JAX.lookup("mystery") is None
    assert parse(text, unknown_primitives="create").eqns[0].primitive is not m1
    assert parse("{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }").eqns[0].primitive is (
        JAX.lookup("sin")
    )


def test_parse_closed_jaxpr():
    text = "{ lambda a:f32[3] b:i32[]; c:f32[3]. let d:f32[3] = add c a in (d,) }"
    closed = parse_closed_jaxpr(text, registry=JAX)
    assert closed.consts == [MissingConst(sa((3,))), MissingConst(sa((), i32))]
    assert repr(closed.consts[1]) == "MissingConst(i32[])"
    assert closed == parse_closed_jaxpr(text, registry=JAX)
    consts = [np.ones(3, np.float32), np.int32(2)]
    given = parse_closed_jaxpr(text, consts, registry=JAX).consts
    assert given[0] is consts[0] and given[1] is consts[1]
    with pytest.raises(ValueError, match="2 constvars"):
        parse_closed_jaxpr(text, [1.0], registry=JAX)


def test_a_long_program_reads_quickly():
    lines = [f"    {_alphabetic(i + 1)}:f32[8,8] = sin {_alphabetic(i)}" for i in range(5000)]
    text = "{ lambda ; a:f32[8,8]. let\n" + "\n".join(lines) + f"\n  in ({_alphabetic(5000)},) }}"
    start = time.perf_counter()
    j = parse(text)
    assert len(j.eqns) == 5000
    assert time.perf_counter() - start < 10  # about half a second where measured


# ------------------------------------------------------------------ errors

_SMALL = """\
{ lambda ; a:f32[3] b:i32[]. let
    c:f32[3] = sin a
    d:f32[3] = jit[
      name=f
      jaxpr={ lambda ; c:f32[3]. let d:f32[3] = cos c in (d,) }
    ] c
  in (d, b) }"""


def test_errors_name_the_line_and_column():
    e = error_of(_SMALL.replace("sin a", "sin z"))
    assert isinstance(e, ValueError)
    assert (e.lineno, e.colno) == (2, 20)
    assert str(e) == (
        "'z' is not a variable in scope (nor a known primitive) (line 2, column 20)\n"
        "    c:f32[3] = sin z\n"
        "                   ^"
    )
    assert e.msg == "'z' is not a variable in scope (nor a known primitive)"


@pytest.mark.parametrize(
    ("text", "message", "where"),
    [
        ("", "expected '{' to start a Jaxpr, found end of text", (1, 1)),
        ("hello world", "expected '{' to start a Jaxpr, found 'hello'", (1, 1)),
        ("{ lambda ; a:f32[]. let in (a,) } }", "unexpected '}' after the Jaxpr", (1, 35)),
        ("{ lambda ; a:f32[]. let in (a,) } {", "unexpected '{' after the Jaxpr", (1, 35)),
        ("{ lambda ; a:f32[]. in (a,) }", "expected 'let' after the input variables", (1, 21)),
        ("{ lambda ; a:f32[]. let in a }", "expected '(' and the output list", (1, 28)),
        ("{ lambda ; a:f32[]. let in (a a) }", "expected ',' or ')' in the output list", (1, 31)),
        ("{ lambda a:f32[]. let in (a,) }", "expected a variable like 'a:f32[3]' or ';'", (1, 17)),
        ("{ lambda ; a:f32[] let in (a,) }", "expected ':' and a type after 'let'", (1, 24)),
        ("{ lambda ; 3:f32[]. let in () }", "expected a variable like 'a:f32[3]' or '.'", (1, 12)),
        ("{ lambda ; a:f32[]. let b:f32[] = sin a in (b,)", "expected '}' to end", (1, 48)),
        ("{ lambda ; a:f32[]. let = sin a in () }", "expected an equation or 'in'", (1, 25)),
        ("{ lambda ; a:f32[]. let b:f32[] sin a in () }", "expected ':' and a type", (1, 37)),
        ("{ lambda ; a:f32[]. let b:f32[] = 1 in () }", "expected an equation or 'in'", (1, 35)),
    ],
)
def test_syntax_errors(text, message, where):
    e = error_of(text)
    assert e.msg.startswith(message), e.msg
    assert (e.lineno, e.colno) == where


@pytest.mark.parametrize(
    ("type_text", "message"),
    [
        ("f32[3", "expected a dimension size, found '3.'"),
        ("f32[3 4]", "expected ',' or ']' in the shape"),
        ("f32[3,]", "expected a dimension size, found ']'"),
        ("f32[-1]", "expected a dimension size, found '-'"),
        ("f32[n]", "expected a dimension size, found 'n'"),
        ("f32[1.5]", "expected a dimension size, found '1.5'"),
        ("f33[3]", "unknown dtype 'f33'"),
        ("float32[3]", "unknown dtype 'float32'"),
        ("key<nope>[]", "unknown dtype 'key<nope>' (extended dtypes must be registered)"),
        ("f32", "expected '[' and a shape after 'f32'"),
        ("[3]", "expected a type like f32[3], found '['"),
        ("~Tok", "unknown dtype 'Tok'"),
        ("", "expected a type like f32[3], found '.'"),
    ],
)
def test_type_errors(type_text, message):
    e = error_of(f"{{ lambda ; a:{type_text}. let in () }}")
    assert e.msg.startswith(message), e.msg


def test_undefined_rebound_and_dropped_variables():
    assert error_of("{ lambda ; a:f32[]. let in (b,) }").msg == "'b' is not a variable in scope"
    e = error_of("{ lambda ; a:f32[] a:f32[]. let in () }")
    assert (e.msg, e.colno) == ("variable 'a' is bound twice", 20)
    e = error_of("{ lambda a:f32[]; a:f32[]. let in () }")
    assert e.msg == "variable 'a' is bound twice"
    e = error_of("{ lambda ; a:f32[]. let b:f32[] = sin a; b:f32[] = sin a in (b,) }")
    assert (e.msg, e.colno) == ("variable 'b' is bound twice", 42)
    e = error_of("{ lambda ; a:f32[]. let b:f32[] c:f32[] b:f32[] = sin a in (b,) }")
    assert e.msg == "variable 'b' is bound twice"
    # An equation's outputs are bound after its operands are read.
    e = error_of("{ lambda ; a:f32[]. let b:f32[] = sin b in (b,) }")
    assert e.msg.startswith("'b' is not a variable in scope")
    e = error_of("{ lambda ; a:f32[]. let b:f32[] = sin _ in (b,) }")
    assert e.msg == "'_' is not a variable in scope (nor a known primitive)"
    # Nested Jaxprs neither see the outer names nor clash with them.
    nested = "{ lambda ; a:f32[]. let b:f32[] = jit[name=f jaxpr=%s] a in (b,) }"
    assert parse(nested % "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }")
    e = error_of(nested % "{ lambda ; c:f32[]. let d:f32[] = sin a in (d,) }")
    assert e.msg.startswith("'a' is not a variable in scope")


def test_unknown_primitives():
    e = error_of("{ lambda ; a:f32[]. let b:f32[] = frobnicate a in (b,) }")
    assert e.msg == (
        "unknown primitive 'frobnicate' (register it, or parse with unknown_primitives='create')"
    )
    assert e.colno == 35


@pytest.mark.parametrize(
    ("literal", "message"),
    [
        ("1.5:i32[]", "expected an integer"),
        ("2147483648:i32[]", "out of range [-2147483648, 2147483647]"),
        ("256:u8[]", "out of range [0, 255]"),
        ("-1:u32[]", "out of range [0, 4294967295]"),
        ("8:i4[]", "out of range [-8, 7]"),
        ("True:f32[]", "expected a number"),
        ("1.0:bool[]", "expected True or False"),
        ("1:bool[]", "expected True or False"),
        ("1e40:f32[]", "out of range"),
        ("70000.0:f16[]", "out of range"),
        ("1j:f32[]", "expected a number"),
        ("1.0:f32[3]", "a literal is a scalar, of a type like f32[]"),
        ("1.0:Tok", "a literal is a scalar, of a type like f32[]"),
        ("0:key<fry>[]", "there are no literals of dtype key<fry>"),
        ("True:c64[]", "expected a complex number"),
    ],
)
def test_bad_literals(literal, message):
    e = error_of(f"{{ lambda ; a:f32[]. let b:f32[] = add a {literal} in (b,) }}")
    assert e.msg.endswith(message), e.msg
    assert e.msg.startswith(f"bad literal {literal}")
    assert e.colno == 41


def test_malformed_literals():
    for text, message in [
        ("add a 1.0", "expected ':' and a type after the literal 1.0"),
        ("add a - 1.0:f32[]", "expected a literal, found '1.0'"),
        ("add a (1+2):c64[]", "expected a literal, found '('"),
        ("add a 1.0:", "unknown dtype 'in'"),
    ]:
        e = error_of(f"{{ lambda ; a:f32[]. let b:f32[] = {text} in (b,) }}")
        assert e.msg.startswith(message), e.msg


def test_param_errors():
    eqn = "{ lambda ; a:f32[]. let b:f32[] = sin[%s] a in (b,) }"
    for params, message in [
        ("k=1 k=2", "param 'k' is given twice"),
        ("k", "expected '=' after param name 'k'"),
        ("=1", "expected a param name or ']', found '='"),
        ("k=(1,", "cannot read the value of param k"),
        ("k=(1, 2))", "unexpected ')' after param k"),
        ("k=a)", "unbalanced ')' in param value"),
        ("k=[1 2", "cannot read the value of param k"),
        ("k=[1 2]", "cannot read the value of param k"),
        ("k=(1, 2)x", "unexpected 'x' after param k"),
        ("k={'a' 1}", "cannot read the value of param k"),
        ("k={ lambda ; . let in () }x", "unexpected 'x' after param k"),
        ("k={ lambda ; . let in (a,) }", "'a' is not a variable in scope"),
        ("name=(f", "unbalanced ']' in param value"),
        ("name=f(\n", "unbalanced brackets in param value"),
        ("k=np.float32(x, y)", "cannot read np.float32(x, y): expected one argument"),
        ("k=dtype('float99')", "cannot read dtype('float99'): unknown dtype"),
        ("k=frozenset(1)", "cannot read frozenset(1): not a frozenset"),
    ]:
        e = error_of(eqn % params)
        assert e.msg.startswith(message), (params, e.msg)
    assert error_of("{ lambda ; a:f32[]. let b:f32[] = sin[k=1").msg.startswith(
        "expected a param name or ']', found end of text"
    )


def test_let_bound_jaxpr_errors():
    e = error_of("let f = { lambda ; . let in () } in let f = { lambda ; . let in () } in")
    assert e.msg == "'f' is bound by 'let' twice"
    e = error_of("let f = { lambda ; . let in () }\n{ lambda ; . let in () }")
    assert e.msg.startswith("expected 'in' after the let-bound Jaxpr") and e.lineno == 2
    e = error_of("let f = { lambda ; . let in ()  in { lambda ; . let in () }")
    assert e.msg == "this '{' is never closed"
    loop = "let f = { lambda ; . let jit[name=g jaxpr=f] in () } in { lambda ; . let in () }"
    assert error_of(loop).msg == "the let-bound Jaxpr 'f' refers to itself"
    unused_but_broken = "let f = { lambda ; . let in (x,) } in { lambda ; . let in () }"
    assert error_of(unused_but_broken).msg == "'x' is not a variable in scope"
    e = error_of("let f = 3 in { lambda ; . let in () }")
    assert e.msg == "expected '{' to start the let-bound Jaxpr, found '3'"


def test_deep_nesting_is_an_error_not_a_crash():
    def nested(n):
        text = "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }"
        for _ in range(n):
            text = f"{{ lambda ; a:f32[]. let b:f32[] = jit[name=f jaxpr={text}] a in (b,) }}"
        return text

    assert len(parse(nested(60)).eqns) == 1
    for n in (101, 5000):
        assert error_of(nested(n)).msg == "nested more than 100 levels deep"
    for n in (101, 100_000):
        for opener, closer in ("()", "[]", "{}"):
            text = (
                f"{{ lambda ; a:f32[]. let b:f32[] = sin[k={opener * n}{closer * n}] a in (b,) }}"
            )
            assert error_of(text).msg == "nested more than 100 levels deep"


def test_every_truncation_is_an_error():
    for text in (_SMALL, MLP_GRAD[:1500], SHARED_FORWARD, DEBUG_PRINT, CONVERT):
        for end in range(len(text.rstrip())):
            with pytest.raises(JaxprSyntaxError):
                parse(text[:end])


def test_random_damage_is_read_or_rejected():
    # Seeded mutations of recorded texts: each is read, or rejected with a
    # JaxprSyntaxError; never another exception, and never slowly.
    rng = random.Random(20260)
    alphabet = "{}()[],;:=._-+~<>'\"\n abcfijnlt0123456789é²٣\u00a0\x00"
    texts = [t for _, t in ALL_TEXTS.items()]
    for _ in range(1500):
        chars = list(rng.choice(texts))
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(chars))
            action = rng.random()
            if action < 0.4:
                del chars[i]
            elif action < 0.8:
                chars.insert(i, rng.choice(alphabet))
            else:
                chars[i] = rng.choice(alphabet)
        with contextlib.suppress(JaxprSyntaxError):
            parse("".join(chars))


def test_bad_arguments():
    with pytest.raises(TypeError, match="parse_jaxpr expects a string, got bytes"):
        parse_jaxpr(b"{ lambda ; . let in () }")
    with pytest.raises(ValueError, match="unknown_primitives must be 'error' or 'create'"):
        parse_jaxpr("{ lambda ; . let in () }", unknown_primitives="ignore")


def test_long_lines_are_shown_around_the_error():
    eqns = "".join(f"{_alphabetic(i)}:f32[] = sin a; " for i in range(30, 70))
    e = error_of("{ lambda ; a:f32[]. let " + eqns + "c:f32[] = sin zz; " + eqns + "in (c,) }")
    _, line, caret = str(e).split("\n")
    assert line.startswith("...") and line.endswith("...") and len(line) == 106
    assert line[len(caret) - 1 :].startswith("zz")


# ------------------------------------------------------------------ parse(print(j)) == j

PROP = PrimitiveRegistry()
PLAIN = [Primitive(f"op{i}", registry=PROP) for i in range(4)] + [
    Primitive("scatter-mul", registry=PROP)
]
NO_OUTPUTS = Primitive("effect", registry=PROP)
CALL = Primitive("prop_call", registry=PROP)  # a ClosedJaxpr in 'jaxpr'
OPEN_CALL = Primitive("prop_open_call", registry=PROP)  # an open Jaxpr in 'body'
BRANCHES = Primitive("prop_cond", registry=PROP)  # a tuple of ClosedJaxprs
JIT = Primitive("prop_jit", registry=PROP)  # prints its Jaxpr with the caller's names
JIT.def_shared_names()
declare_param(OPEN_CALL, "body", Jaxpr)

DTYPES = [
    np.dtype(t)
    for t in (
        bool,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
        ml_dtypes.bfloat16,
        ml_dtypes.int4,
        ml_dtypes.uint4,
        ml_dtypes.float8_e4m3fn,
        ml_dtypes.float8_e5m2,
    )
]
SPECIAL_FLOATS = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-30, 1e30, 0.1, -2.5, 3.0]
WORDS = ["relu", "<lambda>", "hello world", "x={}", "my_fn", "<unnamed wrapped function>"]
KEYS = ["axes", "k", "mode", "alpha", "shape", "dims", "flag", "s", "dt", "x1", "name"]


class RandomJaxprs:
    """Well-formed random Jaxprs: every kind of type, literal, param and binder."""

    def __init__(self, seed: int, weak_types: bool):
        self.r = random.Random(seed)
        self.weak_types = weak_types
        self.key = _key_dtype()
        self.pool: list[Jaxpr] = []  # sub-Jaxprs, reused to make shared ones

    def aval(self, token=True):
        r = self.r
        roll = r.random()
        if token and roll < 0.04:
            return abstract_token
        shape = tuple(r.randint(0, 5) for _ in range(r.choice([0, 0, 1, 2, 3])))
        if roll < 0.08:
            return ShapedArray(shape, self.key)
        weak = self.weak_types and r.random() < 0.3
        return ShapedArray(shape, r.choice(DTYPES), weak_type=weak)

    def literal(self) -> Literal:
        r = self.r
        dtype = r.choice(DTYPES)
        aval = ShapedArray((), dtype, weak_type=self.weak_types and r.random() < 0.3)
        if dtype == np.dtype(bool):
            return Literal(np.bool_(r.random() < 0.5), aval)
        if dtype.kind == "c":
            value = complex(r.choice(SPECIAL_FLOATS), r.choice(SPECIAL_FLOATS))
            return Literal(dtype.type(value), aval)
        try:
            info = ml_dtypes.iinfo(dtype)
        except ValueError:
            with np.errstate(over="ignore"):
                value = dtype.type(r.choice(SPECIAL_FLOATS))
            # -inf becomes a negative NaN in float8_e4m3fn; the text says only "nan".
            return Literal(dtype.type(math.nan) if math.isnan(value) else value, aval)
        value = r.choice([info.min, info.max, 0, 1, r.randint(info.min, info.max)])
        return Literal(dtype.type(value), aval)

    def atom(self, env):
        if env and self.r.random() < 0.75:
            return self.r.choice(env)
        return self.literal()

    def element(self, depth=0):
        """A value inside a tuple, list or dict (printed with repr)."""
        r = self.r
        kinds = ["int", "float", "bool", "none", "str", "np", "dtype", "opaque"]
        if depth < 3:
            kinds += ["tuple", "list", "dict"]
        kind = r.choice(kinds)
        if kind == "int":
            return r.randint(-(10**20), 10**20)
        if kind == "float":
            return r.choice(SPECIAL_FLOATS)
        if kind == "bool":
            return r.random() < 0.5
        if kind == "none":
            return None
        if kind == "str":
            return r.choice(["a", "it's", 'say "hi"', "", "x, y", "(", "tab\there"])
        if kind == "np":
            return r.choice(
                [
                    np.int64(r.randint(-9, 9)),
                    np.float32(r.choice(SPECIAL_FLOATS)),
                    np.bool_(r.random() < 0.5),
                    np.uint8(200),
                ]
            )
        if kind == "dtype":
            return r.choice(DTYPES)
        if kind == "opaque":
            return r.choice(
                [
                    OpaqueParam("Precision.HIGHEST"),
                    ShapedArray((3,), f32),  # read by lamina-ir's reader
                    OpaqueParam("GatherScatterMode.CLIP"),
                    OpaqueParam("<function f at 0xXXXXXXXXXXXX>"),
                ]
            )
        items = [self.element(depth + 1) for _ in range(r.randint(0, 3))]
        if kind == "tuple":
            return tuple(items)
        if kind == "list":
            return items
        return {f"k{i}": v for i, v in enumerate(items)}

    def param(self, key):
        """A top-level param value (printed with str)."""
        r = self.r
        if key == "name":
            return r.choice(WORDS)
        kind = r.choice(
            [
                "int",
                "float",
                "bool",
                "none",
                "str",
                "tuple",
                "tuple",
                "list",
                "dict",
                "frozenset",
                "dtype",
                "complex",
                "opaque",
                "empty",
            ]
        )
        if kind == "int":
            return r.randint(-(10**6), 10**6)
        if kind == "float":
            return r.choice(SPECIAL_FLOATS)
        if kind == "bool":
            return r.random() < 0.5
        if kind == "none":
            return None
        if kind == "str":
            return r.choice(WORDS)
        if kind == "tuple":
            return tuple(self.element() for _ in range(r.randint(1, 4)))
        if kind == "list":
            return [self.element() for _ in range(r.randint(0, 3))]
        if kind == "dict":
            return {"a": self.element(), "b": self.element()}
        if kind == "frozenset":
            return frozenset(r.sample(range(50), r.randint(0, 4)))
        if kind == "dtype":
            return r.choice(DTYPES)
        if kind == "complex":
            return complex(r.randint(-3, 3), r.choice([1.5, -2.0]))
        if kind == "opaque":
            return OpaqueParam(
                r.choice(
                    [
                        "GatherScatterMode.FILL_OR_DROP",
                        "GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,))",
                        "PyTreeDef(((*,), {}))",
                    ]
                )
            )
        return ()

    def params(self):
        keys = self.r.sample(KEYS, self.r.choice([0, 0, 1, 2, 4]))
        return {k: self.param(k) for k in keys}

    def sub_jaxpr(self, depth, n_in=None, n_out=None):
        if n_in is None and self.pool and self.r.random() < 0.3:
            return self.r.choice(self.pool)
        # A jit's Jaxpr gets no DropVars: it may print a variable named '_' to use.
        jaxpr = self.jaxpr(depth + 1, n_in, n_out, drops=n_in is None)
        self.pool.append(jaxpr)
        return jaxpr

    def closed(self, jaxpr):
        return ClosedJaxpr(jaxpr, [MissingConst(v.aval) for v in jaxpr.constvars])

    def eqn(self, env, depth, drops):
        r = self.r
        invars = [self.atom(env) for _ in range(r.randint(0, 3))]
        params = self.params()
        n_out = r.choice([0, 1, 1, 1, 2, 3])
        primitive = r.choice(PLAIN)
        roll = r.random()
        if depth < 3 and roll < 0.25:
            nested = r.choice([CALL, OPEN_CALL, BRANCHES, JIT])
            primitive = nested
            if nested is CALL:
                params["jaxpr"] = self.closed(self.sub_jaxpr(depth))
            elif nested is OPEN_CALL:
                params["body"] = self.sub_jaxpr(depth)
            elif nested is BRANCHES:
                branches = [self.sub_jaxpr(depth) for _ in range(r.randint(0, 3))]
                params["branches"] = tuple(self.closed(b) for b in branches)
            else:  # one output, so that at most one variable inside is named '_'
                n_out = 1
                params["jaxpr"] = self.closed(self.sub_jaxpr(depth, len(invars), 1))
        elif n_out == 0:
            primitive = NO_OUTPUTS
        drop = 0.1 if drops else 0
        outvars = [
            DropVar(self.aval()) if r.random() < drop else Var(self.aval()) for _ in range(n_out)
        ]
        env.extend(v for v in outvars if not isinstance(v, DropVar))
        return new_jaxpr_eqn(invars, outvars, primitive, params)

    def jaxpr(self, depth=0, n_in=None, n_out=None, drops=True):
        r = self.r
        constvars = [Var(self.aval()) for _ in range(r.choice([0, 0, 1, 2]))]
        n_in = r.randint(0, 3) if n_in is None else n_in
        drop = 0.05 if drops else 0
        invars = [
            DropVar(self.aval()) if r.random() < drop else Var(self.aval()) for _ in range(n_in)
        ]
        env = [v for v in constvars + invars if not isinstance(v, DropVar)]
        n_eqns = r.choice([0, 1, 2, 3, 5, 8, 12]) if depth < 3 else r.randint(0, 2)
        eqns = [self.eqn(env, depth, drops) for _ in range(n_eqns)]
        n_out = r.randint(0, 3) if n_out is None else n_out
        outvars = [self.atom(env) for _ in range(n_out)]
        return Jaxpr(constvars, invars, outvars, eqns)

    def top(self):
        jaxpr = self.jaxpr()
        # The printer writes '_' for top-level outputs that nothing reads; those read
        # back as DropVars, so make them DropVars here.
        used = {id(x) for x in jaxpr.outvars}
        eqns = []
        for eqn in reversed(jaxpr.eqns):
            outs = [v if id(v) in used else DropVar(v.aval) for v in eqn.outvars]
            eqns.append(eqn.replace(outvars=outs))
            used.update(id(x) for x in eqn.invars)
        return jaxpr.replace(eqns=eqns[::-1])


@pytest.mark.parametrize("seed", range(300))
def test_parse_of_print_is_identity(seed):
    gen = RandomJaxprs(seed, weak_types=seed % 3 == 0)
    jaxpr = gen.top()
    options = {"width": random.Random(seed).choice([80, 80, 40, 120, 1000])}
    if gen.weak_types:
        options["print_weak_types"] = True
    text = pp_jaxpr(jaxpr, **options)
    parsed = parse_jaxpr(text, registry=PROP)
    assert parsed == jaxpr, text
    assert pp_jaxpr(parsed, **options) == text


def test_the_random_jaxprs_cover_what_they_should():
    texts = [pp_jaxpr(RandomJaxprs(seed, seed % 3 == 0).top()) for seed in range(300)]
    joined = "\n".join(texts)
    for piece in (
        "let ",
        "_:",
        ":Tok",
        "key<fry>",
        "prop_jit[",
        "prop_cond[",
        "branches=(",
        "body={ lambda",
        "nan:",
        "-inf:",
        "-0.0:",
        "True:bool[]",
        "(nan+",
        ":u64[]",
        ":i4[]",
        ":f8_e4m3fn[]",
        "frozenset({",
        "dtype('",
        "np.int64(",
        "x={}",
        "Precision.HIGHEST",
        "\n    effect",
        "; effect",
        "<lambda>",
        "scatter-mul",
    ):
        assert piece in joined, piece
    assert any(t.startswith("{ lambda ; ") and " let\n" in t for t in texts)
    assert any("\n" not in t for t in texts)
    assert max(t.count("{ lambda") for t in texts) >= 4


# ------------------------------------------------------------------ texts recorded from JAX 0.10.2

MLP_GRAD = """\
{ lambda ; a:f32[8] b:f32[3] c:f32[4,8] d:f32[8,3] e:f32[2,4] f:f32[2,3]. let
    g:f32[2,8] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] e c
    h:f32[1,8] = broadcast_in_dim[broadcast_dimensions=(1,)] a
    i:f32[2,8] = add g h
    j:f32[2,8] = tanh i
    k:f32[2,8] = sub 1.0:f32[] j
    l:f32[2,3] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] j d
    m:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    n:f32[2,3] = add l m
    o:f32[2,3] p:f32[2,3] q:f32[2,1] = jit[
      name=log_softmax
      jaxpr={ lambda ; n:f32[2,3]. let
          r:f32[2] = reduce_max[axes=(1,)] n
          s:f32[2] = max -inf:f32[] r
          t:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] s
          u:f32[2,1] = stop_gradient t
          v:f32[2,3] = sub n u
          p:f32[2,3] = exp v
          w:f32[2] = reduce_sum[axes=(1,) out_sharding=None] p
          q:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] w
          x:f32[2,1] = log q
          o:f32[2,3] = sub v x
        in (o, p, q) }
    ] n
    y:f32[2,3] = mul o f
    z:f32[2] = reduce_sum[axes=(1,) out_sharding=None] y
    ba:f32[] = reduce_sum[axes=(0,) out_sharding=None] z
    bb:f32[] = div ba 2.0:f32[]
    _:f32[] = neg bb
    bc:f32[] = neg 1.0:f32[]
    bd:f32[] = div bc 2.0:f32[]
    be:f32[2] = broadcast_in_dim bd
    bf:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(0),)] be
    bg:f32[2,3] = mul bf f
    bh:f32[2,3] = jit[
      name=log_softmax
      jaxpr={ lambda ; p:f32[2,3] q:f32[2,1] bg:f32[2,3]. let
          bi:f32[2,3] = neg bg
          bj:f32[2] = reduce_sum[axes=(1,) out_sharding=None] bi
          bk:f32[2,1] = reshape[dimensions=None new_sizes=(2, 1) sharding=None] bj
          bl:f32[2,1] = div bk q
          bm:f32[2] = reduce_sum[axes=(1,) out_sharding=None] bl
          bn:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(0),)] bm
          bo:f32[2,3] = mul bn p
          bh:f32[2,3] = add_any bg bo
        in (bh,) }
    ] p q bg
    bp:f32[3] = reduce_sum[axes=(0,) out_sharding=None] bh
    bq:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3) sharding=None] bp
    br:f32[3] = reduce_sum[axes=(0,) out_sharding=None] bq
    bs:f32[3,8] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] bh j
    bt:f32[8,3] = transpose[permutation=(1, 0)] bs
    bu:f32[2,8] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      preferred_element_type=float32
    ] bh d
    bv:f32[2,8] = mul bu k
    bw:f32[2,8] = mul bv j
    bx:f32[2,8] = add_any bv bw
    by:f32[8] = reduce_sum[axes=(0,) out_sharding=None] bx
    bz:f32[1,8] = reshape[dimensions=None new_sizes=(1, 8) sharding=None] by
    ca:f32[8] = reduce_sum[axes=(0,) out_sharding=None] bz
    cb:f32[8,4] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] bx e
    cc:f32[4,8] = transpose[permutation=(1, 0)] cb
  in (ca, br, cc, bt) }"""


SCAN = """\
{ lambda ; a:f32[] b:f32[5]. let
    c:f32[] d:f32[5] = scan[
      jaxpr={ lambda ; e:f32[] f:f32[]. let
          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e
          h:f32[] = add g f
          i:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e
          j:f32[] = mul i f
        in (h, j) }
      length=5
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] a b
  in (c, d) }"""


SCAN_REVERSE_CONSTS = """\
{ lambda a:f32[3]; b:f32[3] c:f32[4,3]. let
    d:f32[3] e:f32[4] = scan[
      jaxpr={ lambda ; f:f32[3] g:f32[3] h:f32[3]. let
          i:f32[3] = mul g f
          j:f32[3] = add i h
          k:f32[] = reduce_sum[axes=(0,) out_sharding=None] g
        in (j, k) }
      length=4
      num_carry=1
      num_consts=1
      reverse=True
      unroll=1
    ] a b c
  in (d, e) }"""


COND = """\
{ lambda ; a:bool[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = cos e in (f,) }
        { lambda ; g:f32[]. let h:f32[] = sin g in (h,) }
      )
    ] c b
  in (d,) }"""


SWITCH = """\
{ lambda ; a:i32[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:i32[] = clamp 0:i32[] c 2:i32[]
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[]. let g:f32[] = sin f in (g,) }
        { lambda ; h:f32[]. let i:f32[] = cos h in (i,) }
        { lambda ; j:f32[]. let  in (j,) }
      )
    ] d b
  in (e,) }"""


WHILE = """\
{ lambda ; a:i32[]. let
    b:i32[] = while[
      body_jaxpr={ lambda ; c:i32[]. let d:i32[] = add c 1:i32[] in (d,) }
      body_nconsts=0
      cond_jaxpr={ lambda ; e:i32[]. let f:bool[] = lt e 10:i32[] in (f,) }
      cond_nconsts=0
    ] a
  in (b,) }"""


WHILE_CONSTS = """\
{ lambda a:f32[3]; b:f32[3] c:i32[]. let
    d:i32[] e:f32[3] = while[
      body_jaxpr={ lambda ; f:f32[3] g:i32[] h:f32[3]. let
          i:i32[] = add g 1:i32[]
          j:f32[3] = mul h f
        in (i, j) }
      body_nconsts=1
      cond_jaxpr={ lambda ; k:i32[] l:i32[] m:f32[3]. let
          n:bool[] = lt l k
        in (n,) }
      cond_nconsts=1
    ] c a 0:i32[] b
  in (d, e) }"""


FORI_STATIC = """\
{ lambda ; a:f32[]. let
    _:i32[] b:f32[] = scan[
      jaxpr={ lambda ; c:i32[] d:f32[]. let
          e:i32[] = add c 1:i32[]
          f:f32[] = mul d 2.0:f32[]
          g:f32[] = convert_element_type[new_dtype=float32 weak_type=True] c
          h:f32[] = add f g
        in (e, h) }
      length=10
      num_carry=2
      num_consts=0
      reverse=False
      unroll=1
    ] 0:i32[] a
  in (b,) }"""


FORI_DYNAMIC = """\
{ lambda ; a:f32[] b:i32[]. let
    _:i32[] _:i32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:i32[] e:i32[] f:f32[]. let
          g:i32[] = add d 1:i32[]
          h:f32[] = mul f 2.0:f32[]
          i:f32[] = convert_element_type[new_dtype=float32 weak_type=True] d
          j:f32[] = add h i
        in (g, e, j) }
      body_nconsts=0
      cond_jaxpr={ lambda ; k:i32[] l:i32[] m:f32[]. let
          n:bool[] = lt k l
        in (n,) }
      cond_nconsts=0
    ] 0:i32[] b a
  in (c,) }"""


JIT_SAME_ARG_TWICE = """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[] d:f32[]. let b:f32[] = add a d in (b, a) }
    ] a a
  in (b, c) }"""


SHARED_JIT = """\
let sin = { lambda ; a:f32[]. let b:f32[] = sin a in (b,) } in
{ lambda ; c:f32[]. let
    d:f32[] = jit[
      name=k
      jaxpr={ lambda ; c:f32[]. let
          e:f32[] = jit[name=sin jaxpr=sin] c
          d:f32[] = jit[name=sin jaxpr=sin] e
        in (d,) }
    ] c
    f:f32[] = jit[name=sin jaxpr=sin] c
    g:f32[] = add d f
  in (g,) }"""


SHARED_FORWARD = """\
let f = { lambda ; a:f32[]. let
    b:f32[] = jit[name=g jaxpr=g] a
    c:f32[] = add a 1.0:f32[]
    d:f32[] = jit[name=g jaxpr=g] c
    e:f32[] = add b d
  in (e,) } in
let g = { lambda ; h:f32[]. let i:f32[] = sin h in (i,) } in
{ lambda ; j:f32[]. let
    k:f32[] = jit[name=f jaxpr=f] j
    l:f32[] = mul j 2.0:f32[]
    m:f32[] = jit[name=f jaxpr=f] l
    n:f32[] = mul k m
  in (n,) }"""


SHARED_BRANCHES = """\
let jaxpr = { lambda ; a:f32[]. let
    b:f32[] = jit[name=sin jaxpr=sin] a
  in (b,) } in
let sin = { lambda ; c:f32[]. let d:f32[] = sin c in (d,) } in
{ lambda ; e:f32[]. let
    f:bool[] = gt e 0.0:f32[]
    g:i32[] = convert_element_type[new_dtype=int32 weak_type=False] f
    h:f32[] = cond[branches=(jaxpr jaxpr)] g e
  in (h,) }"""


RELU_SOFTPLUS = """\
{ lambda ; a:f32[3]. let
    b:f32[3] = custom_jvp_call[
      name=relu
      call_jaxpr={ lambda ; c:f32[3]. let
          d:f32[3] = jit[
            name=relu
            jaxpr={ lambda ; c:f32[3]. let d:f32[3] = max c 0.0:f32[] in (d,) }
          ] c
        in (d,) }
      jvp=jvp
      symbolic_zeros=False
    ] a
    e:f32[3] = jit[
      name=softplus
      jaxpr={ lambda ; a:f32[3]. let
          e:f32[3] = custom_jvp_call[
            name=logaddexp
            call_jaxpr={ lambda ; f:f32[3] g:f32[]. let
                h:f32[3] = max f g
                i:f32[3] = sub f g
                j:bool[3] = ne i i
                k:f32[3] = add f g
                l:f32[3] = abs i
                m:f32[3] = neg l
                n:f32[3] = exp m
                o:f32[3] = log1p n
                p:f32[3] = add h o
                q:f32[3] = select_n j p k
              in (q,) }
            jvp=_logaddexp_jvp
            symbolic_zeros=False
          ] a 0.0:f32[]
        in (e,) }
    ] a
    r:f32[3] = add b e
  in (r,) }"""


GRAD_RELU = """\
{ lambda ; a:f32[3]. let
    b:f32[3] = custom_jvp_call[
      name=relu
      call_jaxpr={ lambda ; c:f32[3]. let
          d:f32[3] = jit[
            name=relu
            jaxpr={ lambda ; c:f32[3]. let d:f32[3] = max c 0.0:f32[] in (d,) }
          ] c
        in (d,) }
      jvp=jvp
      symbolic_zeros=False
    ] a
    e:bool[3] = gt a 0.0:f32[]
    _:f32[3] = broadcast_in_dim 0.0:f32[]
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] b
    f:f32[3] = broadcast_in_dim 1.0:f32[]
    g:f32[3] = broadcast_in_dim 0.0:f32[]
    h:f32[3] = select_n e g f
  in (h,) }"""


CUSTOM_VJP = """\
{ lambda ; a:f32[]. let
    b:f32[] = custom_vjp_call[
      name=cv
      bwd=<lambda>
      call_jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }
      fwd=<lambda>
      symbolic_zeros=False
    ] a
  in (b,) }"""


CHECKPOINT = """\
{ lambda ; a:f32[]. let
    b:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c; e:f32[] = sin d in (e,) }
      policy=None
      prevent_cse=True
    ] a
  in (b,) }"""


GRAD_CHECKPOINT = """\
{ lambda ; a:f32[]. let
    b:f32[] = sin a
    _:f32[] = sin b
    c:f32[] = remat2[
      differentiated=True
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = cos d
          h:f32[] = cos f
          i:f32[] = mul e h
          j:f32[] = mul i g
        in (j,) }
      policy=None
      prevent_cse=True
    ] a 1.0:f32[]
  in (c,) }"""


GATHER = """\
{ lambda ; a:f32[5,3] b:i32[2]. let
    c:bool[2] = lt b 0:i32[]
    d:i32[2] = add b 5:i32[]
    e:i32[2] = select_n c b d
    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[2,3] = gather[
      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
      fill_value=None
      indices_are_sorted=False
      mode=GatherScatterMode.PROMISE_IN_BOUNDS
      slice_sizes=(1, 3)
      unique_indices=False
    ] a f
  in (g,) }"""  # noqa: E501


SCATTER_ADD = """\
{ lambda ; a:f32[5,3] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = add b 5:i32[]
    e:i32[] = select_n c b d
    f:i32[] = convert_element_type[new_dtype=int32 weak_type=False] e
    g:i32[1] = broadcast_in_dim f
    h:i32[1] = broadcast_in_dim 1:i32[]
    i:i32[2] = concatenate[dimension=0] g h
    j:f32[5,3] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1), operand_batching_dims=(), scatter_indices_batching_dims=())
      indices_are_sorted=True
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=True
      update_consts=()
      update_jaxpr={ lambda ; k:f32[] l:f32[]. let m:f32[] = add k l in (m,) }
    ] a i 2.0:f32[]
  in (j,) }"""  # noqa: E501


RANDOM_NORMAL = """\
let _uniform = { lambda ; a:key<fry>[] b:f32[] c:f32[]. let
    d:f32[1] = broadcast_in_dim b
    e:f32[1] = broadcast_in_dim c
    f:u32[3] = random_bits[bit_width=32 shape=(3,)] a
    g:u32[3] = shift_right_logical f 9:u32[]
    h:u32[3] = or g 1065353216:u32[]
    i:f32[3] = bitcast_convert_type[new_dtype=float32] h
    j:f32[3] = sub i 1.0:f32[]
    k:f32[1] = sub e d
    l:f32[3] = mul j k
    m:f32[3] = add l d
    n:f32[3] = max d m
  in (n,) } in
{ lambda ; o:key<fry>[]. let
    p:f32[3] = jit[
      name=_normal
      jaxpr={ lambda ; o:key<fry>[]. let
          p:f32[3] = jit[
            name=_normal_real
            jaxpr={ lambda ; o:key<fry>[]. let
                q:f32[3] = jit[name=_uniform jaxpr=_uniform] o -0.9999999403953552:f32[]
                  1.0:f32[]
                r:f32[3] = erf_inv q
                p:f32[3] = mul 1.4142135381698608:f32[] r
              in (p,) }
          ] o
        in (p,) }
    ] o
  in (p,) }"""


RANDOM_UNIFORM_OLD_KEY = """\
let _uniform = { lambda ; a:key<fry>[] b:f32[] c:f32[]. let
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    f:f32[1] = broadcast_in_dim d
    g:f32[1] = broadcast_in_dim e
    h:u32[3] = random_bits[bit_width=32 shape=(3,)] a
    i:u32[3] = shift_right_logical h 9:u32[]
    j:u32[3] = or i 1065353216:u32[]
    k:f32[3] = bitcast_convert_type[new_dtype=float32] j
    l:f32[3] = sub k 1.0:f32[]
    m:f32[1] = sub g f
    n:f32[3] = mul l m
    o:f32[3] = add n f
    p:f32[3] = max f o
  in (p,) } in
{ lambda ; q:u32[2]. let
    r:key<fry>[] = random_wrap[impl=fry] q
    s:f32[3] = jit[name=_uniform jaxpr=_uniform] r 0.0:f32[] 1.0:f32[]
  in (s,) }"""


RANDOM_SPLIT = """\
{ lambda ; a:key<fry>[]. let
    b:key<fry>[2] = random_split[shape=(2,)] a
  in (b,) }"""


DEBUG_PRINT = """\
{ lambda ; a:f32[]. let
    debug_print[
      fmt=x={}
      has_placeholders=True
      in_tree=PyTreeDef(((*,), {}))
      logging_record=None
      np_printoptions=(('edgeitems', 3), ('threshold', 1000), ('floatmode', 'maxprec'), ('precision', 8), ('suppress', False), ('linewidth', 75), ('nanstr', 'nan'), ('infstr', 'inf'), ('sign', '-'), ('formatter', None), ('legacy', False), ('override_repr', None))
      ordered=False
      partitioned=False
      static_args=()
    ] a
  in (a,) }"""  # noqa: E501


DEBUG_PRINT_ORDERED = """\
{ lambda ; a:f32[]. let
    b:f32[] = add a 1.0:f32[]
    debug_print[
      fmt=v {x} and {y}
      has_placeholders=True
      in_tree=PyTreeDef(((), {'x': *, 'y': *}))
      logging_record=None
      np_printoptions=(('edgeitems', 3), ('threshold', 1000), ('floatmode', 'maxprec'), ('precision', 8), ('suppress', False), ('linewidth', 75), ('nanstr', 'nan'), ('infstr', 'inf'), ('sign', '-'), ('formatter', None), ('legacy', False), ('override_repr', None))
      ordered=True
      partitioned=False
      static_args=()
    ] a b
  in (a,) }"""  # noqa: E501


CONVERT = """\
{ lambda ; a:f32[3]. let
    b:i4[3] = convert_element_type[new_dtype=int4 weak_type=False] a
    c:bf16[3] = convert_element_type[new_dtype=bfloat16 weak_type=False] a
    d:f8_e4m3fn[3] = convert_element_type[
      new_dtype=float8_e4m3fn
      weak_type=False
    ] a
    e:u8[3] = convert_element_type[new_dtype=uint8 weak_type=False] a
  in (b, c, d, e) }"""


LITERALS = """\
{ lambda ; a:f32[3]. let
    b:f32[3] = add a inf:f32[]
    c:f32[3] = sub a inf:f32[]
    d:f32[3] = mul a nan:f32[]
    e:f32[3] = add a -0.0:f32[]
    f:f32[3] = mul a 9.999999747378752e-06:f32[]
    g:f32[3] = add a 1.0000000150474662e+30:f32[]
    h:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a
    i:i32[3] = add h 3:i32[]
    j:bool[3] = gt a 0.0:f32[]
  in (b, c, d, e, f, g, i, j) }"""


SMALL_FLOAT_LITERALS = """\
{ lambda ; a:f16[3] b:bf16[3]. let
    c:f16[3] = mul a 0.0999755859375:f16[]
    d:bf16[3] = mul b 0.10009765625:bf16[]
  in (c, d) }"""


COMPLEX_LITERAL = """\
{ lambda ; a:c64[3]. let b:c64[3] = mul a (1+2j):c64[] in (b,) }"""


BOOL_UINT_LITERALS = """\
{ lambda ; a:bool[3] b:u32[3]. let
    c:bool[3] = and a True:bool[]
    d:u32[3] = add b 7:u32[]
  in (c, d) }"""


TOP_CONST = """\
{ lambda a:f32[5]; b:f32[5]. let c:f32[5] = add b a in (c,) }"""


NESTED_CONST = """\
{ lambda ; a:f32[5]. let
    b:f32[5] = jit[
      name=<lambda>
      jaxpr={ lambda c:f32[5]; a:f32[5]. let b:f32[5] = mul a c in (b,) }
    ] a
  in (b,) }"""


TOKEN = """\
{ lambda ; a:f32[]. let _:Tok = create_token  in (a,) }"""


PURE_CALLBACK = """\
{ lambda ; a:f32[]. let
    b:f32[] = pure_callback[
      callback=_FlatCallback(callback_func=<function <lambda>.<locals>.<lambda> at 0xXXXXXXXXXXXX>, in_tree=PyTreeDef(((*,), {})))
      result_avals=(ShapedArray(float32[]),)
      sharding=None
      vmap_method=None
    ] a
  in (b,) }"""  # noqa: E501


DOT_PRECISION = """\
{ lambda ; a:f32[3,3]. let
    b:f32[3,3] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
    ] a a
  in (b,) }"""


CONV = """\
{ lambda ; a:f32[1,2,5,5] b:f32[3,2,3,3]. let
    c:f32[1,3,5,5] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
  in (c,) }"""  # noqa: E501


PAD = """\
{ lambda ; a:f32[5]. let
    b:f32[9] = jit[
      name=_pad
      jaxpr={ lambda ; a:f32[5] c:i32[]. let
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          b:f32[9] = pad[padding_config=((np.int64(2), np.int64(2), 0),)] a d
        in (b,) }
    ] a 0:i32[]
  in (b,) }"""


SPLIT = """\
{ lambda ; a:f32[6]. let
    b:f32[2] c:f32[2] d:f32[2] = split[
      axis=0
      sizes=(np.int64(2), np.int64(2), np.int64(2))
    ] a
  in (b, c, d) }"""


ARGSORT = """\
{ lambda ; a:f32[5]. let
    b:i32[5] = jit[
      name=argsort
      jaxpr={ lambda ; a:f32[5]. let
          c:i32[5] = iota[dimension=0 dtype=int32 shape=(5,) sharding=None] 
          d:f32[5] b:i32[5] = sort[dimension=0 is_stable=True num_keys=1] a c
        in (b,) }
    ] a
  in (b,) }"""  # noqa: W291


NO_EQUATIONS = """\
{ lambda ; a:f32[3]. let  in (a, 1.0:f32[], a) }"""


NO_INPUTS = """\
{ lambda ; . let  in (1.0:f32[],) }"""


JIT_LITERAL_OUT = """\
{ lambda ; a:f32[]. let
    b:f32[] c:i32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let  in (a, 2:i32[]) }
    ] a
  in (b, c) }"""


DONATE = """\
{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      donated_invars=(True,)
      jaxpr={ lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[] in (b,) }
    ] a
  in (b,) }"""


JIT_DROPPED_OUTPUTS = """\
{ lambda ; a:f32[]. let
    b:f32[] _:f32[] _:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          b:f32[] = add a 1.0:f32[]
          _:f32[] = mul a 2.0:f32[]
        in (b, _, a) }
    ] a
  in (b,) }"""


MAP = """\
{ lambda ; a:f32[4,2]. let
    b:f32[4,2] = scan[
      jaxpr={ lambda ; c:f32[2]. let d:f32[2] = sin c in (d,) }
      length=4
      num_carry=0
      num_consts=0
      reverse=False
      unroll=1
    ] a
  in (b,) }"""


# ------------------------------------------------------------------ every recorded text

ALL_TEXTS = {
    name: value
    for name, value in list(globals().items())
    if name.isupper()
    and not name.startswith("_")
    and isinstance(value, str)
    and value.startswith(("{ lambda", "let "))
}


@pytest.fixture
def all_texts():
    return list(ALL_TEXTS.items())


@pytest.mark.parametrize("name", sorted(ALL_TEXTS))
def test_recorded_texts_print_back_identically(name):
    text = ALL_TEXTS[name]
    jaxpr = parse(text)
    assert pp_jaxpr(jaxpr) == text
    assert parse(pp_jaxpr(jaxpr)) == jaxpr
    assert parse(text, unknown_primitives="create") == jaxpr
