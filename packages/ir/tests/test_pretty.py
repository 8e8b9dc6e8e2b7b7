"""The Jaxpr printer against text recorded from JAX 0.10.2.

Each test builds, with the core API, the Jaxpr that ``jax.make_jaxpr`` gives for a small
program (shown in the test's docstring) and checks that it prints as JAX printed it.
The ``Scope`` helper below wires equations together from strings such as
``"b:f32[5] = mul a 2.0:f32[]"``; its names only connect variables, the printer chooses
the printed names itself.
"""

from __future__ import annotations

import enum
import itertools
from collections import namedtuple

import numpy as np
import pytest

from lamina.ir import dtypes
from lamina.ir.core import pretty_doc as pd
from lamina.ir.core.avals import ShapedArray, abstract_token
from lamina.ir.core.jaxpr import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    Literal,
    PpContext,
    SourceInfo,
    Var,
    new_jaxpr_eqn,
    pp_eqn,
    pp_jaxpr,
)
from lamina.ir.core.primitives import Primitive, PrimitiveRegistry, pp_param_rules
from lamina.ir.effects import Effect

# ------------------------------------------------------------------ test helpers

REGISTRY = PrimitiveRegistry()  # keeps these primitives out of the default registry


def prim(name: str) -> Primitive:
    return REGISTRY.lookup(name) or Primitive(name, registry=REGISTRY)


def aval(text: str):
    """``f32[5,3]``, ``~f32[]`` (weak type) or ``Tok``."""
    if text == "Tok":
        return abstract_token
    weak = text.startswith("~")
    name, dims = text.lstrip("~")[:-1].split("[")
    shape = tuple(int(d) for d in dims.split(",") if d)
    return ShapedArray(shape, dtypes.dtype_from_short_name(name), weak_type=weak)


def literal(token: str) -> Literal:
    """``2.0:f32[]``. JAX keeps a weak-typed literal's Python value and stores others as
    scalars of their dtype; so do we."""
    text, _, type_text = token.rpartition(":")
    a = aval(type_text)
    if text in ("True", "False"):
        val = text == "True"
    else:
        for convert in (int, float, complex):
            try:
                val = convert(text)
                break
            except ValueError:
                pass
    return Literal(val if a.weak_type else np.asarray(val, a.dtype)[()], a)


class Scope:
    """Builds one Jaxpr from binders and equations written as JAX prints them."""

    def __init__(self, invars: str = "", consts: str = ""):
        self.env: dict[str, Var] = {}
        self.constvars = self._bind(consts)
        self.invars = self._bind(invars)
        self.eqns = []

    def _bind(self, spec: str) -> list[Var]:
        out = []
        for token in spec.split():
            name, _, type_text = token.partition(":")
            v = DropVar(aval(type_text)) if name == "_" else Var(aval(type_text))
            self.env[name] = v
            out.append(v)
        return out

    def _atoms(self, spec: str) -> list:
        return [literal(t) if ":" in t else self.env[t] for t in spec.split()]

    def eqn(self, spec: str, *, eqn_effects=frozenset(), source_info=None, **params):
        lhs, _, rhs = spec.rpartition(" = ")
        name, _, args = rhs.partition(" ")
        invars = self._atoms(args)
        eqn = new_jaxpr_eqn(invars, self._bind(lhs), prim(name), params, eqn_effects, source_info)
        self.eqns.append(eqn)
        return eqn

    def done(self, outvars: str, effects=frozenset()) -> Jaxpr:
        return Jaxpr(self.constvars, self.invars, self._atoms(outvars), self.eqns, effects)


# Stand-ins for JAX objects that appear in params; each prints as JAX's does.
class Unspecified:
    def __str__(self):
        return "UnspecifiedValue"


class EmptyMesh:
    empty = True

    def __str__(self):
        return "Mesh()"


UNSPECIFIED = Unspecified()
EMPTY_MESH = EmptyMesh()
DebugInfo = namedtuple("DebugInfo", "func_name")
Frame = namedtuple("Frame", "file_name function_name start_line start_column")


class GatherScatterMode(enum.Enum):
    CLIP = 0
    FILL_OR_DROP = 1
    PROMISE_IN_BOUNDS = 2


class GatherDimensionNumbers(namedtuple("GatherDimensionNumbers", "offset_dims collapsed")):
    def __str__(self):
        return (
            f"GatherDimensionNumbers(offset_dims={self.offset_dims}, "
            f"collapsed_slice_dims={self.collapsed}, start_index_map=(0,), "
            "operand_batching_dims=(), start_indices_batching_dims=())"
        )


class PyTreeDef:
    def __str__(self):
        return "PyTreeDef(((*,), {}))"


def jit_params(jaxpr: Jaxpr, name: str) -> dict:
    n_in, n_out = len(jaxpr.invars), len(jaxpr.outvars)
    return dict(
        jaxpr=ClosedJaxpr(jaxpr, []),
        in_shardings=(UNSPECIFIED,) * n_in,
        out_shardings=(UNSPECIFIED,) * n_out,
        in_layouts=(None,) * n_in,
        out_layouts=(None,) * n_out,
        donated_invars=(False,) * n_in,
        ctx_mesh=EMPTY_MESH,
        name=name,
        keep_unused=False,
        inline=False,
        compiler_options_kvs=(),
    )


# The params JAX hides when printing these primitives, as lamina.lax will declare them.
def _hide_if(**tests):
    def rule(params):
        return {k: v for k, v in params.items() if not (k in tests and tests[k](v))}

    return rule


def _pp_jit(params):
    shown = _hide_if(
        inline=lambda v: True,
        donated_invars=lambda v: not any(v),
        in_shardings=lambda v: all(isinstance(s, Unspecified) for s in v),
        out_shardings=lambda v: all(isinstance(s, Unspecified) for s in v),
        in_layouts=lambda v: all(x is None for x in v),
        out_layouts=lambda v: all(x is None for x in v),
        keep_unused=lambda v: not v,
        ctx_mesh=lambda v: v.empty,
        compiler_options_kvs=lambda v: not v,
    )(params)
    name = shown.pop("name")
    return [("name", name), *((k, shown[k]) for k in sorted(shown))]


def _pp_dot_general(params):
    shown = {k: v for k, v in params.items() if v is not None and k != "out_sharding"}
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    shown["dimension_numbers"] = ((list(lc), list(rc)), (list(lb), list(rb)))
    return shown


def _pp_custom_call(params, *thunks):
    shown = dict(params)
    if not shown["num_consts"]:
        del shown["num_consts"]
    shown.pop("out_trees", None)
    for old, new in thunks:
        shown[new] = shown.pop(old).func_name
    name = params["call_jaxpr"].jaxpr.debug_info.func_name
    return [("name", name), *((k, shown[k]) for k in sorted(shown))]


for _name in ("sin", "cos", "tanh"):
    pp_param_rules[prim(_name)] = _hide_if(accuracy=lambda v: v is None)
pp_param_rules[prim("mul")] = _hide_if(out_dtype=lambda v: v is None)
pp_param_rules[prim("convert_element_type")] = _hide_if(sharding=lambda v: True)
pp_param_rules[prim("broadcast_in_dim")] = _hide_if(
    shape=lambda v: True, sharding=lambda v: True, broadcast_dimensions=lambda v: not v
)
pp_param_rules[prim("dot_general")] = _pp_dot_general
pp_param_rules[prim("jit")] = _pp_jit
pp_param_rules[prim("custom_jvp_call")] = lambda p: _pp_custom_call(p, ("jvp_jaxpr_fun", "jvp"))
pp_param_rules[prim("custom_vjp_call")] = lambda p: _pp_custom_call(
    p, ("fwd_jaxpr_thunk", "fwd"), ("bwd", "bwd")
)
prim("jit").def_shared_names("jaxpr")

