"""Our own ``mnem``: a format-compatible Mnemosyne engine and CLI in pure Python.

Object ids are byte-identical to upstream's (canonical CBOR + BLAKE3); the
store is SQLite under ``.mnem/``; the CLI matches upstream's text output and
adds a ``--json`` contract (``docs/cli-json.md``).  Nothing else in this
repository imports this package: the bridge talks to it as a binary.
"""

import logging

__all__ = ["CONTRACT_VERSION", "__version__"]

__version__ = "0.1.0"
#: Version of the ``--json`` contract documented in docs/cli-json.md.
CONTRACT_VERSION = 1

# A library's logger gets a NullHandler: without one, logging's last resort prints the engine's warnings
# (a damaged snapshot it rebuilt around) on stderr, which the --json contract keeps empty and upstream's
# text output does not have.  Damage is reported by `mnem verify`; a host that wants the warnings adds a handler.
logging.getLogger(__name__).addHandler(logging.NullHandler())
