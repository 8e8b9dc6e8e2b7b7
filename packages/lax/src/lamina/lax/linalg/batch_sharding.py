"""The sharding rule of the linear-algebra primitives, as in JAX: their operands may be
split only over batch dimensions (those before each operand's matrix or vector
dimensions), alike for all operands; every result keeps that batch split."""

from __future__ import annotations

from lamina.ir import ShardingTypeError, abstract_eval_rules, spec_of

__all__ = ["def_batch_sharding"]


def def_batch_sharding(prim, ranks: tuple[int, ...]) -> None:
    """Give ``prim`` the batch-dimension rule; ``ranks`` are the numbers of trailing
    (non-batch) dimensions of its operands."""

    def rule(*avals, **params):
        batches = []
        for i, (rank, aval) in enumerate(zip(ranks, avals, strict=False)):
            spec = spec_of(aval)
            batch, rest = spec[: len(spec) - rank], spec[len(spec) - rank :]
            if any(e is not None for e in rest):
                shown = type(aval.type_sharding.spec)(*spec)
                raise ShardingTypeError(
                    f"Input {i} to {prim.name} must be unsharded on non-batch dimensions, "
                    f"but got {shown}."
                )
            batches.append(batch)
        if any(b != batches[0] for b in batches[1:]):
            raise ShardingTypeError(
                f"All inputs to {prim.name} must have the same batch sharding, but got {batches}."
            )
        outs = abstract_eval_rules[prim](*avals, **params)
        if not prim.multiple_results:
            return _padded(batches[0], outs)
        return [_padded(batches[0], o) for o in outs]

    prim.def_sharding(rule)


def _padded(batch: tuple, aval) -> tuple:
    return batch + (None,) * (len(aval.shape) - len(batch))
