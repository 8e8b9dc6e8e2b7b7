"""``python -m lamina.ir``: see ``lamina.ir.tools.command_line``."""

import sys

from lamina.ir.tools.command_line import main

sys.exit(main())
