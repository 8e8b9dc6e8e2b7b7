"""Traces: written in TensorBoard's layout (and Perfetto's, when asked), read back with
ProfileData, with the annotated spans and jit's own spans in them; one trace at a time;
a bad log_dir fails before anything is written."""

import gzip
import json
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import lamina.profiler as profiler
from lamina.interpreters import JaxRuntimeError, device_put, jit


def _events(log_dir) -> dict[str, list[float]]:
    """Span name -> durations (ns) of the host events of the one xplane in log_dir."""
    (path,) = Path(log_dir).glob("plugins/profile/*/*.xplane.pb")
    data = profiler.ProfileData.from_file(str(path))
    found: dict[str, list[float]] = {}
    for plane in data.planes:
        for line in plane.lines:
            for event in line.events:
                found.setdefault(event.name, []).append(event.duration_ns)
    return found


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """One trace of an annotated loop of jitted steps (its log_dir)."""
    log_dir = tmp_path_factory.mktemp("trace")

    def step_fn(x):
        return x

    step = jit(step_fn)

    @profiler.annotate_function
    def load_batch():
        time.sleep(0.01)
        return device_put(np.arange(4.0))

    with profiler.trace(log_dir, create_perfetto_trace=True):
        for i in range(2):
            with (
                profiler.StepTraceAnnotation("train", step_num=i),
                profiler.TraceAnnotation("forward", layer=3),
            ):
                step(load_batch()).block_until_ready()
    return log_dir


def test_trace_writes_tensorboard_layout(traced):
    (run,) = (Path(traced) / "plugins" / "profile").iterdir()
    names = sorted(p.name for p in run.iterdir())
    assert any(n.endswith(".xplane.pb") for n in names)
    assert any(n.endswith(".trace.json.gz") for n in names)
    assert "perfetto_trace.json.gz" in names


def test_annotations_are_spans_with_plausible_durations(traced):
    events = _events(traced)
    assert len(events["train"]) == 2 and len(events["forward"]) == 2
    load = "traced.<locals>.load_batch"  # the function's qualified name
    for duration in events[load]:
        assert 10e6 <= duration < 5e9  # it sleeps 10 ms
    for train, load_time in zip(events["train"], events[load], strict=True):
        assert train >= load_time


def test_jit_work_shows_as_spans_named_for_the_function(traced):
    events = _events(traced)
    for name in ("trace: step_fn", "lower: jit(step_fn)", "compile: jit(step_fn)"):
        assert len(events.get(name, [])) == 1, name  # only the first call compiles
        assert 0 < events[name][0] < 60e9
    assert "dispatch: jit(step_fn)" in events
    assert events["lower: jit(step_fn)"][0] < events["dispatch: jit(step_fn)"][0]


def test_perfetto_trace_is_chrome_json_without_metadata(traced):
    (path,) = Path(traced).glob("plugins/profile/*/perfetto_trace.json.gz")
    with gzip.open(path) as f:
        trace = json.load(f)
    assert "metadata" not in trace
    names = {e.get("name") for e in trace["traceEvents"]}
    assert {"train", "forward", "compile: jit(step_fn)"} <= names


def test_trace_is_also_a_decorator(tmp_path):
    @profiler.trace(tmp_path)
    def work():
        with profiler.TraceAnnotation("inside"):
            pass

    work()
    assert "inside" in _events(tmp_path)


def test_only_one_trace_at_a_time(tmp_path):
    profiler.start_trace(tmp_path / "a")
    try:
        # JAX 0.10.2's error, recorded.
        with pytest.raises(RuntimeError, match=r"^Profile has already been started\. Only one"):
            profiler.start_trace(tmp_path / "b")
    finally:
        profiler.stop_trace()
    with pytest.raises(RuntimeError, match=r"^No profile started$"):
        profiler.stop_trace()
    assert not (tmp_path / "b").exists()


def test_bad_log_dir_fails_first_and_leaves_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(JaxRuntimeError, match=r"FAILED_PRECONDITION: .* is not a directory"):
        profiler.start_trace(blocker / "logs")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    with profiler.trace(tmp_path / "good"):  # no trace was left running
        pass
    assert list((tmp_path / "good").glob("plugins/profile/*/*.xplane.pb"))


def test_step_annotation_takes_step_num():
    with profiler.StepTraceAnnotation("train", step_num=3):
        pass
    assert issubclass(profiler.StepTraceAnnotation, profiler.TraceAnnotation)


def test_perfetto_link_serves_the_trace_until_fetched(tmp_path, capsys):
    profiler.start_trace(tmp_path, create_perfetto_link=True)
    with profiler.TraceAnnotation("linked"):
        pass
    stopper = threading.Thread(target=profiler.stop_trace, daemon=True)
    stopper.start()
    url = "http://127.0.0.1:9001/perfetto_trace.json.gz"
    for _ in range(200):
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                body = response.read()
                assert response.headers["Access-Control-Allow-Origin"] == "*"
            break
        except OSError:
            time.sleep(0.05)
    stopper.join(timeout=10)
    assert not stopper.is_alive()
    names = {e.get("name") for e in json.loads(gzip.decompress(body))["traceEvents"]}
    assert "linked" in names
    assert f"https://ui.perfetto.dev/#!/?url={url}" in capsys.readouterr().out
