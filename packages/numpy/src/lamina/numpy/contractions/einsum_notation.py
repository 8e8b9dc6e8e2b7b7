"""``einsum`` and ``einsum_path``: Einstein summation planned by opt_einsum and run as
one ``dot_general`` per pairwise contraction.

A call is planned once per (subscripts, operand shapes, ``optimize``): the plan (which
operands to contract in which order, and the labels of every intermediate) is cached,
so a repeated eager call costs a dictionary lookup and one compiled dispatch.
"""

from __future__ import annotations

import functools

import opt_einsum

from lamina.interpreters import jit
from lamina.ir import dtypes, is_symbolic_dim
from lamina.lax import canonicalize_precision
from lamina.lax import dot_general as lax_dot_general
from lamina.numpy.base.arguments import aval_of, check_arraylike, to_array
from lamina.numpy.contractions.labelled_operands import contract_one, contract_two, finish

__all__ = ["einsum", "einsum_path"]


class _LeftToRight(opt_einsum.paths.PathOptimizer):
    """``optimize=False``: contract the operands in the order given, first with second,
    the result with the third, and so on."""

    def __call__(self, inputs, output, size_dict, memory_limit=None):
        return [(0, 1)] * (len(inputs) - 1)


def _path_type(optimize):
    if optimize is True:
        return "optimal"
    if optimize is False:
        return _LeftToRight()
    return optimize


class _Plan:
    """The steps of a contraction: each pops operands at ``positions`` from the list
    of operands still to contract, folds them pairwise (``folds``: the input labels
    and output labels of each fold) and appends the result."""

    __slots__ = ("_hash", "steps")

    def __init__(self, steps):
        self.steps = steps
        self._hash = hash(steps)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return isinstance(other, _Plan) and self.steps == other.steps


def _folds(terms: list[str], output: str) -> tuple:
    """A contraction of several terms as a chain of unary/binary ones; each
    intermediate keeps only the labels still needed by later terms or the output."""
    if len(terms) <= 2:
        return ((tuple(terms), output),)
    folds, acc = [], terms[0]
    for i, term in enumerate(terms[1:], start=1):
        if i == len(terms) - 1:
            out = output
        else:
            needed = set(output).union(*terms[i + 1 :])
            out = "".join(dict.fromkeys(c for c in acc + term if c in needed))
        folds.append(((acc, term), out))
        acc = out
    return tuple(folds)


def _make_plan(subscripts: str, shapes: tuple, optimize) -> _Plan:
    # Symbolic sizes (shape polymorphism) are planned for as one fixed size.
    shapes = tuple(tuple(8 if is_symbolic_dim(d) else d for d in shape) for shape in shapes)
    _, contractions = opt_einsum.contract_path(
        subscripts, *shapes, shapes=True, einsum_call=True, use_blas=True,
        optimize=_path_type(optimize),
    )  # fmt: skip
    steps = []
    for positions, _removed, einsum_str, *_ in contractions:
        inputs, output = einsum_str.split("->")
        steps.append((tuple(positions), _folds(inputs.split(","), output)))
    return _Plan(tuple(steps))


@functools.lru_cache(maxsize=4096)
def _cached_plan(subscripts: str, shapes: tuple, optimize) -> _Plan:
    if isinstance(optimize, tuple):  # an explicit path, made hashable
        optimize = [tuple(step) for step in optimize]
    return _make_plan(subscripts, shapes, optimize)


def _plan(subscripts: str, shapes: tuple, optimize) -> _Plan:
    if isinstance(optimize, (list, tuple)):
        if all(isinstance(step, (list, tuple)) for step in optimize):
            return _cached_plan(subscripts, shapes, tuple(tuple(step) for step in optimize))
        return _make_plan(subscripts, shapes, list(optimize))  # opt_einsum judges it
    if isinstance(optimize, (str, bool)) or optimize is None:
        return _cached_plan(subscripts, shapes, optimize)
    return _make_plan(subscripts, shapes, optimize)  # a path optimizer object


def _execute(operands, plan, precision, preferred, dot_general, out_sharding):
    if preferred is None:
        preferred, weak = dtypes.result_type(*operands, return_weak_type_flag=True)
    else:
        weak = False
    pending = list(operands)
    options = dict(preferred=preferred, precision=precision, dot_general=dot_general,
                   out_sharding=out_sharding)  # fmt: skip
    for positions, folds in plan.steps:
        taken = [pending.pop(p) for p in positions]
        if len(taken) == 1:
            (((term,), out),) = folds
            result = contract_one(taken[0], term, out, preferred)
        else:
            result = taken[0]
            for other, ((lhs_term, rhs_term), out) in zip(taken[1:], folds, strict=True):
                result = contract_two(result, lhs_term, other, rhs_term, out, **options)
        pending.append(result)
    return finish(pending[0], preferred, weak)


_run = jit(_execute, static_argnums=(1, 2, 3, 4, 5), inline=True)


def _from_interleaved(args) -> tuple[str, list]:
    """The subscripts string and operands of einsum's interleaved form
    ``einsum(x, [0, 1], y, [1, 2], [0, 2])``; labels (any sortable hashables) become
    letters in sorted order, ``Ellipsis`` becomes ``...``."""
    operands, sublists = list(args[0::2]), list(args[1::2])
    if len(args) % 2:
        operands, output = operands[:-1], args[-1]
    else:
        output = None
    used = {s for sub in [*sublists, output or ()] for s in sub if s is not Ellipsis}
    try:
        symbols = {s: opt_einsum.get_symbol(i) for i, s in enumerate(sorted(used))}
    except TypeError:
        raise TypeError(
            "einsum's interleaved form takes sublists of Ellipsis and comparable hashable "
            f"labels (ints, say), got {sublists}"
        ) from None

    def term(sub):
        return "".join("..." if s is Ellipsis else symbols[s] for s in sub)

    subscripts = ",".join(term(sub) for sub in sublists)
    if output is not None:
        subscripts += "->" + term(output)
    return subscripts, operands


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=lax_dot_general,
           out_sharding=None):  # fmt: skip
    """Einstein summation over ``operands`` as ``subscripts`` says (``numpy.einsum``).

    The order of pairwise contractions comes from opt_einsum (``optimize``: ``"auto"``,
    ``True`` for ``"optimal"``, ``False`` for left to right, any opt_einsum strategy or
    an explicit path such as ``einsum_path`` returns); each runs as one
    ``lax.dot_general`` accumulating in ``preferred_element_type`` (by default the
    operands' result type).
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if isinstance(subscripts, str):
        spec = subscripts
    else:
        spec, operands = _from_interleaved((subscripts, *operands))
    operands = [x.__jax_array__() if hasattr(x, "__jax_array__") else x for x in operands]
    check_arraylike("einsum", *operands)
    arrays = [to_array(x) for x in operands]
    plan = _plan(spec, tuple(aval_of(x).shape for x in arrays), optimize)
    if preferred_element_type is not None:
        preferred_element_type = dtypes.check_and_canonicalize_user_dtype(
            preferred_element_type, "einsum"
        )
    precision = canonicalize_precision(precision)
    return _run(arrays, plan, precision, preferred_element_type, _dot_general, out_sharding)


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """The contraction order ``einsum`` would use and opt_einsum's report on it, as
    ``(path, info)``; ``path`` may be passed back as ``einsum(..., optimize=path)``."""
    return opt_einsum.contract_path(subscripts, *operands, optimize=_path_type(optimize))
