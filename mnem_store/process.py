"""The ``mnem`` process: what the console script and ``python -m mnem_store`` run.

A one-shot command lives for tens of milliseconds, and Python's cyclic
garbage collector takes a tenth of that for nothing: it runs again and
again during the imports, which allocate thousands of objects and free
almost none, and it walks every object once more as the interpreter shuts
down.  So the collector is off while the process starts; what start-up made
(modules, classes, functions: alive until exit anyway) is then frozen,
never walked again, and the collector is on for the command itself; what
is left when the command returns is frozen too before the interpreter
shuts down.  A worker (``mnem serve``) and ``mnem ui`` run their whole
life inside the command, with the collector on.

Only this module does this: code that imports ``mnem_store.cli`` (the
worker command, tests, benchmarks) keeps its collector as it was.
"""

from __future__ import annotations

import gc

gc.disable()

from .cli.dispatch import main as run_command  # noqa: E402  (imported with the collector off, on purpose)

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run one ``mnem`` command line on this process's streams; returns the exit status."""
    gc.freeze()
    gc.enable()
    try:
        return run_command(argv)
    finally:
        gc.freeze()