F32 = np.dtype("float32")


def convert(s: Scope, spec: str, dtype: str):
    return s.eqn(spec, new_dtype=np.dtype(dtype), weak_type=False, sharding=None)


# ------------------------------------------------------------------ simple programs


def test_sin_mul_prints_on_one_line():
    """jnp.sin(x) * 2.0"""
    s = Scope("x:f32[5]")
    s.eqn("y:f32[5] = sin x", accuracy=None)
    s.eqn("z:f32[5] = mul y 2.0:f32[]", out_dtype=None)
    jaxpr = s.done("z")
    want = "{ lambda ; a:f32[5]. let b:f32[5] = sin a; c:f32[5] = mul b 2.0:f32[] in (c,) }"
    assert str(jaxpr) == want
    assert repr(jaxpr) == want
    assert str(ClosedJaxpr(jaxpr, [])) == want
    assert pp_jaxpr(jaxpr) == want


def test_width_decides_the_layout():
    s = Scope("a:f32[5]")
    s.eqn("b:f32[5] = sin a", accuracy=None)
    s.eqn("c:f32[5] = mul b 2.0:f32[]", out_dtype=None)
    jaxpr = s.done("c")
    # The whole line, closing brace included, is 79 columns.
    assert jaxpr.pretty_print(width=79) == str(jaxpr)
    assert jaxpr.pretty_print(width=78) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] = sin a\n"
        "    c:f32[5] = mul b 2.0:f32[]\n"
        "  in (c,) }"
    )


def test_chain_of_elementwise_ops():
    """jnp.sin(x) * y + jnp.cos(y) - x / 3.0"""
    s = Scope("a:f32[5] b:f32[5]")
    s.eqn("c:f32[5] = sin a", accuracy=None)
    s.eqn("d:f32[5] = mul c b", out_dtype=None)
    s.eqn("e:f32[5] = cos b", accuracy=None)
    s.eqn("f:f32[5] = add d e")
    s.eqn("g:f32[5] = div a 3.0:f32[]")
    s.eqn("h:f32[5] = sub f g")
    assert str(s.done("h")) == (
        "{ lambda ; a:f32[5] b:f32[5]. let\n"
        "    c:f32[5] = sin a\n"
        "    d:f32[5] = mul c b\n"
        "    e:f32[5] = cos b\n"
        "    f:f32[5] = add d e\n"
        "    g:f32[5] = div a 3.0:f32[]\n"
        "    h:f32[5] = sub f g\n"
        "  in (h,) }"
    )


def test_reduce_sum_params():
    """jnp.sum(x, axis=1)"""
    s = Scope("a:f32[3,4]")
    s.eqn("b:f32[3] = reduce_sum a", axes=(1,), out_sharding=None)
    assert str(s.done("b")) == (
        "{ lambda ; a:f32[3,4]. let\n"
        "    b:f32[3] = reduce_sum[axes=(1,) out_sharding=None] a\n"
        "  in (b,) }"
    )


def test_builder_names_do_not_matter():
    s = Scope("x:f32[5] w:f32[5]")
    s.eqn("q:f32[5] = add w x")
    assert str(s.done("q w")) == (
        "{ lambda ; a:f32[5] b:f32[5]. let c:f32[5] = add b a in (c, b) }"
    )


def test_constvars_before_the_semicolon():
    """x + c, with c a NumPy array of shape (3,)"""
    s = Scope("b:f32[3]", consts="a:f32[3]")
    s.eqn("c:f32[3] = add b a")
    assert str(s.done("c")) == "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }"


def test_literal_outputs_and_empty_body():
    """(x, jnp.nan)"""
    s = Scope("a:f32[5]")
    assert str(s.done("a nan:~f32[]")) == "{ lambda ; a:f32[5]. let  in (a, nan:f32[]) }"


def test_literal_formats():
    """x * np.float32(0.1), x + 1e30, ..., for f32, bf16, f16, u8, c64 and bool inputs."""
    s = Scope("a:f32[5] b:bf16[3] c:f16[3] d:u8[3] e:c64[3] f:bool[3]")
    s.eqn("g:f32[5] = mul a 0.1:f32[]", out_dtype=None)
    s.eqn("h:f32[5] = add a 1e30:f32[]")
    s.eqn("i:f32[5] = sub a 1e-30:f32[]")
    s.eqn("j:f32[5] = mul a 123456789.0:f32[]", out_dtype=None)
    s.eqn("k:bf16[3] = mul b 0.1:bf16[]", out_dtype=None)
    s.eqn("l:f16[3] = mul c 0.1:f16[]", out_dtype=None)
    s.eqn("m:u8[3] = mul d 3:u8[]", out_dtype=None)
    s.eqn("n:u8[3] = add d 255:u8[]")
    s.eqn("o:c64[3] = mul e (1+2j):c64[]", out_dtype=None)
    s.eqn("p:bool[3] = and f True:bool[]")
    s.eqn("q:f32[5] = mul a 0.1:f32[]", out_dtype=None)
    jaxpr = s.done("g h i j k l m n o p nan:~f32[] -inf:~f32[] -0.0:~f32[] q")
    assert str(jaxpr) == (
        "{ lambda ; a:f32[5] b:bf16[3] c:f16[3] d:u8[3] e:c64[3] f:bool[3]. let\n"
        "    g:f32[5] = mul a 0.10000000149011612:f32[]\n"
        "    h:f32[5] = add a 1.0000000150474662e+30:f32[]\n"
        "    i:f32[5] = sub a 1.0000000031710769e-30:f32[]\n"
        "    j:f32[5] = mul a 123456792.0:f32[]\n"
        "    k:bf16[3] = mul b 0.10009765625:bf16[]\n"
        "    l:f16[3] = mul c 0.0999755859375:f16[]\n"
        "    m:u8[3] = mul d 3:u8[]\n"
        "    n:u8[3] = add d 255:u8[]\n"
        "    o:c64[3] = mul e (1+2j):c64[]\n"
        "    p:bool[3] = and f True:bool[]\n"
        "    q:f32[5] = mul a 0.10000000149011612:f32[]\n"
        "  in (g, h, i, j, k, l, m, n, o, p, nan:f32[], -inf:f32[], -0.0:f32[], q) }"
    )


def test_weak_typed_literals_keep_their_python_value():
    """lambda x: x * 0.1 at x = 1.0 (a weak-typed f32 literal holds the float 0.1)"""
    s = Scope("a:~f32[]")
    s.eqn("b:~f32[] = mul a 0.1:~f32[]", out_dtype=None)
    jaxpr = s.done("b")
    assert str(jaxpr) == "{ lambda ; a:f32[]. let b:f32[] = mul a 0.1:f32[] in (b,) }"
    assert jaxpr.pretty_print(print_weak_types=True) == (
        "{ lambda ; a:~f32[]. let b:~f32[] = mul a 0.1:~f32[] in (b,) }"
    )


def test_float64_and_wide_integer_literals():
    """Under jax_enable_x64: x * 0.1 + 1e300 (f64), x * 2**40 (i64), x * 2**63 (u64)."""
    s = Scope("a:f64[3] b:i64[3] c:u64[3] d:c128[3]")
    s.eqn("e:f64[3] = mul a 0.1:f64[]", out_dtype=None)
    s.eqn("f:f64[3] = add e 1e300:f64[]")
    s.eqn("g:i64[3] = mul b 1099511627776:i64[]", out_dtype=None)
    s.eqn("h:u64[3] = mul c 9223372036854775808:u64[]", out_dtype=None)
    s.eqn("i:c128[3] = mul d (1e-05+2j):c128[]", out_dtype=None)
    assert str(s.done("f g h i")) == (
        "{ lambda ; a:f64[3] b:i64[3] c:u64[3] d:c128[3]. let\n"
        "    e:f64[3] = mul a 0.1:f64[]\n"
        "    f:f64[3] = add e 1e+300:f64[]\n"
        "    g:i64[3] = mul b 1099511627776:i64[]\n"
        "    h:u64[3] = mul c 9223372036854775808:u64[]\n"
        "    i:c128[3] = mul d (1e-05+2j):c128[]\n"
        "  in (f, g, h, i) }"
    )


