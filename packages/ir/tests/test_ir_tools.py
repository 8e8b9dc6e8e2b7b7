"""The tools over Jaxpr text: ``python -m lamina.ir fmt|check|stats|dot|diff`` and the
functions behind them; and the README's snippet for tool authors."""

import contextlib
import io
import pathlib
import re
import subprocess
import sys

import pytest

from lamina.ir import parse_jaxpr
from lamina.ir.tools.command_line import main
from lamina.ir.tools.diff import jaxpr_diff
from lamina.ir.tools.dot import jaxpr_dot
from lamina.ir.tools.stats import jaxpr_stats

CORPUS = pathlib.Path(__file__).parent / "data" / "jaxpr_corpus"
README = pathlib.Path(__file__).parents[3] / "README.md"

A = """{ lambda ; x:f32[3] y:f32[]. let
    z:f32[3] = sin x
    w:f32[] = convert_element_type[new_dtype=float32 weak_type=False] y
    v:f32[3] = mul z w
    u:f32[3] = add v 1.0:f32[]
  in (u,) }
"""


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_fmt_prints_jax_text_back(tmp_path):
    path = write(tmp_path, "a.jaxpr", A)
    status, out, _ = run("fmt", path, str(CORPUS / "quickstart_layer.jaxpr"))
    assert status == 0
    assert (
        out
        == parse_jaxpr(A).pretty_print() + "\n" + (CORPUS / "quickstart_layer.jaxpr").read_text()
    )
    assert out.startswith("{ lambda ; a:f32[3] b:f32[]. let\n    c:f32[3] = sin a\n")


def test_check_reports_where_the_first_problem_is(tmp_path, known_by_name_only):
    known_by_name_only("cumsum")
    status, out, _ = run("check", str(CORPUS / "scan_of_cond.jaxpr"))
    assert (status, out) == (0, f"{CORPUS / 'scan_of_cond.jaxpr'}: ok\n")
    # 'add' of two operands of different shapes: its equation, line 3 column 5.
    bad = A.replace(
        "z:f32[3] = sin x", "z:f32[3] = sin x\n    t:f32[2] = cumsum[axis=0 reverse=False] z"
    )
    bad = bad.replace("t:f32[2]", "t:f32[3] s:f32[3]")
    path = write(tmp_path, "bad.jaxpr", bad)
    status, _, err = run("check", path)
    assert status == 1
    assert err.startswith(f"{path}:3:5: equation 1 (_:f32[3] _:f32[3] = cumsum[axis=0")
    assert "has one result" in err
    path = write(tmp_path, "syntax.jaxpr", "\n" + A.replace("mul z w", "mul z q"))
    status, _, err = run("check", path)
    assert (status, err.splitlines()[0]) == (
        1,
        f"{path}:5:22: 'q' is not a variable in scope (nor a known primitive)",
    )
    status, _, err = run("check", str(tmp_path / "missing.jaxpr"))
    assert status == 1 and "No such file" in err


def test_stats_counts_equations_flops_and_bytes():
    stats = jaxpr_stats(parse_jaxpr((CORPUS / "quickstart_layer.jaxpr").read_text()))
    assert stats.eqns == 5 and stats.depth == 2
    assert dict(stats.per_primitive) == {"jit": 1, "dot_general": 1, "mul": 1, "add": 1, "tanh": 1}
    # dot_general of f32[2,4] by f32[4,3]: 2*2*3*4 flops; then 3 elementwise ops on 6 values.
    assert stats.flops == 48 + 3 * 6
    # bytes: dot_general 4*(8+12+6), mul and add 4*(6+1+6), tanh 4*(6+6)
    assert stats.bytes == 104 + 52 + 52 + 48
    conv = jaxpr_stats(parse_jaxpr((CORPUS / "conv2d.jaxpr").read_text()))
    # f32[1,3,8,8] by a kernel f32[4,3,3,3], 'SAME': 1*4*8*8 outputs of 3*3*3 products.
    assert conv.flops == 2 * 256 * 27
    status, out, _ = run("stats", str(CORPUS / "grad_of_scan.jaxpr"))
    assert status == 0 and re.search(r"^  scan +2$", out, re.M) and "nesting depth: 2" in out


def test_dot_draws_nested_jaxprs_as_clusters():
    text = jaxpr_dot(parse_jaxpr((CORPUS / "cond_branches.jaxpr").read_text()))
    assert text.startswith('digraph "jaxpr" {') and text.endswith("}\n")
    assert text.count("subgraph cluster_") == 2
    assert text.count('label="cond branches"') == 2
    assert text.count("style=dashed") == 2
    assert '[shape=box label="sin"]' in text and '[shape=box label="cos"]' in text


def test_diff_ignores_names_and_shows_changed_equations(tmp_path):
    renamed = parse_jaxpr(A).pretty_print()
    assert jaxpr_diff(parse_jaxpr(A), parse_jaxpr(renamed)) == []
    changed = renamed.replace("= sin a", "= cos a").replace("mul c d", "mul d c")
    assert jaxpr_diff(parse_jaxpr(A), parse_jaxpr(changed)) == [
        "- c:f32[3] = sin a",
        "+ c:f32[3] = cos a",
        "- e:f32[3] = mul c d",
        "- f:f32[3] = add e 1.0:f32[]",
        "+ e:f32[3] = mul d c",
        "+ f:f32[3] = add e 1.0:f32[]",
    ]
    a, b = write(tmp_path, "a.jaxpr", A), write(tmp_path, "b.jaxpr", changed)
    assert run("diff", a, a)[:2] == (0, "")
    assert run("diff", a, b)[0] == 1


def test_diff_tells_apart_equal_equations_wired_differently():
    text = """{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = sin a
    d:f32[] = sin b
    e:f32[] = sub c d
  in (e,) }"""
    swapped = text.replace("c:f32[] = sin a", "c:f32[] = sin b").replace(
        "d:f32[] = sin b", "d:f32[] = sin a"
    )
    # The sines come in the other order: the same values, subtracted the other way.
    assert jaxpr_diff(parse_jaxpr(text), parse_jaxpr(swapped)) == [
        "+ c:f32[] = sin b",
        "- d:f32[] = sin b",
        "- e:f32[] = sub c d",
        "+ e:f32[] = sub c d",
    ]


def test_bad_usage():
    with pytest.raises(SystemExit) as e, contextlib.redirect_stderr(io.StringIO()):
        main(["frobnicate"])
    assert e.value.code == 2


def test_the_readme_tooling_snippet_runs_as_written():
    readme = README.read_text()
    start = readme.index("Tools that only handle Jaxprs need `lamina-ir` alone:")
    snippet = re.search(r"```python\n(.*?)```", readme[start:], re.S).group(1)
    result = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    text = re.search(r'text_printed_by_jax = """(.*?)"""', snippet, re.S).group(1)
    assert result.stdout == text + "\n"
