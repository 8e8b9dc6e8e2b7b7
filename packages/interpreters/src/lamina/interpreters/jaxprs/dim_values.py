"""Symbolic dimensions inside a StableHLO program (shape polymorphism).

A function lowered from a Jaxpr whose shapes hold symbolic dimensions takes tensors
with dynamic sizes (``tensor<?x3xf32>``) and knows the value of each dimension
variable as a scalar integer (``tensor<i32>``, ``tensor<i64>`` with x64): ``main``
computes them from its arguments' sizes, private functions receive them as leading
arguments marked ``jax.global_constant``. While a function is being emitted, its
variables' values are the current *dimension environment*; rules that make arrays of
symbolic shape evaluate the sizes there (``eval_dim``, ``shape_tensor``) and use the
dynamic StableHLO ops. ``jaxlib``'s shape refinement later replaces all of it by
constants, once the argument shapes are known.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Sequence

import numpy as np

from lamina.interpreters.core.mlir_bindings import hlo, ir
from lamina.ir import UnexpectedDimVar, dtypes, is_symbolic_dim

__all__ = [
    "HloOps",
    "current_env",
    "dim_env",
    "dim_type",
    "dim_vars_of",
    "eval_dim",
    "eval_shape",
    "ir_shape",
    "is_static_shape",
    "named_ops",
    "op_location",
    "shape_tensor",
]

_env: contextvars.ContextVar[dict | None] = contextvars.ContextVar("dim_env", default=None)
# Whether the ops computing dimensions are located by their operation's name ("ge",
# "shape_assertion"), as in the checks JAX's exported main makes.
_named_ops: contextvars.ContextVar[bool] = contextvars.ContextVar("named_ops", default=False)


def op_location(name: str):
    """A context in which the ops emitted are located at ``name`` (only while
    :func:`named_ops` is on; else the current location stays)."""
    return ir.Location.name(name) if _named_ops.get() else contextlib.nullcontext()


@contextlib.contextmanager
def named_ops():
    """Within the block, :func:`op_location` names the ops it emits."""
    token = _named_ops.set(True)
    try:
        yield
    finally:
        _named_ops.reset(token)


def dim_vars_of(avals) -> tuple[str, ...]:
    """The dimension variables of ``avals``' shapes, sorted by name."""
    names: set[str] = set()
    for a in avals:
        for d in getattr(a, "shape", ()):
            if is_symbolic_dim(d):
                names |= d.variables()
    return tuple(sorted(names))


def is_static_shape(shape) -> bool:
    return not any(is_symbolic_dim(d) for d in shape)


def ir_shape(shape) -> list[int]:
    """Sizes for an MLIR tensor type: symbolic dimensions are dynamic (``?``)."""
    dynamic = ir.ShapedType.get_dynamic_size()
    return [dynamic if is_symbolic_dim(d) else int(d) for d in shape]


def _dim_dtype():
    return dtypes.canonicalize_dtype(np.int64)


def dim_type() -> ir.Type:
    """The scalar tensor type of dimension values: ``tensor<i32>`` (``i64`` with x64)."""
    bits = np.dtype(_dim_dtype()).itemsize * 8
    return ir.RankedTensorType.get([], ir.IntegerType.get_signless(bits))


@contextlib.contextmanager
def dim_env(env: dict):
    """Make ``env`` (variable name -> scalar ``ir.Value``) the current environment."""
    token = _env.set(env)
    try:
        yield
    finally:
        _env.reset(token)


def _const(v: int) -> ir.Value:
    return hlo.constant(
        ir.DenseElementsAttr.get(np.array(v, _dim_dtype()), type=dim_type().element_type)
    )


class _Dim:
    """A dimension value in the program, with integer arithmetic emitting ops."""

    __slots__ = ("value",)

    def __init__(self, value: ir.Value):
        self.value = value

    @staticmethod
    def of(x) -> _Dim:
        return x if isinstance(x, _Dim) else _Dim(_const(int(x)))

    def __add__(self, o):
        other = _Dim.of(o).value
        with op_location("add"):
            return _Dim(hlo.add(self.value, other))

    __radd__ = __add__

    def __sub__(self, o):
        other = _Dim.of(o).value
        with op_location("sub"):
            return _Dim(hlo.subtract(self.value, other))

    def __rsub__(self, o):
        other = _Dim.of(o).value
        with op_location("sub"):
            return _Dim(hlo.subtract(other, self.value))

    def __mul__(self, o):
        other = _Dim.of(o).value
        with op_location("mul"):
            return _Dim(hlo.multiply(self.value, other))

    __rmul__ = __mul__

    def __floordiv__(self, o):
        return _floor_divmod(self, _Dim.of(o))[0]

    def __rfloordiv__(self, o):
        return _floor_divmod(_Dim.of(o), self)[0]

    def __mod__(self, o):
        return _floor_divmod(self, _Dim.of(o))[1]

    def __rmod__(self, o):
        return _floor_divmod(_Dim.of(o), self)[1]