def test_non_scalar_literal_prints_as_dots():
    a = Var(aval("f32[3]"))
    b = Var(aval("f32[3]"))
    lit = Literal(np.ones(3, F32), aval("f32[3]"))
    jaxpr = Jaxpr([], [a], [b], [new_jaxpr_eqn([a, lit], [b], prim("add"), {})])
    assert str(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = add a [...]:f32[3] in (b,) }"


def test_zero_input_equation_keeps_its_trailing_space():
    """lax.iota(jnp.int32, 5)"""
    s = Scope()
    eqn = s.eqn("a:i32[5] = iota", dtype=np.dtype("int32"), shape=(5,), dimension=0, sharding=None)
    assert str(s.done("a")) == (
        "{ lambda ; . let\n"
        "    a:i32[5] = iota[dimension=0 dtype=int32 shape=(5,) sharding=None] \n"
        "  in (a,) }"
    )
    # An equation's repr strips it, as JAX's does.
    assert repr(eqn) == "a:i32[5] = iota[dimension=0 dtype=int32 shape=(5,) sharding=None]"


def test_more_than_26_variables():
    """x = jnp.sin(x) thirty times"""
    s = Scope("v0:f32[5]")
    for i in range(30):
        s.eqn(f"v{i + 1}:f32[5] = sin v{i}", accuracy=None)
    names = [*"abcdefghijklmnopqrstuvwxyz", "ba", "bb", "bc", "bd", "be"]
    lines = [f"    {b}:f32[5] = sin {a}" for a, b in itertools.pairwise(names)]
    want = "{ lambda ; a:f32[5]. let\n" + "\n".join(lines) + "\n  in (be,) }"
    assert str(s.done("v30")) == want


@pytest.mark.parametrize(
    "n, name",
    [(0, "a"), (25, "z"), (26, "ba"), (27, "bb"), (51, "bz"), (52, "ca"), (675, "zz"),
     (676, "baa"), (701, "baz"), (702, "bba"), (18277, "bbaz"), (18278, "bbba")],
)  # fmt: skip
def test_fresh_names_count_like_jax(n, name):
    context = PpContext()
    vs = [Var(aval("f32[]")) for _ in range(n + 1)]
    assert [context.var_name(v) for v in vs][-1] == name


def test_multiple_outputs_and_unused_output():
    """lax.sort((x, x), num_keys=1), all results and only the first"""
    s = Scope("a:f32[5]")
    s.eqn("b:f32[5] c:f32[5] = sort a a", dimension=0, is_stable=True, num_keys=1)
    assert str(s.done("b c")) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] c:f32[5] = sort[dimension=0 is_stable=True num_keys=1] a a\n"
        "  in (b, c) }"
    )
    # An output nothing reads prints as _ (and takes no name from the counter).
    s = Scope("a:f32[5]")
    s.eqn("b:f32[5] c:f32[5] = sort a a", dimension=0, is_stable=True, num_keys=1)
    s.eqn("d:f32[5] = neg b")
    assert str(s.done("d")) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] _:f32[5] = sort[dimension=0 is_stable=True num_keys=1] a a\n"
        "    c:f32[5] = neg b\n"
        "  in (c,) }"
    )


def test_dropvar_binders():
    s = Scope("a:f32[5]")
    s.eqn("b:f32[5] _:f32[5] = sort a a", dimension=0, is_stable=True, num_keys=1)
    assert str(s.done("b")) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] _:f32[5] = sort[dimension=0 is_stable=True num_keys=1] a a\n"
        "  in (b,) }"
    )


def test_long_params_break_one_per_line():
    """x.astype(jnp.float8_e4m3fn)"""
    s = Scope("a:f32[5]")
    convert(s, "b:f8_e4m3fn[5] = convert_element_type a", "float8_e4m3fn")
    assert str(s.done("b")) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f8_e4m3fn[5] = convert_element_type[\n"
        "      new_dtype=float8_e4m3fn\n"
        "      weak_type=False\n"
        "    ] a\n"
        "  in (b,) }"
    )


def test_gather_params_print_with_str():
    """x[i] for x: f32[5,3], i: i32[2]"""
    s = Scope("a:f32[5,3] b:i32[2]")
    s.eqn("c:bool[2] = lt b 0:i32[]")
    s.eqn("d:i32[2] = add b 5:i32[]")
    s.eqn("e:i32[2] = select_n c b d")
    s.eqn("f:i32[2,1] = broadcast_in_dim e", shape=(2, 1), broadcast_dimensions=(0,), sharding=None)
    s.eqn(
        "g:f32[2,3] = gather a f",
        dimension_numbers=GatherDimensionNumbers((1,), (0,)),
        slice_sizes=(1, 3),
        unique_indices=False,
        indices_are_sorted=False,
        mode=GatherScatterMode.PROMISE_IN_BOUNDS,
        fill_value=None,
    )
    assert str(s.done("g")) == (
        "{ lambda ; a:f32[5,3] b:i32[2]. let\n"
        "    c:bool[2] = lt b 0:i32[]\n"
        "    d:i32[2] = add b 5:i32[]\n"
        "    e:i32[2] = select_n c b d\n"
        "    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e\n"
        "    g:f32[2,3] = gather[\n"
        "      dimension_numbers=GatherDimensionNumbers(offset_dims=(1,), "
        "collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(), "
        "start_indices_batching_dims=())\n"
        "      fill_value=None\n"
        "      indices_are_sorted=False\n"
        "      mode=GatherScatterMode.PROMISE_IN_BOUNDS\n"
        "      slice_sizes=(1, 3)\n"
        "      unique_indices=False\n"
        "    ] a f\n"
        "  in (g,) }"
    )


def test_param_values():
    def fn():
        return 0

    a = Var(aval("f32[3]"))
    b = Var(aval("f32[3]"))
    params = {
        "axes": frozenset({3, 1, 2}),
        "fn": fn,
        "s": "hello world",
        "f": 1.5,
        "n": None,
        "t": ((1, 2), (3,)),
        "dt": np.dtype("int32"),
        "e": (),
    }
    eqn = new_jaxpr_eqn([a], [b], prim("add"), params)
    # Recorded from JAX with a lambda for fn: its address prints as X's.
    assert str(Jaxpr([], [a], [b], [eqn])) == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[3] = add[\n"
        "      axes=frozenset({1, 2, 3})\n"
        "      dt=int32\n"
        "      e=()\n"
        "      f=1.5\n"
        f"      fn=<function {fn.__qualname__} at 0xXXXXXXXXXXXX>\n"
        "      n=None\n"
        "      s=hello world\n"
        "      t=((1, 2), (3,))\n"
        "    ] a\n"
        "  in (b,) }"
    )


