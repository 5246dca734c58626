"""``mnem_bridge``: every Mnemosyne operation as one ``mnem`` invocation, with typed results.

The bridge speaks to the ``mnem`` binary only, through its ``--json``
contract (docs/cli-json.md); it never imports the engine, so any binary
with the contract will do.

Module map: ``errors`` (typed errors), ``models`` (result dataclasses),
``process`` (the only place that spawns; the pluggable runner), ``binary``
(finding and checking ``mnem``), ``echo`` (shell lines), ``client`` (one
invocation).
"""

from __future__ import annotations

import logging

from .binary import Binary, find_binary
from .client import DEFAULT_TIMEOUT, Mnem
from .errors import (
    BinaryError,
    BinaryNotFoundError,
    BusyError,
    CommandTimeoutError,
    ConflictError,
    ContractError,
    CorruptStoreError,
    FormatVersionError,
    InvalidRefError,
    MnemError,
    NoStoreError,
    NotFoundError,
    ProtocolError,
    SignalError,
    StoreExistsError,
    StoreIoError,
    UsageError,
)
from .models import Blame, Commit, Conflict, MemoryNode, MergeResult, NodeChange, Provenance
from .process import Runner, RunResult, SubprocessRunner

__all__ = [
    "Mnem",
    "DEFAULT_TIMEOUT",
    "Binary",
    "find_binary",
    "Runner",
    "RunResult",
    "SubprocessRunner",
    "Provenance",
    "MemoryNode",
    "Commit",
    "NodeChange",
    "Conflict",
    "MergeResult",
    "Blame",
    "MnemError",
    "NotFoundError",
    "InvalidRefError",
    "ConflictError",
    "CorruptStoreError",
    "FormatVersionError",
    "StoreExistsError",
    "NoStoreError",
    "StoreIoError",
    "BusyError",
    "UsageError",
    "ProtocolError",
    "SignalError",
    "CommandTimeoutError",
    "BinaryError",
    "BinaryNotFoundError",
    "ContractError",
]

logging.getLogger(__name__).addHandler(logging.NullHandler())
