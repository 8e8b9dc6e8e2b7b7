"""Symbolic dimension expressions (shape polymorphism), with JAX 0.10.2's semantics.

An expression is a sum of terms with integer coefficients; a term is a product of
factors raised to positive powers; a factor is a dimension variable (``b``) or an
operation on expressions (``floordiv``, ``mod``, ``max``, ``min``). Expressions are kept
in a normal form (terms sorted, largest first, the constant last), so that equal
polynomials are equal objects, hash alike and print alike (``2*n + b*n - 1``). An
expression known to be a constant is a Python ``int``.

Comparisons are decided from bounds: each variable is at least 1, and the constraints
of the expressions' :class:`SymbolicScope` (``lamina.ir.shapes.scope``) narrow them; a
comparison the bounds cannot decide raises :class:`InconclusiveDimensionOperation`.
"""

from __future__ import annotations

import functools
import math
import operator

from lamina.ir import dtypes

__all__ = [
    "DimExpr",
    "InconclusiveDimensionOperation",
    "UnexpectedDimVar",
    "canonicalize_dim",
    "dim_constant_value",
    "is_constant_dim",
    "is_constant_shape",
    "is_symbolic_dim",
    "max_dim",
    "min_dim",
    "register_dim_as_value",
]

_DOCS = "https://docs.jax.dev/en/latest/export/shape_poly.html"


class InconclusiveDimensionOperation(Exception):
    """A comparison or operation on symbolic dimensions whose result depends on the
    values of the dimension variables."""

    _HELP = (
        "This error arises for comparison operations with shapes that\n"
        "are non-constant, and the result of the operation cannot be represented as\n"
        "a boolean value for all values of the symbolic dimensions involved.\n\n"
        f"Please see {_DOCS}#comparison-of-symbolic-dimensions-is-partially-supported\n"
        "for more details.\n"
    )

    def __init__(self, message: str):
        super().__init__(f"{message}\n{self._HELP}" if message else message)


class UnexpectedDimVar(Exception):
    """A dimension variable that the shapes of a function's arguments do not define."""

    def __init__(self, var: str, known):
        super().__init__(
            f"Encountered dimension variable '{var}' that is not appearing in the shapes of "
            "the function arguments.\nThe following dimension variables are appearing in the "
            f"shapes of the function arguments: {list(known)}.\nPlease see {_DOCS}"
            "#dimension-variables-must-be-solvable-from-the-input-shapes for more details."
        )


FLOORDIV, MOD, MAX, MIN = "floordiv", "mod", "max", "min"


def _cmp(a, b) -> int:
    return (a > b) - (a < b)


def _cmp_seq(xs, ys, elem) -> int:
    for x, y in zip(xs, ys, strict=False):
        if c := elem(x, y):
            return c
    return _cmp(len(xs), len(ys))


class Factor:
    """A variable, or an operation applied to expressions (ints become expressions)."""

    __slots__ = ("_hash", "operands", "operation", "size", "var")

    def __init__(self, var: str | None = None, operation: str | None = None, operands=()):
        self.var = var
        self.operation = operation
        self.operands = tuple(operands)
        self.size = 1 if var is not None else 1 + sum(o.size for o in self.operands)
        self._hash = hash((var, operation, self.operands))

    def cmp(self, other: Factor) -> int:
        """A total syntactic order (used to sort; unrelated to values)."""
        if c := _cmp(self.size, other.size):
            return c
        if self.var is not None:
            return _cmp(self.var, other.var)
        if c := _cmp(self.operation, other.operation):
            return c
        return _cmp_seq(self.operands, other.operands, lambda a, b: a.cmp(b))

    def __eq__(self, other):
        return isinstance(other, Factor) and self.cmp(other) == 0

    def __lt__(self, other):
        return self.cmp(other) < 0

    def __hash__(self):
        return self._hash

    def __str__(self):
        if self.var is not None:
            return self.var
        return f"{self.operation}({', '.join(str(o) for o in self.operands)})"

    __repr__ = __str__

    def variables(self) -> set[str]:
        if self.var is not None:
            return {self.var}
        return set().union(*(o.variables() for o in self.operands))


