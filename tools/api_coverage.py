"""Which public names of JAX 0.10.2's modules (recorded with their signatures in the
layers' tests/data/jax_*_api.json) lamina does not define yet.

    uv run python tools/api_coverage.py
"""

import importlib
import json
import pathlib

PACKAGES = pathlib.Path(__file__).parent.parent / "packages"
# (recorded surface, lamina module)
SURFACES = [
    ("lax/tests/data/jax_lax_api.json", "lamina.lax"),
    ("lax/tests/data/jax_lax_linalg_api.json", "lamina.lax.linalg"),
    ("random/tests/data/jax_random_api.json", "lamina.random"),
    ("numpy/tests/data/jax_numpy_api.json", "lamina.numpy"),
    ("numpy/tests/data/jax_numpy_linalg_api.json", "lamina.numpy.linalg"),
    ("numpy/tests/data/jax_numpy_fft_api.json", "lamina.numpy.fft"),
    ("nn/tests/data/jax_nn_api.json", "lamina.nn"),
    ("nn/tests/data/jax_nn_initializers_api.json", "lamina.nn.initializers"),
]


def main() -> None:
    for path, module_name in SURFACES:
        recorded = json.loads((PACKAGES / path).read_text())
        module = importlib.import_module(module_name)
        missing = sorted(name for name in recorded if not hasattr(module, name))
        line = f"{module_name}: {len(recorded) - len(missing)} of {len(recorded)} names"
        print(line + (f"; missing: {' '.join(missing)}" if missing else ""))


if __name__ == "__main__":
    main()
