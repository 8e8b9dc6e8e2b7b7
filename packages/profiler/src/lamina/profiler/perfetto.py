"""Perfetto's copy of a trace: ``perfetto_trace.json.gz`` beside the run's
``<host>.trace.json.gz`` (the Chrome trace jaxlib writes, less its ``metadata``, which
Perfetto's UI refuses), and a one-shot local server for https://ui.perfetto.dev."""

from __future__ import annotations

import functools
import gzip
import http.server
import json
import os
import pathlib

__all__ = ["serve_perfetto_trace", "write_perfetto_trace"]

PERFETTO_PORT = 9001  # where ui.perfetto.dev looks for a trace served from this host


def write_perfetto_trace(run_dir: pathlib.Path) -> pathlib.Path:
    """Write ``perfetto_trace.json.gz`` in ``run_dir`` from its Chrome trace; returns
    its path. The file appears whole or not at all."""
    traces = sorted(run_dir.glob("*.trace.json.gz"))
    if len(traces) != 1:
        raise ValueError(f"Invalid trace folder: {run_dir}")
    with gzip.open(traces[0], "rb") as f:
        trace = json.load(f)
    trace.pop("metadata", None)
    target = run_dir / "perfetto_trace.json.gz"
    partial = run_dir / ".perfetto_trace.json.gz.partial"
    try:
        with gzip.open(partial, "wb") as f:
            f.write(json.dumps(trace).encode("utf-8"))
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the trace to the Perfetto UI (another origin) and remembers what it
    asked for."""

    def end_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def do_GET(self):
        self.server.last_path = self.path
        super().do_GET()

    def do_POST(self):
        self.send_error(404, "File not found")


class _Server(http.server.HTTPServer):
    allow_reuse_address = True
    last_path: str | None = None


def serve_perfetto_trace(path: pathlib.Path) -> None:
    """Print the link that opens ``path`` in Perfetto's UI and serve the file on
    127.0.0.1 until the UI has fetched it."""
    handler = functools.partial(_Handler, directory=str(path.parent))
    with _Server(("127.0.0.1", PERFETTO_PORT), handler) as httpd:
        url = f"http://127.0.0.1:{PERFETTO_PORT}/{path.name}"
        print(f"Open URL in browser: https://ui.perfetto.dev/#!/?url={url}")
        while httpd.last_path != "/" + path.name:
            httpd.handle_request()
