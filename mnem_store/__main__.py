"""``python -m mnem_store`` runs the ``mnem`` command line."""

import sys

from .cli import main

sys.exit(main())
