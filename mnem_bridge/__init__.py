"""``mnem_bridge``: every Mnemosyne operation as one ``mnem`` invocation, with typed results.

The bridge speaks to the ``mnem`` binary only, through its ``--json``
contract (docs/cli-json.md); it never imports the engine, so any binary
with the contract will do.  ``init``/``open`` return a ``Store`` with
upstream's SDK methods; ``agents`` holds the one-commit-per-call helpers
the adapters share.  Each invocation is logged (DEBUG, and to stderr with
``MNEM_ECHO=1``) as a shell line you can paste to rerun it, and is on
``Store.last_command``.

Module map: ``errors`` (typed errors), ``models`` (result dataclasses; ``reverted``, a revert's;
``redacted``, a redaction's; ``collected``, a garbage collection's),
``process`` (the runner protocol and the one-shot runner), ``worker`` (the
persistent ``mnem serve`` runner; these two are the only places that start a
process), ``binary`` (finding and checking ``mnem``), ``echo`` (shell lines),
``client`` (one invocation), ``store`` (the facade), ``agents`` (atomic writes),
``reserved`` (the node ids of LangGraph checkpoints, which agents are never shown).
"""

from __future__ import annotations

import logging

from . import agents, times
from .address import StoreUrl, store_address
from .binary import Binary, find_binary
from .client import DEFAULT_TIMEOUT, Mnem
from .collected import Collected
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
from .inline import run_inline
from .models import (
    Blame,
    ChangedBy,
    ChangeKind,
    Commit,
    Conflict,
    MemoryNode,
    MemoryPage,
    MergeResult,
    NodeChange,
    ProposedChange,
    Provenance,
    Pusher,
    RedactedNode,
    Redaction,
    SearchHit,
    TimedNode,
    WholeMemory,
)
from .process import Runner, RunResult, SubprocessRunner
from .redacted import Redacted, RedactedVersion, RedactionRecord
from .remotes import Fetched, MovedBranch, Pulled, Pushed, Remote
from .reverted import Reverted, RevertedFact, SkippedFact
from .store import Store, clone, init, open

__all__ = [
    "DEFAULT_TIMEOUT",
    "Binary",
    "BinaryError",
    "BinaryNotFoundError",
    "Blame",
    "BusyError",
    "ChangeKind",
    "ChangedBy",
    "Collected",
    "CommandTimeoutError",
    "Commit",
    "Conflict",
    "ConflictError",
    "ContractError",
    "CorruptStoreError",
    "Fetched",
    "FormatVersionError",
    "InvalidRefError",
    "MemoryNode",
    "MemoryPage",
    "MergeResult",
    "Mnem",
    "MnemError",
    "MovedBranch",
    "NoStoreError",
    "NodeChange",
    "NotFoundError",
    "ProposedChange",
    "ProtocolError",
    "Provenance",
    "Pulled",
    "Pushed",
    "Pusher",
    "Redacted",
    "RedactedNode",
    "RedactedVersion",
    "Redaction",
    "RedactionRecord",
    "Remote",
    "Reverted",
    "RevertedFact",
    "RunResult",
    "Runner",
    "SearchHit",
    "SignalError",
    "SkippedFact",
    "Store",
    "StoreExistsError",
    "StoreIoError",
    "StoreUrl",
    "SubprocessRunner",
    "TimedNode",
    "UsageError",
    "WholeMemory",
    "agents",
    "clone",
    "find_binary",
    "init",
    "open",
    "run_inline",
    "store_address",
    "times",
]

logging.getLogger(__name__).addHandler(logging.NullHandler())
