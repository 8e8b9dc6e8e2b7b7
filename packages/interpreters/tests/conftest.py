import pathlib
import sys

# The test-local primitive modules (jit_prims.py, tracing_prims.py) are imported by name.
sys.path.insert(0, str(pathlib.Path(__file__).parent))
