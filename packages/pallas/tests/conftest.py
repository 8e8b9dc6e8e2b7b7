import sys
from pathlib import Path

# The tests' helper modules (kernels.py) import by name.
sys.path.insert(0, str(Path(__file__).parent))
