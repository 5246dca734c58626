"""``python -m mnem_mcp``: the same as the ``mnem-mcp`` command."""

from .cli import main

raise SystemExit(main())