def test_equation_without_outputs_and_effects():
    """jax.debug.print("x={}", x); return x  (and with ordered=True)"""

    class OrderedDebug(Effect):
        def __str__(self):
            return "OrderedDebug"

    def program(ordered: bool):
        s = Scope("a:f32[5]")
        s.eqn(
            "debug_print a",
            fmt="x={}",
            ordered=ordered,
            partitioned=False,
            in_tree=PyTreeDef(),
            static_args=(),
            np_printoptions=(
                ("edgeitems", 3),
                ("threshold", 1000),
                ("floatmode", "maxprec"),
                ("precision", 8),
                ("suppress", False),
                ("linewidth", 75),
                ("nanstr", "nan"),
                ("infstr", "inf"),
                ("sign", "-"),
                ("formatter", None),
                ("legacy", False),
                ("override_repr", None),
            ),
            has_placeholders=True,
            logging_record=None,
        )
        return s.done("a", effects=frozenset({OrderedDebug()}) if ordered else frozenset())

    def text(ordered):
        return (
            "{ lambda ; a:f32[5]. let\n"
            "    debug_print[\n"
            "      fmt=x={}\n"
            "      has_placeholders=True\n"
            "      in_tree=PyTreeDef(((*,), {}))\n"
            "      logging_record=None\n"
            "      np_printoptions=(('edgeitems', 3), ('threshold', 1000), ('floatmode', "
            "'maxprec'), ('precision', 8), ('suppress', False), ('linewidth', 75), "
            "('nanstr', 'nan'), ('infstr', 'inf'), ('sign', '-'), ('formatter', None), "
            "('legacy', False), ('override_repr', None))\n"
            f"      ordered={ordered}\n"
            "      partitioned=False\n"
            "      static_args=()\n"
            "    ] a\n"
        )

    assert str(program(False)) == text(False) + "  in (a,) }"
    assert str(program(True)) == text(True) + "  in (a,) }"
    assert program(True).pretty_print(print_effects=True) == (
        text(True) + "  in (a,) : { OrderedDebug } }"
    )


def test_print_effects_of_a_pure_jaxpr():
    s = Scope("a:f32[5]")
    s.eqn("b:f32[5] = sin a", accuracy=None)
    s.eqn("c:f32[5] = add b 1.0:f32[]")
    assert s.done("c").pretty_print(print_effects=True) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] = sin a\n"
        "    c:f32[5] = add b 1.0:f32[]\n"
        "  in (c,) : {  } }"
    )


def test_tokens():
    """(lax.create_token(), x)"""
    s = Scope("a:f32[5]")
    s.eqn("b:Tok = create_token")
    assert str(s.done("b a")) == "{ lambda ; a:f32[5]. let b:Tok = create_token  in (b, a) }"


# ------------------------------------------------------------------ nested jaxprs


def test_cond_with_two_branches():
    """lax.cond(p, lambda x: jnp.sin(x), lambda x: jnp.cos(x) + 1.0, x)"""
    false_branch = Scope("e:f32[5]")
    false_branch.eqn("f:f32[5] = cos e", accuracy=None)
    false_branch.eqn("g:f32[5] = add f 1.0:f32[]")
    true_branch = Scope("h:f32[5]")
    true_branch.eqn("i:f32[5] = sin h", accuracy=None)
    s = Scope("a:bool[] b:f32[5]")
    convert(s, "c:i32[] = convert_element_type a", "int32")
    branches = (
        ClosedJaxpr(false_branch.done("g"), []),
        ClosedJaxpr(true_branch.done("i"), []),
    )
    s.eqn("d:f32[5] = cond c b", branches=branches)
    jaxpr = s.done("d")
    assert str(jaxpr) == (
        "{ lambda ; a:bool[] b:f32[5]. let\n"
        "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
        "    d:f32[5] = cond[\n"
        "      branches=(\n"
        "        { lambda ; e:f32[5]. let\n"
        "            f:f32[5] = cos e\n"
        "            g:f32[5] = add f 1.0:f32[]\n"
        "          in (g,) }\n"
        "        { lambda ; h:f32[5]. let i:f32[5] = sin h in (i,) }\n"
        "      )\n"
        "    ] c b\n"
        "  in (d,) }"
    )
    assert jaxpr.pretty_print(print_shapes=False) == (
        "{ lambda ; a b. let\n"
        "    c = convert_element_type[new_dtype=int32 weak_type=False] a\n"
        "    d = cond[\n"
        "      branches=(\n"
        "        { lambda ; e. let f = cos e; g = add f 1.0:f32[] in (g,) }\n"
        "        { lambda ; h. let i = sin h in (i,) }\n"
        "      )\n"
        "    ] c b\n"
        "  in (d,) }"
    )
    assert jaxpr.pretty_print(width=40) == (
        "{ lambda ; a:bool[] b:f32[5]. let\n"
        "    c:i32[] = convert_element_type[\n"
        "      new_dtype=int32\n"
        "      weak_type=False\n"
        "    ] a\n"
        "    d:f32[5] = cond[\n"
        "      branches=(\n"
        "        { lambda ; e:f32[5]. let\n"
        "            f:f32[5] = cos e\n"
        "            g:f32[5] = add f 1.0:f32[]\n"
        "          in (g,) }\n"
        "        { lambda ; h:f32[5]. let\n"
        "            i:f32[5] = sin h\n"
        "          in (i,) }\n"
        "      )\n"
        "    ] c b\n"
        "  in (d,) }"
    )
    assert jaxpr.pretty_print(width=200) == (
        "{ lambda ; a:bool[] b:f32[5]. let\n"
        "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
        "    d:f32[5] = cond[branches=({ lambda ; e:f32[5]. let f:f32[5] = cos e; "
        "g:f32[5] = add f 1.0:f32[] in (g,) } { lambda ; h:f32[5]. let i:f32[5] = sin h "
        "in (i,) })] c b\n"
        "  in (d,) }"
    )
    # A lone equation names its variables afresh: outputs, then params, then inputs.
    assert repr(jaxpr.eqns[1]) == (
        "a:f32[5] = cond[\n"
        "  branches=(\n"
        "    { lambda ; b:f32[5]. let\n"
        "        c:f32[5] = cos b\n"
        "        d:f32[5] = add c 1.0:f32[]\n"
        "      in (d,) }\n"
        "    { lambda ; e:f32[5]. let f:f32[5] = sin e in (f,) }\n"
        "  )\n"
        "] g h"
    )


def test_switch_with_three_branches():
    """lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x)"""
    branches = []
    for op in ("sin", "cos", "tanh"):
        b = Scope("x:f32[5]")
        b.eqn(f"y:f32[5] = {op} x", accuracy=None)
        branches.append(ClosedJaxpr(b.done("y"), []))
    s = Scope("a:i32[] b:f32[5]")
    convert(s, "c:i32[] = convert_element_type a", "int32")
    s.eqn("d:i32[] = clamp 0:i32[] c 2:i32[]")
    s.eqn("e:f32[5] = cond d b", branches=tuple(branches))
    assert str(s.done("e")) == (
        "{ lambda ; a:i32[] b:f32[5]. let\n"
        "    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
        "    d:i32[] = clamp 0:i32[] c 2:i32[]\n"
        "    e:f32[5] = cond[\n"
        "      branches=(\n"
        "        { lambda ; f:f32[5]. let g:f32[5] = sin f in (g,) }\n"
        "        { lambda ; h:f32[5]. let i:f32[5] = cos h in (i,) }\n"
        "        { lambda ; j:f32[5]. let k:f32[5] = tanh j in (k,) }\n"
        "      )\n"
        "    ] d b\n"
        "  in (e,) }"
    )


