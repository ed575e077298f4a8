"""``python -m kiln explain SCRIPT [ARGS...]``: see :mod:`kiln.cli`."""
import sys

from .cli import main

sys.exit(main())
