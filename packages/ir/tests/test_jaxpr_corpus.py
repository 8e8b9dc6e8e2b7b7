"""Jaxprs that JAX 0.10.2 printed for real programs (recorded from JAX 0.10.2 by
tools/record_jaxpr_corpus.py into data/jaxpr_corpus), read with lamina-ir alone.

Each reads back with the table of JAX's primitives (no layer defining them loaded),
prints back character for character, and passes the checker; read with a registry that
knows no primitive (``unknown_primitives="create"``), each prints back the same too.
"""

import pathlib
import subprocess
import sys

import pytest

from lamina.ir import PrimitiveRegistry, check_jaxpr, default_registry, parse_jaxpr

CORPUS = pathlib.Path(__file__).parent / "data" / "jaxpr_corpus"
FILES = sorted(CORPUS.glob("*.jaxpr"))
TEXTS = {p.stem: p.read_text() for p in FILES}


def test_the_corpus_covers_the_programs_asked_for():
    assert len(FILES) >= 30
    text = "".join(TEXTS.values())
    for primitive in (
        "cond[", "while[", "scan[", "jit[", "custom_jvp_call[", "custom_vjp_call[",
        "remat2[", "random_bits[", "random_seed[", "custom_linear_solve[", "shard_map[",
        "conv_general_dilated[", "pure_callback[", "debug_print[", "transpose[",
    ):  # fmt: skip
        assert primitive in text, primitive


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_round_trip_with_the_table_of_jax_primitives(name):
    text = TEXTS[name].rstrip("\n")
    jaxpr = parse_jaxpr(text)
    assert str(jaxpr) == text
    check_jaxpr(jaxpr, registry=default_registry)
    assert parse_jaxpr(text) == jaxpr


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_round_trip_of_primitives_known_to_nobody(name):
    text = TEXTS[name].rstrip("\n")
    jaxpr = parse_jaxpr(text, registry=PrimitiveRegistry(), unknown_primitives="create")
    assert str(jaxpr) == text
    check_jaxpr(jaxpr)


PROBE = """
import sys
from lamina.ir.tools.command_line import main
status = main(["fmt", *sys.argv[1:]])
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "jaxlib"))
loaded += sorted(m for m in sys.modules if m.startswith("lamina.") and m[7:9] != "ir")
print("loaded:", loaded, file=sys.stderr)
sys.exit(status)
"""


def test_fmt_prints_every_file_back_with_lamina_ir_alone():
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, FILES)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "".join(TEXTS[p.stem] for p in FILES)
    assert result.stderr.strip() == "loaded: []"
