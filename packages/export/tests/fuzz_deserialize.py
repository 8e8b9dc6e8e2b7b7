"""Run by test_fuzz.py in a subprocess (so that a crash fails the test rather than
ending pytest): deserializes mutated copies of the recorded artifacts and prints how
each ended. Arguments: seed, number of mutations outside the modules' bytes, number
inside them."""

import collections
import random
import sys
from pathlib import Path

from lamina import export
from lamina.export import artifact_check

# jaxlib's reader loops forever on some malformed modules; give up on those sooner.
artifact_check.CHECK_TIMEOUT_S = 1.0

DATA = Path(__file__).parent / "data"


def mutate(rng: random.Random, blob: bytes, lo: int, hi: int) -> bytes:
    """One change at a position in [lo, hi): a truncation, changed bytes or inserted
    bytes; or, now and then, random bytes instead of the artifact."""
    b = bytearray(blob)
    kind = rng.randrange(10)
    at = rng.randrange(lo, hi)
    if kind < 2:
        return bytes(b[:at])
    if kind < 7:
        for _ in range(rng.randint(1, 3)):
            b[at] = rng.randrange(256)
            at = min(hi - 1, at + rng.randrange(8))
        return bytes(b)
    if kind < 9:
        b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        return bytes(b)
    return bytes(rng.randrange(256) for _ in range(rng.randrange(300)))


def main(seed: int, outside: int, inside: int) -> None:
    rng = random.Random(seed)
    artifacts = []
    for path in sorted(DATA.glob("*.bin")):
        blob = path.read_bytes()
        module = export.deserialize(blob).mlir_module_serialized
        start = blob.find(module)
        artifacts.append((blob, start, start + len(module)))
    outcomes = collections.Counter()
    for i in range(outside + inside):
        blob, start, end = artifacts[i % len(artifacts)]
        if i < outside:  # positions in the flatbuffer around the main module
            at = rng.randrange(len(blob) - (end - start))
            lo, hi = (at, at + 1) if at < start else (at + end - start, at + end - start + 1)
        else:
            lo, hi = start, end
        data = mutate(rng, blob, lo, hi)
        try:
            exp = export.deserialize(data)
            while exp.has_vjp():  # the VJPs' modules are read when asked for
                exp = exp.vjp()
            outcomes["deserialized"] += 1
        except ValueError:
            outcomes["ValueError"] += 1
        except Exception as e:
            outcomes[type(e).__name__] += 1
            print(f"mutation {i}: {type(e).__name__}: {e}"[:300])
    print(dict(sorted(outcomes.items())))


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