class Term:
    """A product of factors with positive exponents, factors sorted largest first;
    the empty product is the constant 1."""

    __slots__ = ("_hash", "factors", "size")

    def __init__(self, factors=()):
        self.factors = tuple(factors)
        self.size = sum(1 + k * f.size for f, k in self.factors)
        self._hash = hash(self.factors)

    is_constant = property(lambda self: not self.factors)

    def cmp(self, other: Term) -> int:
        if c := _cmp(self.size, other.size):
            return c
        return _cmp_seq(
            self.factors, other.factors, lambda a, b: a[0].cmp(b[0]) or _cmp(a[1], b[1])
        )

    def __eq__(self, other):
        return isinstance(other, Term) and self.cmp(other) == 0

    def __lt__(self, other):
        return self.cmp(other) < 0

    def __hash__(self):
        return self._hash

    def __str__(self):
        parts = sorted(self.factors, key=functools.cmp_to_key(lambda a, b: a[0].cmp(b[0])))
        return "*".join(str(f) if k == 1 else f"{f}^{k}" for f, k in parts)

    __repr__ = __str__

    def single_factor(self) -> Factor | None:
        if len(self.factors) == 1 and self.factors[0][1] == 1:
            return self.factors[0][0]
        return None

    def times(self, other: Term) -> Term:
        return Term(_combine(self.factors, 1, other.factors, 1))

    def divided_by(self, other: Term) -> Term | None:
        """The quotient when it is a term (``n^3*m / n`` is ``n^2*m``), else None."""
        factors = _combine(self.factors, 1, other.factors, -1)
        if any(k <= 0 for _, k in factors):
            return None
        return Term(factors)

    def variables(self) -> set[str]:
        return set().union(*(f.variables() for f, _ in self.factors))


_ONE = Term()


def _combine(pairs1, k1, pairs2, k2) -> list:
    """``pairs1 * k1 + pairs2 * k2`` for sequences of (key, count) sorted largest key
    first (terms with coefficients, or factors with exponents); zero counts drop."""
    acc: dict = {}
    for key, c in pairs1:
        acc[key] = acc.get(key, 0) + c * k1
    for key, c in pairs2:
        acc[key] = acc.get(key, 0) + c * k2
    return _sorted_pairs(acc)


def _sorted_pairs(counts: dict) -> list:
    pairs = [(key, c) for key, c in counts.items() if c != 0]
    pairs.sort(key=functools.cmp_to_key(lambda a, b: a[0].cmp(b[0])), reverse=True)
    return pairs


# The function that turns an expression into a traced integer value (``x.shape[0] *
# 1.5`` inside a traced function): registered by the layer that defines it.
_dim_as_value: list = [None]


def register_dim_as_value(fun) -> None:
    """Make ``fun(expr)`` the value of a dimension expression used as an array."""
    _dim_as_value[0] = fun


def _as_value(e):
    if _dim_as_value[0] is None:
        raise NotImplementedError(
            "Evaluation rule for 'dim_as_value' is not implemented. "
            "It seems that you are using shape polymorphism outside jax.export."
        )
    return _dim_as_value[0](e)


def _is_int(x) -> bool:
    if isinstance(x, bool | DimExpr):
        return isinstance(x, bool)
    try:
        operator.index(x)
        return True
    except TypeError:
        return False


