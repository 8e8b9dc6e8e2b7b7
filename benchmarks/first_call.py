"""Where a first call's time goes: import, trace, lower, XLA compile and run, in a fresh
process, for ``jit(grad)`` of the MLP of ad.py and the transformer step of scaling.py.

    uv run python benchmarks/first_call.py [--jax-python PATH] [--repeats N]

Each stage is timed as the CPU time of the process (``time.process_time``, all its
threads), which a loaded machine disturbs far less than the wall clock; ``import``
includes making the inputs (the runtime's client starts there). The stages are those
of ``jitted.trace(*args).lower().compile()`` and the first call of the result, waited
for. With ``--jax-python`` (a Python with JAX 0.10.2) JAX's split is shown beside.
"""

from __future__ import annotations

import time

import ad
import harness
import scaling

STAGES = ("import", "trace", "lower", "compile", "run")
PROBES = {
    probe: {f"{name} first call: {stage} (CPU)": None for stage in STAGES}
    for probe, name in (("mlp_grad", "mlp grad"), ("transformer", "transformer"))
}


def _split(jax, name: str, build) -> dict[str, float]:
    marks = [0.0]  # the process's CPU time counts from its start
    jitted, args = build()
    marks.append(time.process_time())
    staged = jitted.trace(*args)
    marks.append(time.process_time())
    staged = staged.lower()
    marks.append(time.process_time())
    staged = staged.compile()
    marks.append(time.process_time())
    jax.block_until_ready(staged(*args))
    marks.append(time.process_time())
    return {
        f"{name} first call: {stage} (CPU)": marks[i + 1] - marks[i]
        for i, stage in enumerate(STAGES)
    }


def probe_mlp_grad(jax) -> dict[str, float]:
    return _split(jax, "mlp grad", lambda: (ad.programs(jax)[0], ad.inputs(jax)))


def probe_transformer(jax) -> dict[str, float]:
    return _split(jax, "transformer", lambda: scaling.transformer(jax))


if __name__ == "__main__":
    harness.main(__file__, __doc__, PROBES, globals(), width=40)