def test_nested_jit_reuses_the_callers_names():
    """jax.jit(lambda y: jnp.sin(y) * 2.0)(x) + 1.0"""
    inner = Scope("y:f32[5]")
    inner.eqn("s:f32[5] = sin y", accuracy=None)
    inner.eqn("t:f32[5] = mul s 2.0:f32[]", out_dtype=None)
    s = Scope("a:f32[5]")
    s.eqn("b:f32[5] = jit a", **jit_params(inner.done("t"), "<lambda>"))
    s.eqn("d:f32[5] = add b 1.0:f32[]")
    assert str(s.done("d")) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; a:f32[5]. let\n"
        "          c:f32[5] = sin a\n"
        "          b:f32[5] = mul c 2.0:f32[]\n"
        "        in (b,) }\n"
        "    ] a\n"
        "    d:f32[5] = add b 1.0:f32[]\n"
        "  in (d,) }"
    )


def test_jit_inside_jit():
    """jax.jit(lambda y: jax.jit(lambda z: z * 2)(y) + 1)(x)"""
    innermost = Scope("z:f32[5]")
    innermost.eqn("w:f32[5] = mul z 2.0:f32[]", out_dtype=None)
    middle = Scope("y:f32[5]")
    middle.eqn("u:f32[5] = jit y", **jit_params(innermost.done("w"), "<lambda>"))
    middle.eqn("v:f32[5] = add u 1.0:f32[]")
    s = Scope("x:f32[5]")
    s.eqn("r:f32[5] = jit x", **jit_params(middle.done("v"), "<lambda>"))
    assert str(s.done("r")) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; a:f32[5]. let\n"
        "          c:f32[5] = jit[\n"
        "            name=<lambda>\n"
        "            jaxpr={ lambda ; a:f32[5]. let c:f32[5] = mul a 2.0:f32[] in (c,) }\n"
        "          ] a\n"
        "          b:f32[5] = add c 1.0:f32[]\n"
        "        in (b,) }\n"
        "    ] a\n"
        "  in (b,) }"
    )


def test_jit_name_sharing_edge_cases():
    """jax.jit(lambda d: d['a'] + d['b'])({'a': x, 'b': x}): an input passed twice lends
    its name once; jax.jit(two)(x)[0]: a dropped output lends _; a literal output."""
    inner = Scope("p:f32[5] q:f32[5]")
    inner.eqn("r:f32[5] = add p q")
    s = Scope("a:f32[5]")
    s.eqn("b:f32[5] = jit a a", **jit_params(inner.done("r"), "<lambda>"))
    assert str(s.done("b")) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; a:f32[5] c:f32[5]. let b:f32[5] = add a c in (b,) }\n"
        "    ] a a\n"
        "  in (b,) }"
    )
    two = Scope("x:f32[5]")
    two.eqn("y:f32[5] = sin x", accuracy=None)
    two.eqn("z:f32[5] = cos x", accuracy=None)
    s = Scope("a:f32[5]")
    s.eqn("b:f32[5] _:f32[5] = jit a", **jit_params(two.done("y z"), "two"))
    assert str(s.done("b")) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] _:f32[5] = jit[\n"
        "      name=two\n"
        "      jaxpr={ lambda ; a:f32[5]. let\n"
        "          b:f32[5] = sin a\n"
        "          _:f32[5] = cos a\n"
        "        in (b, _) }\n"
        "    ] a\n"
        "  in (b,) }"
    )
    lit = Scope("x:f32[5]")
    s = Scope("a:f32[5]")
    s.eqn(
        "b:f32[5] c:~f32[] d:f32[5] = jit a", **jit_params(lit.done("x 1.0:~f32[] x"), "<lambda>")
    )
    assert str(s.done("b c d")) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] c:f32[] d:f32[5] = jit[\n"
        "      name=<lambda>\n"
        "      jaxpr={ lambda ; a:f32[5]. let  in (a, 1.0:f32[], a) }\n"
        "    ] a\n"
        "  in (b, c, d) }"
    )


def test_other_sub_jaxprs_continue_the_counter():
    """jax.checkpoint(lambda y: jnp.sin(jnp.sin(y)))(x)"""
    body = Scope("x:f32[5]")
    body.eqn("y:f32[5] = sin x", accuracy=None)
    body.eqn("z:f32[5] = sin y", accuracy=None)
    s = Scope("a:f32[5]")
    s.eqn(
        "b:f32[5] = remat2 a",
        jaxpr=body.done("z"),
        prevent_cse=True,
        differentiated=False,
        policy=None,
    )
    assert str(s.done("b")) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] = remat2[\n"
        "      differentiated=False\n"
        "      jaxpr={ lambda ; c:f32[5]. let\n"
        "          d:f32[5] = sin c\n"
        "          e:f32[5] = sin d\n"
        "        in (e,) }\n"
        "      policy=None\n"
        "      prevent_cse=True\n"
        "    ] a\n"
        "  in (b,) }"
    )


def test_scan():
    """lax.scan(lambda c, x: (c + x, c * x), 0.0, xs)"""
    body = Scope("c:~f32[] x:f32[]")
    convert(body, "c1:f32[] = convert_element_type c", "float32")
    body.eqn("y:f32[] = add c1 x")
    convert(body, "c2:f32[] = convert_element_type c", "float32")
    body.eqn("z:f32[] = mul c2 x", out_dtype=None)
    s = Scope("a:~f32[] b:f32[5]")
    s.eqn(
        "c:f32[] d:f32[5] = scan a b",
        reverse=False,
        length=5,
        jaxpr=ClosedJaxpr(body.done("y z"), []),
        num_consts=0,
        num_carry=1,
        unroll=1,
    )
    assert str(s.done("c d")) == (
        "{ lambda ; a:f32[] b:f32[5]. let\n"
        "    c:f32[] d:f32[5] = scan[\n"
        "      jaxpr={ lambda ; e:f32[] f:f32[]. let\n"
        "          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e\n"
        "          h:f32[] = add g f\n"
        "          i:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e\n"
        "          j:f32[] = mul i f\n"
        "        in (h, j) }\n"
        "      length=5\n"
        "      num_carry=1\n"
        "      num_consts=0\n"
        "      reverse=False\n"
        "      unroll=1\n"
        "    ] a b\n"
        "  in (c, d) }"
    )


def test_while_loop():
    """lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))"""
    cond = Scope("i:~i32[] x:f32[5]")
    cond.eqn("p:~bool[] = lt i 10:~i32[]")
    body = Scope("i:~i32[] x:f32[5]")
    body.eqn("j:~i32[] = add i 1:~i32[]")
    body.eqn("y:f32[5] = mul x 2.0:f32[]", out_dtype=None)
    s = Scope("a:f32[5]")
    s.eqn(
        "b:~i32[] c:f32[5] = while 0:~i32[] a",
        cond_nconsts=0,
        cond_jaxpr=ClosedJaxpr(cond.done("p"), []),
        body_nconsts=0,
        body_jaxpr=ClosedJaxpr(body.done("j y"), []),
    )
    assert str(s.done("b c")) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:i32[] c:f32[5] = while[\n"
        "      body_jaxpr={ lambda ; d:i32[] e:f32[5]. let\n"
        "          f:i32[] = add d 1:i32[]\n"
        "          g:f32[5] = mul e 2.0:f32[]\n"
        "        in (f, g) }\n"
        "      body_nconsts=0\n"
        "      cond_jaxpr={ lambda ; h:i32[] i:f32[5]. let\n"
        "          j:bool[] = lt h 10:i32[]\n"
        "        in (j,) }\n"
        "      cond_nconsts=0\n"
        "    ] 0:i32[] a\n"
        "  in (b, c) }"
    )


