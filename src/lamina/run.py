"""``python -m lamina.run script.py [args...]``: run a program written for JAX on lamina.

The script runs as ``__main__`` with ``sys.argv`` set to ``[script.py, args...]``, with
``import jax`` resolving to lamina (``lamina.compat.install()``).
"""

import os
import runpy
import sys

from lamina import compat


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        raise SystemExit(0 if argv else 2)
    compat.install()
    sys.argv = list(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))  # as `python script.py`
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
