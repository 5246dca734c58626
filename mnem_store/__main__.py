"""``python -m mnem_store`` runs the ``mnem`` command line, as the console script does."""

import sys

from .process import main

sys.exit(main())
