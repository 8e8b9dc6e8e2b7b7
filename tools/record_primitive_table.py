"""Records lamina-ir's table of JAX 0.10.2's primitives
(packages/ir/src/lamina/ir/core/known_primitives.py): every ``core.Primitive`` reachable
in JAX's modules, with whether it has multiple results, and the params (with their
kinds) that the programs of tools/record_jaxpr_corpus.py give its equations.

Runs only where JAX 0.10.2 itself is installed (never in the suite):
``/path/to/jax-env/bin/python tools/record_primitive_table.py``.
"""

import importlib
import pathlib
import pkgutil
import sys

import jax
import numpy as np
from jax._src import core

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import contextlib

from record_jaxpr_corpus import PROGRAMS

OUT = pathlib.Path(__file__).parent.parent / "packages/ir/src/lamina/ir/core/known_primitives.py"
# Primitives whose printer puts these params first (the rest follow sorted).
PRINTED_FIRST = {"jit": ("name",), "custom_jvp_call": ("name",), "custom_vjp_call": ("name",)}
# Primitives whose sub-Jaxpr in this param prints with the equation's own names.
SHARED_NAMES = {"jit": "jaxpr"}
# Modules under the skipped GPU back ends that hold primitives lamina has (Pallas's
# Triton atomics).
KEPT = ("jax._src.pallas.triton.primitives",)


def all_primitives() -> dict[str, core.Primitive]:
    import jax._src

    for info in pkgutil.walk_packages(jax._src.__path__, "jax._src."):
        skipped = ("mosaic_gpu", "triton", "tpu_custom_call")
        if any(part in info.name for part in skipped) and info.name not in KEPT:
            continue
        with contextlib.suppress(Exception):
            importlib.import_module(info.name)
    found = {}
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("jax"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, core.Primitive):
                found.setdefault(value.name, value)
    return found


def kind(value) -> str:
    if isinstance(value, core.ClosedJaxpr):
        return "closed_jaxpr"
    if isinstance(value, core.Jaxpr):
        return "jaxpr"
    if isinstance(value, tuple) and value and all(isinstance(v, core.ClosedJaxpr) for v in value):
        return "closed_jaxpr"
    if isinstance(value, str):
        return "str"
    if isinstance(value, np.dtype):
        return "dtype"
    return "value"


def walk(jaxpr, params: dict):
    for eqn in jaxpr.eqns:
        seen = params.setdefault(eqn.primitive.name, {})
        for key, value in eqn.params.items():
            seen.setdefault(key, kind(value))
        for value in eqn.params.values():
            for v in value if isinstance(value, tuple) else (value,):
                if isinstance(v, core.ClosedJaxpr):
                    walk(v.jaxpr, params)
                elif isinstance(v, core.Jaxpr):
                    walk(v, params)


def main():
    assert jax.__version__ == "0.10.2", jax.__version__
    primitives = all_primitives()
    params: dict[str, dict] = {}
    for f, args in PROGRAMS.values():
        with contextlib.suppress(Exception):
            walk(jax.make_jaxpr(f)(*args).jaxpr, params)
    lines = [
        '"""JAX 0.10.2\'s primitives, for reading Jaxprs without the layers that define them.',
        "",
        "Recorded from JAX 0.10.2 by tools/record_primitive_table.py; do not edit by hand.",
        "``PRIMITIVES[name]`` is ``(multiple_results, params)``, ``params`` mapping each param",
        "seen in recorded programs to its kind: ``jaxpr`` (a Jaxpr), ``closed_jaxpr`` (a",
        "ClosedJaxpr or a tuple of them), ``str``, ``dtype`` or ``value`` (read as the parser",
        "reads any value). ``PRINTED_FIRST`` and ``SHARED_NAMES`` say how JAX prints the",
        "equations of a few primitives (see ``lamina.ir.core.jaxpr``).",
        '"""',
        "",
        "PRIMITIVES = {",
    ]
    for name in sorted(primitives):
        p = primitives[name]
        seen = params.get(name, {})
        kinds = ", ".join(f"{k!r}: {seen[k]!r}" for k in sorted(seen))
        lines.append(f"    {name!r}: ({bool(p.multiple_results)}, {{{kinds}}}),")
    lines.append("}")
    lines.append(f"PRINTED_FIRST = {PRINTED_FIRST!r}")
    lines.append(f"SHARED_NAMES = {SHARED_NAMES!r}")
    OUT.write_text("\n".join(lines) + "\n")
    missing = sorted(set(params) - set(primitives))
    print(len(primitives), "primitives;", "seen but not found:", missing)


if __name__ == "__main__":
    main()
