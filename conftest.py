"""Settings for every pytest run in this repository (layer tests and root tests).

lamina keeps compiled programs in the user's cache directory by default; the tests
turn that off (for themselves and the processes they start) so that no run depends on
what an earlier one left in ``~/.cache``, and tests that count compilations see every
one. Tests of the cache give it a directory of their own (``set_cache_dir(tmp_path)``).
"""

import os

os.environ["JAX_COMPILATION_CACHE_DIR"] = ""
