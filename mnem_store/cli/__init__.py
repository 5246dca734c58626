"""The ``mnem`` command line (the console script is ``main``).

The parser and the dispatch live in ``dispatch``, which the worker command
(``commands/serve.py``) imports too; this package only re-exports them.
Each subcommand lives in ``commands/<verb>.py`` with ``register(parser)``
and ``run(args, ctx) -> Outcome``.
"""

from __future__ import annotations

from .dispatch import COMMANDS, FEATURES, Streams, build_parser, invoke, main, self_description

__all__ = ["COMMANDS", "FEATURES", "Streams", "build_parser", "invoke", "main", "self_description"]
