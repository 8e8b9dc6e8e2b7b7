"""Settings for every pytest run in this repository (layer tests and root tests).

lamina keeps compiled programs in the user's cache directory by default; the tests
turn that off (for themselves and the processes they start) so that no run depends on
what an earlier one left in ``~/.cache``, and tests that count compilations see every
one. Tests of the cache give it a directory of their own (``set_cache_dir(tmp_path)``).

The fixture ``program_output`` runs a Python program in a fresh process (for tests that
need another device count than their own process has) and returns what it printed.
"""

import json
import os
import subprocess
import sys

import pytest

os.environ["JAX_COMPILATION_CACHE_DIR"] = ""


def _program_output(*args, cwd=None, timeout=300):
    """``python *args`` (a script path, or ``"-c", code``) run to success; returns the
    JSON value of the last line it printed."""
    done = subprocess.run(
        [sys.executable, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def program_output():
    return _program_output
