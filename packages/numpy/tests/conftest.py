import pathlib
import sys

# Test-support modules beside the tests (result_types.py) are imported by name.
sys.path.insert(0, str(pathlib.Path(__file__).parent))
