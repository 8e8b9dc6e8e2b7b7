"""Symbolic dimension expressions, scopes and shape specifications
(``lamina.ir.shapes``), against the printing, decisions and errors recorded from
JAX 0.10.2's ``jax.export`` (``symbolic_shape``, ``_DimExpr``)."""

import re

import pytest

import lamina.ir.shapes.dim_expr as dim_expr
from lamina.ir import (
    DimExpr,
    InconclusiveDimensionOperation,
    IntOps,
    ShapedArray,
    SymbolicScope,
    is_constant_dim,
    is_symbolic_dim,
    max_dim,
    min_dim,
    solve_dim_vars,
    symbolic_shape,
)

b, n = symbolic_shape("b, n")

# expression -> str, recorded from JAX 0.10.2
PRINTED = [
    (b, "b"),
    (2 * n, "2*n"),
    (b + 1, "b + 1"),
    (1 + b, "b + 1"),
    (b - 1, "b - 1"),
    (1 - b, "- b + 1"),
    (-b, "- b"),
    (b * n, "b*n"),
    (n * b, "b*n"),
    (b * b, "b^2"),
    (b * n + 2 * b + 3, "b*n + 2*b + 3"),
    (b // 2, "floordiv(b, 2)"),
    (b % 2, "mod(b, 2)"),
    ((b + n) // 2, "floordiv(n + b, 2)"),
    ((2 * b) // 2, "b"),
    (b * 3, "3*b"),
    (n + b, "n + b"),
    (b * n * n, "b*n^2"),
    (max_dim(b, n), "max(b, n)"),
    (min_dim(b, n), "min(b, n)"),
    (max_dim(b, 3), "max(b, 3)"),
    (-2 * b + n, "n - 2*b"),
    (b // -2, "floordiv(b, - 2)"),
    ((b * n) // n, "b"),
    (b**2, "b^2"),
    (6 * b // 3, "2*b"),
    ((4 * b + 2) // 2, "2*b + 1"),
    ((4 * b + 1) // 2, "2*b"),
    (2 // b, "floordiv(2, b)"),
    (b // n, "floordiv(b, n)"),
    (b % n, "mod(b, n)"),
]


@pytest.mark.parametrize("expr, text", PRINTED, ids=[t for _, t in PRINTED])
def test_printing_as_jax(expr, text):
    assert isinstance(expr, DimExpr)
    assert str(expr) == repr(expr) == text


def test_constants_are_ints():
    # recorded from JAX 0.10.2: b - b and b * 0 are the int 0, (4*b+2) % 2 is 0
    for e in (b - b, b * 0, (4 * b + 2) % 2):
        assert type(e) is int and e == 0
    assert divmod(b, 2) == (b // 2, b % 2)
    assert not is_symbolic_dim(3) and is_symbolic_dim(b) and not is_symbolic_dim(b - b)
    assert is_constant_dim(3) and not is_constant_dim(b)


def test_parsing_as_jax():
    # recorded from JAX 0.10.2
    shape = symbolic_shape(
        "b, 2*n+1, floordiv(b, 3), mod(n, 4), max(b, n), min(b, 2), b*n, b^2, -b+10"
    )
    assert str(shape) == (
        "(b, 2*n + 1, floordiv(b, 3), mod(n, 4), max(b, n), min(b, 2), b*n, b^2, - b + 10)"
    )
    assert symbolic_shape("b, ...", like=(3, 4, 5))[1:] == (4, 5)
    assert symbolic_shape("b, _", like=(3, 4))[1:] == (4,)
    assert str(symbolic_shape("(b, n)")) == "(b, n)"
    assert symbolic_shape("") == ()
    assert symbolic_shape("3, b")[0] == 3
    assert symbolic_shape("-3, b")[0] == -3


def test_hashing_and_equality():
    assert hash(b + 1) == hash(1 + b) and b + 1 == 1 + b
    assert {b * n: 1}[n * b] == 1
    # recorded from JAX 0.10.2: equality is syntactic (False when undecided)
    assert (b == n, b != n, b == b, b == 1, b == 0) == (False, True, True, False, False)
    (other_b,) = symbolic_shape("b")
    assert b != other_b  # another scope


# (comparison, result) recorded from JAX 0.10.2; None: InconclusiveDimensionOperation
COMPARISONS = [
    (lambda: b >= 1, True),
    (lambda: b >= 2, None),
    (lambda: b + 1 > b, True),
    (lambda: b > n, None),
    (lambda: b < n, None),
    (lambda: max_dim(b, n) >= b, True),
    (lambda: b % 2 < 2, True),
    (lambda: b // 2 >= 0, True),
    (lambda: b >= 0, True),
    (lambda: b <= 0, False),
    (lambda: b < 0, False),
    (lambda: b <= b * n, None),
]


@pytest.mark.parametrize("i", range(len(COMPARISONS)))
def test_comparisons_as_jax(i):
    compare, expected = COMPARISONS[i]
    if expected is None:
        with pytest.raises(InconclusiveDimensionOperation):
            compare()
    else:
        assert compare() is expected


def test_inconclusive_message_as_jax():
    # recorded from JAX 0.10.2
    with pytest.raises(InconclusiveDimensionOperation) as e:
        b >= 2  # noqa: B015
    assert str(e.value) == (
        "Symbolic dimension comparison 'b' >= '2' is inconclusive.\n"
        "This error arises for comparison operations with shapes that\n"
        "are non-constant, and the result of the operation cannot be represented as\n"
        "a boolean value for all values of the symbolic dimensions involved.\n\n"
        "Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
        "#comparison-of-symbolic-dimensions-is-partially-supported\nfor more details.\n"
    )
    with pytest.raises(InconclusiveDimensionOperation, match=r"^Symbolic dimension 'b' used in a "):
        int(b)
    with pytest.raises(InconclusiveDimensionOperation, match=re.escape("'b + 1' < 'b*n'")):
        sorted([n * b, b + 1, 3, b])


def test_values_outside_tracing_as_jax():
    # recorded from JAX 0.10.2 (no layer computes values here)
    msg = "Evaluation rule for 'dim_as_value' is not implemented"

    saved, dim_expr._dim_as_value[0] = dim_expr._dim_as_value[0], None
    try:
        for f in (lambda: b / 2, lambda: b * 1.5, lambda: b + 1.5):
            with pytest.raises(NotImplementedError, match=msg):
                f()
    finally:
        dim_expr._dim_as_value[0] = saved
    with pytest.raises(AttributeError):
        b.__index__  # noqa: B018


def test_constraints_as_jax():
    bb, nn = symbolic_shape("b, n", constraints=("b >= 4", "n <= b", "max(n, 2) == n"))
    # recorded from JAX 0.10.2
    assert bb >= 3 and nn <= bb and bb - nn >= 0 and nn >= 2
    with pytest.raises(InconclusiveDimensionOperation) as e:
        bb >= 5  # noqa: B015
    text = str(e.value)
    assert text.startswith("Symbolic dimension comparison 'b' >= '5' is inconclusive.\n")
    assert re.search(
        r"\nUsing symbolic scope \d+ created at .*test_symbolic_dims.py:\d+:\d+ "
        r"\(test_constraints_as_jax\) with constraints:\n  b >= 4\n  n <= b\n"
        r"  max\(n, 2\) == n\nThis error arises",
        text,
    )
    assert max_dim(nn, 2) is nn or str(max_dim(nn, 2)) == "n"


def test_equality_constraint_rewrites():
    bb, nn = symbolic_shape("b, n", constraints=("b == 2*n",))
    assert str(bb) == "2*n" and bb // 2 == nn


def test_scope_errors_as_jax():
    (a,) = symbolic_shape("a")
    with pytest.raises(ValueError) as e:
        a + b
    assert re.fullmatch(
        r"Invalid mixing of symbolic scopes for linear combination\.\n"
        r"Expected  scope \d+ created at .*\n"
        r"and found for 'b' \(unknown\) scope \d+ created at .*\n"
        r"See https://docs.jax.dev/en/latest/export/shape_poly.html"
        r"#user-specified-symbolic-constraints\.",
        str(e.value),
    )
    with pytest.raises(ValueError, match="Cannot specify both a `scope` and `constraints`"):
        symbolic_shape("a", scope=SymbolicScope(), constraints=("a >= 2",))
    with pytest.raises(ValueError, match="should be a sequence of strings"):
        SymbolicScope("a >= 2")
    with pytest.raises(ValueError, match=r"^Unsatisfiable explicit constraint: 2 >= 3$"):
        SymbolicScope(["2 >= 3"])


# spec, constraints, message recorded from JAX 0.10.2
PARSE_ERRORS = [
    (
        "b, 2*",
        (),
        "syntax error in symbolic shape 'b, 2*' in dimension 1: expecting one of "
        "{NAME, MINUS, NUMBER} but found ENDMARKER. Parsed '', remaining ''.",
    ),
    (
        "b + (n",
        (),
        "syntax error in symbolic shape 'b + (n' in dimension 0: expecting one of "
        "{NAME, MINUS, NUMBER} but found LPAR. Parsed 'b + ', remaining '(n'.",
    ),
    (
        "b, 2.5",
        (),
        "syntax error in symbolic shape 'b, 2.5' in dimension 1: expecting integer, found "
        "2.5. Parsed 'b, ', remaining '2.5'.",
    ),
    ("b, n", ("b > 3",), "Constraint parsing error: must contain one of '==' or '>=' or '<='"),
]


@pytest.mark.parametrize("spec, constraints, message", PARSE_ERRORS)
def test_parse_errors_as_jax(spec, constraints, message):
    with pytest.raises(ValueError) as e:
        symbolic_shape(spec, constraints=constraints)
    assert str(e.value) == message


def test_like_mismatch_as_jax():
    with pytest.raises(ValueError) as e:
        symbolic_shape("3, b", like=(4, None))
    # recorded from JAX 0.10.2
    assert str(e.value) == (
        "syntax error in symbolic shape '3, b' in dimension 0: different size 3 for known "
        "dimension; like=(4, None). Parsed '3', remaining ', b'."
    )


def test_avals_hold_symbolic_dims():
    aval = ShapedArray((b, 2 * n), "float32")
    assert aval.str_short(short_dtypes=True) == "f32[b,2*n]"
    assert str(aval.size) == "2*b*n"
    assert aval == ShapedArray((b, 2 * n), "float32")


def test_evaluate():
    e = b * n + (b + 3) // 2 - max_dim(b, n) + b % n
    for bv, nv in [(1, 1), (5, 3), (7, 10)]:
        assert e.evaluate({"b": bv, "n": nv}) == bv * nv + (bv + 3) // 2 - max(bv, nv) + bv % nv


def _specs(spec, constraints=()):
    dims = symbolic_shape(spec, constraints=constraints)
    return [ShapedArray(dims, "float32")]


def test_solve_dim_vars_as_jax():
    avals = _specs("b, 2*n", ("b >= 2",))
    assert solve_dim_vars(avals, lambda i, j: (3, 8)[j], IntOps) == {"b": 3, "n": 4}
    tail = (
        "Using the following polymorphic shapes specifications: args[0].shape = (b, 2*n). "
        "Obtained dimension variables: 'b' = {b} from specification 'b' for dimension "
        "args[0].shape[0] (= {b}), {more}. Please see "
        "https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors "
        "for more details."
    )
    # recorded from JAX 0.10.2
    with pytest.raises(ValueError) as e:
        solve_dim_vars(avals, lambda i, j: (1, 4)[j], IntOps)
    more = "'n' = 2 from specification '2*n' for dimension args[0].shape[1] (= 4), "
    assert str(e.value) == (
        "Input shapes do not match the symbolic shape constraint b >= 2. Expected 'b - 2' to "
        "be greater or equal to 0, but found -1.  " + tail.format(b=1, more=more)
    )
    with pytest.raises(ValueError) as e:
        solve_dim_vars(avals, lambda i, j: (3, 3)[j], IntOps)
    assert str(e.value) == (
        "Input shapes do not match the polymorphic shapes specification. Division had "
        "remainder 1 when computing the value of 'n'. " + tail.format(b=3, more="")
    )


def test_solve_errors_as_jax():
    # recorded from JAX 0.10.2
    with pytest.raises(ValueError) as e:
        solve_dim_vars(_specs("m*k"), lambda i, j: 6, IntOps)
    assert str(e.value) == (
        "Cannot solve for values of dimension variables {'k', 'm'}. We can only solve linear "
        "uni-variate constraints. Using the following polymorphic shapes specifications: "
        "args[0].shape = (k*m,). Unprocessed specifications: 'k*m' for dimension size "
        "args[0].shape[0]. Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
        "#dimension-variables-must-be-solvable-from-the-input-shapes for more details."
    )
    with pytest.raises(ValueError) as e:
        solve_dim_vars(_specs("m + 3"), lambda i, j: 2, IntOps)
    assert str(e.value) == (
        "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 "
        "for dimension variable 'm'. Using the following polymorphic shapes specifications: "
        "args[0].shape = (m + 3,). Obtained dimension variables: 'm' = -1 from specification "
        "'m + 3' for dimension args[0].shape[0] (= 2), . Please see "
        "https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for "
        "more details."
    )
    (bb,) = symbolic_shape("b")
    avals = [ShapedArray((bb,), "float32"), ShapedArray((bb,), "float32")]
    with pytest.raises(ValueError) as e:
        solve_dim_vars(avals, lambda i, j: (2, 3)[i], IntOps)
    assert str(e.value) == (
        "Input shapes do not match the polymorphic shapes specification. Found inconsistency "
        "between dimension size args[1].shape[0] (= 3) and the specification 'b' (= 2). Using "
        "the following polymorphic shapes specifications: args[0].shape = (b,),args[1].shape "
        "= (b,). Obtained dimension variables: 'b' = 2 from specification 'b' for dimension "
        "args[0].shape[0] (= 2), . Please see https://docs.jax.dev/en/latest/export/"
        "shape_poly.html#shape-assertion-errors for more details."
    )