def test_custom_jvp_and_custom_vjp_calls():
    """cj(x) * 2 and cv(x) * 2 for a jax.custom_jvp cj and a jax.custom_vjp cv of jnp.sin"""

    def program(primitive, **params):
        call = Scope("x:f32[5]")
        call.eqn("y:f32[5] = sin x", accuracy=None)
        call_jaxpr = call.done("y").replace(debug_info=DebugInfo(params.pop("name")))
        s = Scope("a:f32[5]")
        s.eqn(
            f"b:f32[5] = {primitive} a",
            call_jaxpr=ClosedJaxpr(call_jaxpr, []),
            num_consts=0,
            symbolic_zeros=False,
            **params,
        )
        s.eqn("e:f32[5] = mul b 2.0:f32[]", out_dtype=None)
        return s.done("e")

    jvp = program("custom_jvp_call", name="cj", jvp_jaxpr_fun=DebugInfo("cj_jvp"))
    assert str(jvp) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] = custom_jvp_call[\n"
        "      name=cj\n"
        "      call_jaxpr={ lambda ; c:f32[5]. let d:f32[5] = sin c in (d,) }\n"
        "      jvp=cj_jvp\n"
        "      symbolic_zeros=False\n"
        "    ] a\n"
        "    e:f32[5] = mul b 2.0:f32[]\n"
        "  in (e,) }"
    )
    vjp = program(
        "custom_vjp_call",
        name="cv",
        fwd_jaxpr_thunk=DebugInfo("cv_fwd"),
        bwd=DebugInfo("cv_bwd"),
        out_trees=lambda: None,
    )
    assert str(vjp) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] = custom_vjp_call[\n"
        "      name=cv\n"
        "      bwd=cv_bwd\n"
        "      call_jaxpr={ lambda ; c:f32[5]. let d:f32[5] = sin c in (d,) }\n"
        "      fwd=cv_fwd\n"
        "      symbolic_zeros=False\n"
        "    ] a\n"
        "    e:f32[5] = mul b 2.0:f32[]\n"
        "  in (e,) }"
    )


# ------------------------------------------------------------------ the MLP gradient


def mlp_grad_eqns(s: Scope) -> None:
    """The equations of jax.grad(mlp) for
    def mlp(params, x):
        for w, b in params:
            x = jnp.tanh(x @ w + b)
        return jnp.sum(x)
    with params [(f32[4,3], f32[3]), (f32[3,2], f32[2])] and x: f32[5,4]."""

    def dot(spec, contract):
        s.eqn(
            spec,
            dimension_numbers=(contract, ((), ())),
            precision=None,
            preferred_element_type=F32,
            out_sharding=None,
        )

    def bcast(spec, shape, dims):
        s.eqn(spec, shape=shape, broadcast_dimensions=dims, sharding=None)

    dot("f:f32[5,3] = dot_general e a", ((1,), (0,)))
    bcast("g:f32[1,3] = broadcast_in_dim b", (1, 3), (1,))
    s.eqn("h:f32[5,3] = add f g")
    s.eqn("i:f32[5,3] = tanh h", accuracy=None)
    s.eqn("j:f32[5,3] = sub 1.0:f32[] i")
    dot("k:f32[5,2] = dot_general i c", ((1,), (0,)))
    bcast("l:f32[1,2] = broadcast_in_dim d", (1, 2), (1,))
    s.eqn("m:f32[5,2] = add k l")
    s.eqn("n:f32[5,2] = tanh m", accuracy=None)
    s.eqn("o:f32[5,2] = sub 1.0:f32[] n")
    s.eqn("unused:f32[] = reduce_sum n", axes=(0, 1), out_sharding=None)
    bcast("p:f32[5,2] = broadcast_in_dim 1.0:f32[]", (5, 2), ())
    s.eqn("q:f32[5,2] = mul p o", out_dtype=None)
    s.eqn("r:f32[5,2] = mul q n", out_dtype=None)
    s.eqn("s:f32[5,2] = add_any q r")
    s.eqn("t:f32[2] = reduce_sum s", axes=(0,), out_sharding=None)
    s.eqn("u:f32[1,2] = reshape t", new_sizes=(1, 2), dimensions=None, sharding=None)
    s.eqn("v:f32[2] = reduce_sum u", axes=(0,), out_sharding=None)
    dot("w:f32[2,3] = dot_general s i", ((0,), (0,)))
    s.eqn("x:f32[3,2] = transpose w", permutation=(1, 0))
    dot("y:f32[5,3] = dot_general s c", ((1,), (1,)))
    s.eqn("z:f32[5,3] = mul y j", out_dtype=None)
    s.eqn("ba:f32[5,3] = mul z i", out_dtype=None)
    s.eqn("bb:f32[5,3] = add_any z ba")
    s.eqn("bc:f32[3] = reduce_sum bb", axes=(0,), out_sharding=None)
    s.eqn("bd:f32[1,3] = reshape bc", new_sizes=(1, 3), dimensions=None, sharding=None)
    s.eqn("be:f32[3] = reduce_sum bd", axes=(0,), out_sharding=None)
    dot("bf:f32[3,4] = dot_general bb e", ((0,), (0,)))
    s.eqn("bg:f32[4,3] = transpose bf", permutation=(1, 0))


MLP_GRAD_BODY = """\
    f:f32[5,3] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] e a
    g:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    h:f32[5,3] = add f g
    i:f32[5,3] = tanh h
    j:f32[5,3] = sub 1.0:f32[] i
    k:f32[5,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] i c
    l:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] d
    m:f32[5,2] = add k l
    n:f32[5,2] = tanh m
    o:f32[5,2] = sub 1.0:f32[] n
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] n
    p:f32[5,2] = broadcast_in_dim 1.0:f32[]
    q:f32[5,2] = mul p o
    r:f32[5,2] = mul q n
    s:f32[5,2] = add_any q r
    t:f32[2] = reduce_sum[axes=(0,) out_sharding=None] s
    u:f32[1,2] = reshape[dimensions=None new_sizes=(1, 2) sharding=None] t
    v:f32[2] = reduce_sum[axes=(0,) out_sharding=None] u
    w:f32[2,3] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] s i
    x:f32[3,2] = transpose[permutation=(1, 0)] w
    y:f32[5,3] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      preferred_element_type=float32
    ] s c
    z:f32[5,3] = mul y j
    ba:f32[5,3] = mul z i
    bb:f32[5,3] = add_any z ba
    bc:f32[3] = reduce_sum[axes=(0,) out_sharding=None] bb
    bd:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3) sharding=None] bc
    be:f32[3] = reduce_sum[axes=(0,) out_sharding=None] bd
    bf:f32[3,4] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] bb e
    bg:f32[4,3] = transpose[permutation=(1, 0)] bf
"""


def test_mlp_gradient():
    """jax.grad(mlp)(params, x)"""
    s = Scope("a:f32[4,3] b:f32[3] c:f32[3,2] d:f32[2] e:f32[5,4]")
    mlp_grad_eqns(s)
    assert str(s.done("bg be x v")) == (
        "{ lambda ; a:f32[4,3] b:f32[3] c:f32[3,2] d:f32[2] e:f32[5,4]. let\n"
        + MLP_GRAD_BODY
        + "  in (bg, be, x, v) }"
    )


