"""Our own ``mnem``: a format-compatible Mnemosyne engine and CLI in pure Python.

Object ids are byte-identical to upstream's (canonical CBOR + BLAKE3); the
store is SQLite under ``.mnem/``; the CLI matches upstream's text output and
adds a ``--json`` contract (``docs/cli-json.md``).  Nothing else in this
repository imports this package: the bridge talks to it as a binary.
"""

__all__ = ["CONTRACT_VERSION", "__version__"]

__version__ = "0.1.0"
#: Version of the ``--json`` contract documented in docs/cli-json.md.
CONTRACT_VERSION = 1
