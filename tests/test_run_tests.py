"""The whole-suite runner (tools/run_tests.py): how it reads pytest's closing lines, sums
them into the line CI reads, and orders the layers."""

from pathlib import Path

from tools import run_tests

REPO = Path(__file__).resolve().parents[1]


def test_parse_the_quiet_closing_line():
    output = "Installed 8 packages in 53ms\n..s.F  [100%]\n3 passed, 1 failed, 1 skipped in 0.12s\n"
    line, counts = run_tests.parse_summary(output)
    assert line == "3 passed, 1 failed, 1 skipped in 0.12s"
    assert counts == {"passed": 3, "failed": 1, "skipped": 1}


def test_parse_the_verbose_coloured_closing_line():
    output = (
        "\x1b[32m==== \x1b[32m\x1b[1m12 passed\x1b[0m, 2 errors in 75.10s (0:01:15) ====\x1b[0m\n"
    )
    line, counts = run_tests.parse_summary(output)
    assert line == "12 passed, 2 errors in 75.10s (0:01:15)"
    assert counts == {"passed": 12, "errors": 2}


def test_parse_no_tests_and_no_summary():
    assert run_tests.parse_summary("no tests ran in 0.01s\n") == ("no tests ran in 0.01s", {})
    assert run_tests.parse_summary("3 deselected in 0.01s\n")[1] == {"deselected": 3}
    assert run_tests.parse_summary("error: uv failed to resolve\n") == ("", {})


def test_the_total_line():
    Step = run_tests.Step
    steps = [
        Step("layering", True, "ok"),
        Step("lamina-ir", True, "", {"passed": 4, "skipped": 2}),
        Step("lamina-lax", False, "", {"passed": 1, "failed": 2, "errors": 1}),
    ]
    assert run_tests.total_line(steps) == "5 passed, 3 failed, 2 skipped"
    # a step that failed without a failing test (no tests, a crash, a layering violation)
    steps = [Step("layering", False, "1 violation(s)"), Step("lamina-ir", False, "", {})]
    assert run_tests.total_line(steps) == "0 passed, 2 failed"


def test_layers_run_lowest_first():
    order = run_tests.layer_order(run_tests.layering.read_packages(REPO))
    assert sorted(order) == sorted(run_tests.layering.LAYERS)
    for layer in order:
        for dep in run_tests.layering.allowed_closure(layer):
            assert order.index(dep) < order.index(layer)