class DimExpr:
    """A symbolic dimension: a polynomial over dimension variables and operations."""

    __array_priority__ = 1000
    __slots__ = ("_hash", "_scope", "size", "terms")
    # Marks the type for ``lamina.ir.ShapedArray`` (which accepts symbolic dims).
    is_symbolic_dim = True

    def __init__(self, terms, scope):
        # ``terms``: (Term, coefficient) pairs in normal form (see ``_normalized``).
        self.terms = tuple(terms) or ((_ONE, 0),)
        self._scope = scope
        self.size = sum(1 + abs(k) * t.size for t, k in self.terms)
        self._hash = None

    @property
    def scope(self):
        return self._scope

    # -- construction -------------------------------------------------------------

    @staticmethod
    def from_var(name: str, scope) -> int | DimExpr:
        return _normalized([(Term(((Factor(var=name), 1),)), 1)], scope)

    @staticmethod
    def from_operation(operation: str, *operands, scope) -> int | DimExpr:
        opnds = [_as_expr(o, operation, scope) for o in operands]
        return _normalized([(Term(((Factor(operation=operation, operands=opnds), 1),)), 1)], scope)

    # -- queries ------------------------------------------------------------------

    def constant_value(self) -> int | None:
        t, k = self.terms[0]
        return k if t.is_constant else None

    def variables(self) -> set[str]:
        return set().union(*(t.variables() for t, _ in self.terms))

    def single_var(self) -> str | None:
        """The variable's name if the expression is one variable, else None."""
        if len(self.terms) == 1 and self.terms[0][1] == 1:
            f = self.terms[0][0].single_factor()
            return None if f is None else f.var
        return None

    def cmp(self, other: DimExpr) -> int:
        if c := _cmp(self.size, other.size):
            return c
        return _cmp_seq(self.terms, other.terms, lambda a, b: a[0].cmp(b[0]) or _cmp(a[1], b[1]))

    # -- printing and hashing -----------------------------------------------------

    def __str__(self):
        out = []
        for t, k in self.terms:
            sign = "+" if k > 0 else "-"
            if t.is_constant:
                out.append(f"{sign} {abs(k)}" if k else "0")
            elif abs(k) == 1:
                out.append(f"{sign} {t}")
            else:
                out.append(f"{sign} {abs(k)}*{t}")
        text = " ".join(out)
        return text[2:] if text.startswith("+ ") else text

    __repr__ = __str__

    def __hash__(self):
        if self._hash is None:
            self._hash = hash((self.terms, self._scope))
        return self._hash

    # -- arithmetic ---------------------------------------------------------------

    def _linear(self, k1: int, other, k2: int):
        """``self * k1 + other * k2``, normalized."""
        other_terms = _as_expr(other, "linear combination", self._scope).terms
        return _normalized(_combine(self.terms, k1, other_terms, k2), self._scope)

    def __add__(self, other):
        if not _convertible(other):
            return _as_value(self) + other
        return self._linear(1, other, 1)

    def __radd__(self, other):
        if not _convertible(other):
            return other + _as_value(self)
        return self._linear(1, other, 1)

    def __sub__(self, other):
        if not _convertible(other):
            return _as_value(self) - other
        return self._linear(1, other, -1)

    def __rsub__(self, other):
        if not _convertible(other):
            return other - _as_value(self)
        return self._linear(-1, other, 1)

    def __neg__(self):
        return self._linear(-1, 0, 0)

    def __pos__(self):
        return self

    def __mul__(self, other):
        if not _convertible(other):
            return _as_value(self) * other
        other = _as_expr(other, "mul", self._scope)
        acc: dict = {}
        for t1, k1 in self.terms:
            for t2, k2 in other.terms:
                t = t1.times(t2)
                acc[t] = acc.get(t, 0) + k1 * k2
        return _normalized(_sorted_pairs(acc), self._scope)

    def __rmul__(self, other):
        if not _convertible(other):
            return other * _as_value(self)
        return self.__mul__(other)

    def __pow__(self, power, modulo=None):
        if modulo is not None:
            raise NotImplementedError("__pow__ modulo not implemented")
        if is_symbolic_dim(power):
            return _as_value(power).__rpow__(self)
        if power != int(power):
            raise ValueError(
                f"Symbolic dimension cannot be raised to non-integer powers: '{self}' ** '{power}'"
            )
        if power < 0:
            raise ValueError(
                f"Symbolic dimension cannot be raised to negative powers: '{self}' ** '{power}'"
            )
        return functools.reduce(operator.mul, [self] * int(power), 1)

    def __rpow__(self, other, modulo=None):
        return other ** _as_value(self)

    def __floordiv__(self, divisor):
        if not _convertible(divisor):
            return _as_value(self) // divisor
        return self._divmod(divisor)[0]

    def __rfloordiv__(self, other):
        if not _convertible(other):
            return other // _as_value(self)
        return _as_expr(other, "floordiv", self._scope)._divmod(self)[0]

    def __mod__(self, divisor):
        if not _convertible(divisor):
            return _as_value(self) % divisor
        return self._divmod(divisor)[1]

    def __rmod__(self, other):
        if not _convertible(other):
            return other % _as_value(self)
        return _as_expr(other, "mod", self._scope)._divmod(self)[1]

    def __divmod__(self, divisor):
        if not _convertible(divisor):
            return divmod(_as_value(self), divisor)
        return self._divmod(divisor)

    def __rdivmod__(self, other):
        if not _convertible(other):
            return divmod(other, _as_value(self))
        return _as_expr(other, "divmod", self._scope)._divmod(self)

    def __truediv__(self, divisor):
        return _as_value(self) / divisor

    def __rtruediv__(self, other):
        return other / _as_value(self)

    def _divmod(self, divisor):
        """Polynomial division: exact quotient and remainder when the leading terms
        divide (the remainder is 0 for a symbolic divisor), else ``floordiv``/``mod``
        factors."""
        quotient, rest = 0, self
        const_divisor = None if is_symbolic_dim(divisor) else operator.index(divisor)
        while is_symbolic_dim(rest):
            t, k = rest.terms[0]
            if const_divisor is None:
                dt, dk = divisor.terms[0]
                qt = t.divided_by(dt)
            else:
                qt, dk = t, const_divisor
            if qt is None or dk == 0 or k % dk != 0:
                return self._divmod_factors(divisor)
            q = _normalized([(qt, k // dk)], self._scope)
            quotient = quotient + q
            rest = rest - q * divisor
        if const_divisor is None:
            if rest != 0:
                return self._divmod_factors(divisor)
            return quotient, 0
        if const_divisor == 0:
            return self._divmod_factors(divisor)
        q, r = divmod(rest, const_divisor)
        return quotient + q, r

    def _divmod_factors(self, divisor):
        return (
            DimExpr.from_operation(FLOORDIV, self, divisor, scope=self._scope),
            DimExpr.from_operation(MOD, self, divisor, scope=self._scope),
        )

    def __int__(self):
        c = self.constant_value()
        if c is None:
            raise InconclusiveDimensionOperation(
                f"Symbolic dimension '{self}' used in a context that requires a constant"
            )
        return c

    # -- comparisons --------------------------------------------------------------

    def __eq__(self, other):
        if isinstance(other, DimExpr):
            if self._scope is not other._scope:
                return False
        elif not _is_int(other):
            return False
        diff = self - other
        return not is_symbolic_dim(diff) and diff == 0

    def __ne__(self, other):
        return not self.__eq__(other)

    def __ge__(self, other):
        return _geq(self, other, lambda: f"'{self}' >= '{other}'")

    def __le__(self, other):
        return _geq(other, self, lambda: f"'{self}' <= '{other}'")

    def __gt__(self, other):
        return not _geq(other, self, lambda: f"'{self}' > '{other}'")

    def __lt__(self, other):
        return not _geq(self, other, lambda: f"'{self}' < '{other}'")

    # -- max and min --------------------------------------------------------------

    def max(self, other, *, swapped=False):
        lb, ub = bounds(self - other)
        if lb >= 0:
            return self
        if ub <= 0:
            return other
        a, b = (other, self) if swapped else (self, other)
        return DimExpr.from_operation(MAX, a, b, scope=self._scope)

    def min(self, other, *, swapped=False):
        lb, ub = bounds(self - other)
        if lb >= 0:
            return other
        if ub <= 0:
            return self
        a, b = (other, self) if swapped else (self, other)
        return DimExpr.from_operation(MIN, a, b, scope=self._scope)

    # -- as a value -----------------------------------------------------------------

    def dimension_as_value(self):
        """The dimension as an integer scalar value of the traced computation."""
        return _as_value(self)

    __jax_array__ = dimension_as_value

    def evaluate(self, env: dict, maximum=max, minimum=min):
        """The value of the expression with the variables bound by ``env`` (ints, or
        anything with integer arithmetic and the given ``maximum``/``minimum``)."""
        return _evaluate(self, env, maximum, minimum)


def _convertible(x) -> bool:
    return isinstance(x, DimExpr) or _is_int(x)


def _as_expr(x, operation: str, scope) -> DimExpr:
    if isinstance(x, DimExpr):
        check_same_scope(scope, x, f"for {operation}")
        return x
    if _is_int(x):
        return DimExpr(((_ONE, operator.index(x)),), scope)
    raise TypeError(f"Symbolic dimension {operation} not supported for {x}.")


def check_same_scope(scope, e: DimExpr, when: str) -> None:
    if scope is not e.scope:
        raise ValueError(
            f"Invalid mixing of symbolic scopes {when}.\n"
            f"Expected  scope {scope}\n"
            f"and found for '{e}' (unknown) scope {e.scope}\n"
            f"See {_DOCS}#user-specified-symbolic-constraints."
        )


def _normalized(pairs, scope) -> int | DimExpr:
    """The expression of sorted (term, coefficient) pairs, with the scope's equality
    constraints applied (their left-hand sides replaced), as an int when constant."""
    rules = getattr(scope, "normalization_rules", None)
    if rules:
        for t, k in pairs:
            update = _rewrite(t, k, rules)
            if update:
                pairs = _combine(pairs, 1, update, 1)
                break
    if not pairs:
        return 0
    if pairs[0][0].is_constant:
        return pairs[0][1]
    return DimExpr(pairs, scope)


def _rewrite(t: Term, k: int, rules) -> list:
    """What to add to an expression holding ``k*t`` to apply the equality rules:
    ``rules[t] = (after, t_k)`` means ``t_k * t == after``."""
    after, tk = rules.get(t, (None, 0))
    if after is not None and k % tk == 0:
        return [(t, -k), *((t2, c2 * (k // tk)) for t2, c2 in _terms(after))]
    if len(t.factors) > 1:
        for f, fexp in t.factors:
            one = Term(((f, fexp),))
            after, tk = rules.get(one, (None, 0))
            if after is not None and k % tk == 0:
                rest = t.divided_by(one)
                return [(t, -k), *((t2.times(rest), c2 * (k // tk)) for t2, c2 in _terms(after))]
    return []


def _terms(e) -> tuple:
    return e.terms if isinstance(e, DimExpr) else ((_ONE, int(e)),)


def is_symbolic_dim(d) -> bool:
    """Whether ``d`` is a symbolic dimension expression."""
    return isinstance(d, DimExpr)


def is_constant_dim(d) -> bool:
    """Whether ``d`` is a constant dimension (an integer)."""
    return not isinstance(d, DimExpr) and _is_int(d)


def canonicalize_dim(d):
    """A dimension size as it is kept in shapes: a symbolic expression, or an int
    (anything with ``__index__``; ``TypeError`` otherwise)."""
    return d if isinstance(d, DimExpr) else operator.index(d)


def is_constant_shape(shape) -> bool:
    """Whether every dimension of ``shape`` is constant."""
    return not any(isinstance(d, DimExpr) for d in shape)


def dim_constant_value(d) -> int | None:
    return None if isinstance(d, DimExpr) else operator.index(d)


def max_dim(d1, d2):
    """``max(d1, d2)`` of dimensions: decided when the bounds allow, else symbolic."""
    if isinstance(d1, DimExpr):
        return d1.max(d2)
    if isinstance(d2, DimExpr):
        return d2.max(d1, swapped=True)
    return max(d1, d2)


def min_dim(d1, d2):
    """``min(d1, d2)`` of dimensions: decided when the bounds allow, else symbolic."""
    if isinstance(d1, DimExpr):
        return d1.min(d2)
    if isinstance(d2, DimExpr):
        return d2.min(d1, swapped=True)
    return min(d1, d2)


# -- deciding comparisons from bounds ------------------------------------------------

_INF = math.inf


def _geq(e1, e2, describe) -> bool:
    if isinstance(e1, DimExpr):
        scope = e1.scope
        if isinstance(e2, DimExpr):
            check_same_scope(scope, e2, f"when comparing {describe()}")
    elif isinstance(e2, DimExpr):
        scope = e2.scope
    else:
        return int(e1) >= int(e2)
    lb, ub = bounds(e1 - e2)
    if lb >= 0:
        return True
    if ub < 0:
        return False
    constraints = getattr(scope, "explicit_constraints", ())
    where = f"\nUsing symbolic scope {scope}" if constraints else ""
    raise InconclusiveDimensionOperation(
        f"Symbolic dimension comparison {describe()} is inconclusive.{where}"
    )


def _mul_bounds(a, b):
    def m(x, y):
        return 0 if x == 0 or y == 0 else x * y

    prods = [m(a[0], b[0]), m(a[0], b[1]), m(a[1], b[0]), m(a[1], b[1])]
    return min(prods), max(prods)


def _scale(k, lb, ub):
    return (k * lb, k * ub) if k >= 0 else (k * ub, k * lb)


def bounds(e, depth: int = 0) -> tuple[float, float]:
    """Lower and upper bounds of a dimension expression (``inf`` when unbounded),
    from the variables being >= 1 and the constraints of its scope."""
    if not isinstance(e, DimExpr):
        return (int(e), int(e))
    lb, ub = _interval(e, depth)
    if depth >= 2:
        return lb, ub
    # A max/min factor is at least/most each operand: substitute each and bound again.
    for t, k in e.terms:
        f = t.single_factor()
        if f is None or f.operation not in (MAX, MIN):
            continue
        for opnd in f.operands:
            rest = e - k * _normalized([(t, 1)], e.scope) + k * opnd
            rlb, rub = bounds(rest, depth + 1)
            if (f.operation == MAX) == (k > 0):  # e >= rest
                lb = max(lb, rlb)
            else:  # e <= rest
                ub = min(ub, rub)
    # Each inequality constraint ``c >= 0``: e >= e - c and e <= e + c.
    for c in getattr(e.scope, "inequalities", ()):
        lb = max(lb, bounds(e - c, depth + 1)[0])
        ub = min(ub, bounds(e + c, depth + 1)[1])
    return lb, ub


def _interval(e: DimExpr, depth: int):
    lb = ub = 0
    for t, k in e.terms:
        if t.is_constant:
            tb = (1, 1)
        else:
            tb = (1, 1)
            for f, exp in t.factors:
                fb = _factor_bounds(f, e.scope, depth)
                for _ in range(exp):
                    tb = _mul_bounds(tb, fb)
            known = getattr(e.scope, "term_bounds", {}).get(t)
            if known is not None:
                tb = (max(tb[0], known[0]), min(tb[1], known[1]))
        klb, kub = _scale(k, *tb)
        lb, ub = lb + klb, ub + kub
    return lb, ub


def _factor_bounds(f: Factor, scope, depth: int):
    if f.var is not None:
        known = getattr(scope, "term_bounds", {}).get(Term(((f, 1),)))
        return known if known is not None else (1, _INF)
    (alb, aub), (blb, bub) = (bounds(o, depth + 1) for o in f.operands)
    if f.operation == MAX:
        return max(alb, blb), max(aub, bub)
    if f.operation == MIN:
        return min(alb, blb), min(aub, bub)
    if f.operation == MOD:
        if blb > 0:
            ub = bub - 1
            if alb >= 0:
                ub = min(ub, aub)
            return 0, ub
        return -_INF, _INF
    if f.operation == FLOORDIV:
        if blb > 0 and blb == bub:
            return (
                math.floor(alb / blb) if alb != -_INF else -_INF,
                math.floor(aub / blb) if aub != _INF else _INF,
            )
        if blb > 0 and alb >= 0:
            return 0, aub
        return -_INF, _INF
    raise AssertionError(f.operation)


# -- evaluation ------------------------------------------------------------------------


def _evaluate(e, env, maximum=max, minimum=min):
    if not isinstance(e, DimExpr):
        return e
    total = None
    for t, k in e.terms:
        v = k
        if not t.is_constant:
            v = None
            for f, exp in t.factors:
                fv = _evaluate_factor(f, env, maximum, minimum)
                for _ in range(exp):
                    v = fv if v is None else v * fv
            if k != 1:
                v = v * k
        total = v if total is None else total + v
    return total


def _evaluate_factor(f: Factor, env, maximum, minimum):
    if f.var is not None:
        return env[f.var]
    a, b = (_evaluate(o, env, maximum, minimum) for o in f.operands)
    if f.operation == FLOORDIV:
        return a // b
    if f.operation == MOD:
        return a % b
    return (maximum if f.operation == MAX else minimum)(a, b)


# A dimension in an arithmetic expression with arrays is a weakly typed Python integer.
dtypes.register_weak_scalar_type(DimExpr)
