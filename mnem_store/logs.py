"""The engine's loggers, with ``logging`` imported only when something is logged.

The engine logs rarely: a damaged snapshot it rebuilt around, a store it
upgraded, a writer's leftovers it removed.  Importing ``logging`` (it
brings ``traceback``, ``threading``, ``string`` and ``weakref``) costs a
one-shot ``mnem`` read about a tenth of its start-up, so no engine module
imports it at load time; each asks here for its logger at the moment it
logs.

The package logger gets a ``NullHandler`` the first time: without one,
logging's last resort prints the engine's warnings on stderr, which the
``--json`` contract keeps empty and upstream's text output does not have.
Damage is reported by ``mnem verify``; a host that wants the warnings adds
a handler to ``mnem_store``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

__all__ = ["logger"]


def logger(name: str) -> logging.Logger:
    """The logger called ``name`` (a module's ``__name__``), with the package's ``NullHandler`` in place."""
    import logging

    package = logging.getLogger(__package__)
    if not any(isinstance(handler, logging.NullHandler) for handler in package.handlers):
        package.addHandler(logging.NullHandler())
    return logging.getLogger(name)