def test_jitted_mlp_gradient_is_printed_up_front():
    """jax.make_jaxpr(jax.jit(jax.grad(mlp)))(params, x): a sub-jaxpr of more than ten
    equations is printed first as ``let name = ... in``; only the printed jaxpr's unused
    outputs are ``_``; the jit equation's invars break after column 80."""
    inner = Scope("a:f32[4,3] b:f32[3] c:f32[3,2] d:f32[2] e:f32[5,4]")
    mlp_grad_eqns(inner)
    s = Scope("a:f32[4,3] b:f32[3] c:f32[3,2] d:f32[2] e:f32[5,4]")
    params = jit_params(inner.done("bg be x v"), "mlp")
    s.eqn("r1:f32[4,3] r2:f32[3] r3:f32[3,2] r4:f32[2] = jit a b c d e", **params)
    assert str(s.done("r1 r2 r3 r4")) == (
        "let mlp = { lambda ; a:f32[4,3] b:f32[3] c:f32[3,2] d:f32[2] e:f32[5,4]. let\n"
        + JIT_MLP_GRAD_BODY
        + "  in (bh, bf, y, w) } in\n"
        "{ lambda ; bi:f32[4,3] bj:f32[3] bk:f32[3,2] bl:f32[2] bm:f32[5,4]. let\n"
        "    bn:f32[4,3] bo:f32[3] bp:f32[3,2] bq:f32[2] = jit[name=mlp jaxpr=mlp] bi bj bk\n"
        "      bl bm\n"
        "  in (bn, bo, bp, bq) }"
    )


JIT_MLP_GRAD_BODY = """\
    f:f32[5,3] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] e a
    g:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    h:f32[5,3] = add f g
    i:f32[5,3] = tanh h
    j:f32[5,3] = sub 1.0:f32[] i
    k:f32[5,2] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] i c
    l:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] d
    m:f32[5,2] = add k l
    n:f32[5,2] = tanh m
    o:f32[5,2] = sub 1.0:f32[] n
    p:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] n
    q:f32[5,2] = broadcast_in_dim 1.0:f32[]
    r:f32[5,2] = mul q o
    s:f32[5,2] = mul r n
    t:f32[5,2] = add_any r s
    u:f32[2] = reduce_sum[axes=(0,) out_sharding=None] t
    v:f32[1,2] = reshape[dimensions=None new_sizes=(1, 2) sharding=None] u
    w:f32[2] = reduce_sum[axes=(0,) out_sharding=None] v
    x:f32[2,3] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] t i
    y:f32[3,2] = transpose[permutation=(1, 0)] x
    z:f32[5,3] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      preferred_element_type=float32
    ] t c
    ba:f32[5,3] = mul z j
    bb:f32[5,3] = mul ba i
    bc:f32[5,3] = add_any ba bb
    bd:f32[3] = reduce_sum[axes=(0,) out_sharding=None] bc
    be:f32[1,3] = reshape[dimensions=None new_sizes=(1, 3) sharding=None] bd
    bf:f32[3] = reduce_sum[axes=(0,) out_sharding=None] be
    bg:f32[3,4] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] bc e
    bh:f32[4,3] = transpose[permutation=(1, 0)] bg
"""


# ------------------------------------------------------------------ shared jaxprs


def sin_jaxpr() -> Jaxpr:
    s = Scope("x:f32[5]")
    s.eqn("y:f32[5] = sin x", accuracy=None)
    return s.done("y")


def test_jaxpr_used_twice_is_printed_once():
    """g = jax.jit(jnp.sin); g(x) + g(x)"""
    params = jit_params(sin_jaxpr(), "sin")
    s = Scope("a:f32[5]")
    s.eqn("b:f32[5] = jit a", **params)
    s.eqn("c:f32[5] = jit a", **params)
    s.eqn("d:f32[5] = add b c")
    assert str(s.done("d")) == (
        "let sin = { lambda ; a:f32[5]. let b:f32[5] = sin a in (b,) } in\n"
        "{ lambda ; c:f32[5]. let\n"
        "    d:f32[5] = jit[name=sin jaxpr=sin] c\n"
        "    e:f32[5] = jit[name=sin jaxpr=sin] c\n"
        "    f:f32[5] = add d e\n"
        "  in (f,) }"
    )


def test_shared_jaxpr_names_are_not_variable_names():
    """ja = jax.jit(a); ja(x) + ja(x) + jax.jit(lambda y: y)(x) + jax.jit(lambda y: y)(x)
    for def a(x): return jnp.sin(x). The two lambdas are distinct, equal Jaxprs."""
    shared = jit_params(sin_jaxpr(), "a")

    def identity():
        s = Scope("y:f32[5]")
        return jit_params(s.done("y"), "<lambda>")

    s = Scope("a:f32[5]")
    s.eqn("b:f32[5] = jit a", **shared)
    s.eqn("c:f32[5] = jit a", **shared)
    s.eqn("d:f32[5] = add b c")
    s.eqn("e:f32[5] = jit a", **identity())
    s.eqn("f:f32[5] = add d e")
    s.eqn("g:f32[5] = jit a", **identity())
    s.eqn("h:f32[5] = add f g")
    assert str(s.done("h")) == (
        "let a = { lambda ; b:f32[5]. let c:f32[5] = sin b in (c,) } in\n"
        "{ lambda ; d:f32[5]. let\n"
        "    e:f32[5] = jit[name=a jaxpr=a] d\n"
        "    f:f32[5] = jit[name=a jaxpr=a] d\n"
        "    g:f32[5] = add e f\n"
        "    h:f32[5] = jit[name=<lambda> jaxpr={ lambda ; d:f32[5]. let  in (d,) }] d\n"
        "    i:f32[5] = add g h\n"
        "    j:f32[5] = jit[name=<lambda> jaxpr={ lambda ; d:f32[5]. let  in (d,) }] d\n"
        "    k:f32[5] = add i j\n"
        "  in (k,) }"
    )


def big_jaxpr() -> Jaxpr:
    s = Scope("x0:f32[5]")
    for i in range(11):
        s.eqn(f"x{i + 1}:f32[5] = sin x{i}", accuracy=None)
    return s.done("x11")


BIG_TEXT = "".join(
    f"    {b}:f32[5] = sin {a}\n" for a, b in zip("abcdefghijk", "bcdefghijkl", strict=True)
)


def test_big_branch_is_printed_up_front_as_jaxpr():
    """lax.cond(p, big, lambda x: x, x) where big applies jnp.sin eleven times"""
    ident = Scope("x:f32[5]").done("x")
    s = Scope("a:bool[] b:f32[5]")
    convert(s, "c:i32[] = convert_element_type a", "int32")
    s.eqn("d:f32[5] = cond c b", branches=(ClosedJaxpr(ident, []), ClosedJaxpr(big_jaxpr(), [])))
    assert str(s.done("d")) == (
        "let jaxpr = { lambda ; a:f32[5]. let\n" + BIG_TEXT + "  in (l,) } in\n"
        "{ lambda ; m:bool[] n:f32[5]. let\n"
        "    o:i32[] = convert_element_type[new_dtype=int32 weak_type=False] m\n"
        "    p:f32[5] = cond[branches=({ lambda ; q:f32[5]. let  in (q,) } jaxpr)] o n\n"
        "  in (p,) }"
    )


def test_shared_names_are_numbered_apart():
    """c = lax.cond(p, big, big2, x); ji(ji(c)) with ji = jax.jit(ident) where big and
    big2 apply jnp.sin eleven times and ident.__name__ == "<jaxpr>"."""
    ident = Scope("y:f32[5]").done("y")
    params = jit_params(ident, "<jaxpr>")
    s = Scope("p:bool[] x:f32[5]")
    convert(s, "i:i32[] = convert_element_type p", "int32")
    branches = (ClosedJaxpr(big_jaxpr(), []), ClosedJaxpr(big_jaxpr(), []))
    s.eqn("c:f32[5] = cond i x", branches=branches)
    s.eqn("d:f32[5] = jit c", **params)
    s.eqn("e:f32[5] = jit d", **params)
    big2_text = "".join(
        f"    {b}:f32[5] = sin {a}\n" for a, b in zip("mnopqrstuvw", "nopqrstuvwx", strict=True)
    )
    assert str(s.done("e")) == (
        "let jaxpr = { lambda ; a:f32[5]. let\n" + BIG_TEXT + "  in (l,) } in\n"
        "let jaxpr1 = { lambda ; m:f32[5]. let\n" + big2_text + "  in (x,) } in\n"
        "let jaxpr2 = { lambda ; y:f32[5]. let  in (y,) } in\n"
        "{ lambda ; z:bool[] ba:f32[5]. let\n"
        "    bb:i32[] = convert_element_type[new_dtype=int32 weak_type=False] z\n"
        "    bc:f32[5] = cond[branches=(jaxpr jaxpr1)] bb ba\n"
        "    bd:f32[5] = jit[name=<jaxpr> jaxpr=jaxpr2] bc\n"
        "    be:f32[5] = jit[name=<jaxpr> jaxpr=jaxpr2] bd\n"
        "  in (be,) }"
    )


