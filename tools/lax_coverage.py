"""Which public names of jax.lax (JAX 0.10.2, recorded in
packages/lax/tests/data/jax_lax_api.json) lamina.lax does not define yet.

    uv run python tools/lax_coverage.py
"""

import json
import pathlib

import lamina.lax as lax

DATA = pathlib.Path(__file__).parent.parent / "packages" / "lax" / "tests" / "data"


def main() -> None:
    recorded = json.loads((DATA / "jax_lax_api.json").read_text())
    missing = sorted(name for name in recorded if not hasattr(lax, name))
    print(f"lamina.lax defines {len(recorded) - len(missing)} of {len(recorded)} names")
    print("missing:", " ".join(missing))


if __name__ == "__main__":
    main()