def _compare(a, b, direction: str) -> ir.Value:
    x, y = _Dim.of(a).value, _Dim.of(b).value
    with op_location(direction.lower()):
        return hlo.compare(
            x,
            y,
            hlo.ComparisonDirectionAttr.get(direction),
            compare_type=hlo.ComparisonTypeAttr.get("SIGNED"),
        )


def _floor_divmod(a: _Dim, b: _Dim) -> tuple[_Dim, _Dim]:
    """Python's ``divmod`` (rounding down) from StableHLO's truncating ops."""
    q = hlo.divide(a.value, b.value)
    r = hlo.remainder(a.value, b.value)
    zero = _const(0)
    signs_differ = hlo.compare(
        hlo.compare(r, zero, hlo.ComparisonDirectionAttr.get("LT")),
        hlo.compare(b.value, zero, hlo.ComparisonDirectionAttr.get("LT")),
        hlo.ComparisonDirectionAttr.get("NE"),
    )
    adjust = hlo.and_(signs_differ, hlo.compare(r, zero, hlo.ComparisonDirectionAttr.get("NE")))
    q = hlo.select(adjust, hlo.subtract(q, _const(1)), q)
    r = hlo.select(adjust, hlo.add(r, b.value), r)
    return _Dim(q), _Dim(r)


def _max(a, b):
    return _Dim(hlo.maximum(_Dim.of(a).value, _Dim.of(b).value))


def _min(a, b):
    return _Dim(hlo.minimum(_Dim.of(a).value, _Dim.of(b).value))


def current_env() -> dict:
    env = _env.get()
    return {} if env is None else env


def eval_dim(d) -> ir.Value:
    """The value of dimension ``d`` (an int or a symbolic expression) as a scalar."""
    if not is_symbolic_dim(d):
        return _const(int(d))
    env = {k: _Dim(v) for k, v in current_env().items()}
    missing = d.variables() - env.keys()
    if missing:
        raise UnexpectedDimVar(min(missing), env)
    return _Dim.of(d.evaluate(env, maximum=_max, minimum=_min)).value


def eval_shape(shape) -> list:
    """The sizes of ``shape``: ints as they are, symbolic ones as scalar values."""
    return [eval_dim(d) if is_symbolic_dim(d) else int(d) for d in shape]


def shape_tensor(shape: Sequence) -> ir.Value:
    """The 1-D tensor of the sizes of ``shape`` (symbolic or not; ints or scalar
    ``ir.Value`` s)."""
    scalar = dim_type()
    one = ir.RankedTensorType.get([1], scalar.element_type)
    pieces = []
    for d in shape:
        if isinstance(d, ir.Value):
            v = d if d.type == scalar else hlo.convert(scalar, d)
        elif not is_symbolic_dim(d):  # a constant, made 1-D at once (as JAX does)
            pieces.append(hlo.constant(ir.DenseElementsAttr.get(np.array([d], _dim_dtype()))))
            continue
        else:
            v = eval_dim(d)
        pieces.append(hlo.reshape(one, v))
    if not pieces:
        return hlo.constant(ir.DenseElementsAttr.get(np.zeros((0,), _dim_dtype())))
    return pieces[0] if len(pieces) == 1 else hlo.concatenate(pieces, 0)


class HloOps:
    """The evaluator of ``lamina.ir``'s dimension solving that emits the program's
    checks (``shape_assertion`` custom calls)."""

    @staticmethod
    def wrap(value: ir.Value):
        return _Dim(value)

    @staticmethod
    def value_of(x) -> ir.Value:
        return _Dim.of(x).value

    @staticmethod
    def ge(a, b):
        return _compare(a, b, "GE")

    @staticmethod
    def eq(a, b):
        return _compare(a, b, "EQ")

    @staticmethod
    def divmod(a, k):
        return _floor_divmod(_Dim.of(a), _Dim.of(k))

    maximum = staticmethod(_max)
    minimum = staticmethod(_min)

    @staticmethod
    def check(ok, message, inputs):
        i32 = ir.IntegerType.get_signless(32)
        operands = [ok, *(_Dim.of(x).value for x in inputs)]
        with op_location("shape_assertion"):
            hlo.CustomCallOp(
                [],
                operands,
                call_target_name=ir.StringAttr.get("shape_assertion"),
                has_side_effect=ir.BoolAttr.get(True),
                api_version=ir.IntegerAttr.get(i32, 2),
            ).attributes["error_message"] = ir.StringAttr.get(message)