# ------------------------------------------------------------------ settings


def test_source_info_and_name_stack_notes():
    """In prog.py:
    def f(x):
        with jax.named_scope("outer"):
            y = jnp.sin(x)
            with jax.named_scope("inner"):
                return jax.jit(g)(y)
    def g(z):
        return z * 2.0
    """

    def where(line, column, function, stack):
        return SourceInfo((Frame("/tmp/pp/src/prog.py", function, line, column),), stack)

    g = Scope("z:f32[5]")
    g.eqn("w:f32[5] = mul z 2.0:f32[]", out_dtype=None, source_info=where(8, 11, "g", ""))
    s = Scope("a:f32[5]")
    s.eqn("b:f32[5] = sin a", accuracy=None, source_info=where(4, 12, "f", "outer"))
    s.eqn(
        "c:f32[5] = jit b",
        source_info=where(6, 19, "f", "outer/inner"),
        **jit_params(g.done("w"), "g"),
    )
    jaxpr = s.done("c")
    assert jaxpr.pretty_print(source_info=True) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] = sin a                                                      "
        "# /tmp/pp/src/prog.py:4:12 (f)\n"
        "    c:f32[5] = jit[                                                       "
        "# /tmp/pp/src/prog.py:6:19 (f)\n"
        "      name=g\n"
        "      jaxpr={ lambda ; b:f32[5]. let c:f32[5] = mul b 2.0:f32[] in (c,) } "
        "# /tmp/pp/src/prog.py:8:11 (g)\n"
        "    ] b\n"
        "  in (c,) }"
    )
    assert jaxpr.pretty_print(name_stack=True) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] = sin a                                                      # [outer]\n"
        "    c:f32[5] = jit[                                                       "
        "# [outer/inner]\n"
        "      name=g\n"
        "      jaxpr={ lambda ; b:f32[5]. let c:f32[5] = mul b 2.0:f32[] in (c,) } # []\n"
        "    ] b\n"
        "  in (c,) }"
    )
    pad = " " * 96  # notes start past the longest line
    assert jaxpr.pretty_print(source_info=True, name_stack=True, width=100) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[5] = sin a" + " " * 76 + " # /tmp/pp/src/prog.py:4:12 (f)\n"
        f"{pad} # [outer]\n"
        "    c:f32[5] = jit[name=g jaxpr={ lambda ; b:f32[5]. let c:f32[5] = mul b 2.0:f32[] "
        "in (c,) }] b # /tmp/pp/src/prog.py:6:19 (f)\n"
        f"{pad} # [outer/inner]\n"
        f"{pad} # /tmp/pp/src/prog.py:8:11 (g)\n"
        f"{pad} # []\n"
        "  in (c,) }"
    )


def test_custom_pp_eqn_rules_off_prints_all_params_sorted():
    s = Scope("a:f32[5]")
    s.eqn("b:f32[1,5] = broadcast_in_dim a", shape=(1, 5), broadcast_dimensions=(1,), sharding=None)
    s.eqn("c:f32[1,5] = sin b", accuracy=None)
    jaxpr = s.done("c")
    assert str(jaxpr) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n"
        "    c:f32[1,5] = sin b\n"
        "  in (c,) }"
    )
    assert jaxpr.pretty_print(custom_pp_eqn_rules=False) == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:f32[1,5] = broadcast_in_dim[\n"
        "      broadcast_dimensions=(1,)\n"
        "      shape=(1, 5)\n"
        "      sharding=None\n"
        "    ] a\n"
        "    c:f32[1,5] = sin[accuracy=None] b\n"
        "  in (c,) }"
    )


def test_unknown_option_is_an_error():
    jaxpr = Scope("a:f32[]").done("a")
    with pytest.raises(TypeError, match=r"unknown printing option.*print_shape"):
        jaxpr.pretty_print(print_shape=False)
    # JAX's use_color is accepted; lamina never colors.
    assert jaxpr.pretty_print(use_color=False) == "{ lambda ; a:f32[]. let  in (a,) }"


def test_var_suffix_is_appended():
    a = Var(aval("f32[]"), suffix="'")
    b = Var(aval("f32[]"))
    eqn = new_jaxpr_eqn([a], [b], prim("neg"), {})
    assert str(Jaxpr([], [a], [b], [eqn])) == (
        "{ lambda ; a':f32[]. let b:f32[] = neg a' in (b,) }"
    )


def test_pp_eqn_with_a_shared_context():
    s = Scope("a:f32[5]")
    s.eqn("b:f32[5] = sin a", accuracy=None)
    e2 = s.eqn("c:f32[5] = mul b 2.0:f32[]", out_dtype=None)
    context = PpContext()
    for v in s.invars:
        context.var_name(v)
    assert pp_eqn(s.eqns[0], context) == "b:f32[5] = sin a"
    assert pp_eqn(e2, context) == "c:f32[5] = mul b 2.0:f32[]"
    assert pp_eqn(e2, print_shapes=False) == "a = mul b 2.0:f32[]"


# ------------------------------------------------------------------ the document layer


def test_a_group_measures_only_itself():
    doc = pd.concat([pd.group(pd.concat([pd.text("aaaa"), pd.brk(), pd.text("b")])),
                     pd.text("cccccccccccc")])  # fmt: skip
    assert doc.format(width=6) == "aaaa bcccccccccccc"


def test_nested_groups_break_outside_in():
    comma = pd.concat([pd.text(","), pd.brk()])
    g = pd.group(
        pd.nest(2, pd.concat([pd.text("g("), pd.brk(""), pd.text("gamma"), pd.brk(),
                              pd.text("delta"), pd.text(")")]))
    )  # fmt: skip
    doc = pd.group(
        pd.nest(2, pd.concat([pd.text("f("), pd.brk(""),
                              pd.join(comma, [pd.text("alpha"), pd.text("beta"), g]),
                              pd.text(")")]))
    )  # fmt: skip
    assert doc.format(width=80) == "f(alpha, beta, g(gamma delta))"
    assert doc.format(width=30) == "f(alpha, beta, g(gamma delta))"
    assert doc.format(width=29) == "f(\n  alpha,\n  beta,\n  g(gamma delta))"
    assert doc.format(width=12) == "f(\n  alpha,\n  beta,\n  g(\n    gamma\n    delta))"


def test_breaks_outside_groups_always_break():
    doc = pd.concat([pd.text("x"), pd.brk(), pd.text("y"), pd.nest(3, pd.brk()), pd.text("z")])
    assert doc.format(width=80) == "x\ny\n   z"


def test_annotations_align_past_the_longest_line():
    doc = pd.nest(
        2,
        pd.concat([pd.text("one", annotation="first"), pd.brk(), pd.text("three"),
                   pd.text("!", annotation="second"), pd.text("?", annotation="third"),
                   pd.brk(), pd.text("")]),
    )  # fmt: skip
    assert doc.format() == "one       # first\n  three!? # second\n          # third\n  "
