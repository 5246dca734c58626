"""Which bridge capability needs which engine feature: one table, and the one check that reads it.

A ``mnem`` lists what it can do beyond the base contract in its
self-description (``mnem --version --json``'s ``features``, which
mnem_store/cli/dispatch.py's ``FEATURES`` fills).  The binary ships in the
same wheel as the bridge, so normally every feature is there; another
``mnem`` (an older install first on PATH, ``MNEM_BIN`` naming another copy)
may lack one.  A call that needs a missing feature is then refused before
anything runs, with a ``ContractError`` that says what that ``mnem`` cannot
do, which feature it lacks, and how to get one that has it (``FIX``), where
the binary would otherwise fail on an option it does not know, or do less
than was asked.

Three features only choose how a call is sent, so they are no needs and
are not here: ``serve`` and ``serve-framed`` (whether ``Mnem`` keeps a
worker, and how it frames requests) and ``write-reserved`` (a ``mnem``
without it refuses no reserved id, so ``write`` sends it no
``--allow-reserved``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from .binary import FIX, Binary
from .errors import ContractError

__all__ = ["NEEDS", "require"]

#: Each engine feature a bridge call needs -> what a ``mnem`` that does not list it cannot do, and so which
#: calls need it (each call's docstring names its feature under ``Raises: ContractError``).
NEEDS: Final[Mapping[str, str]] = MappingProxyType({
    "diff-range": "has no three-dot diff (diff with merge_base=True)",
    "gc": "cannot collect garbage: drop what no branch reaches and shrink the store (gc)",
    "log-filter": "cannot filter its log by node or thread (log with touching= or threads=)",
    "log-time": "cannot list history by time (log with since= or until=)",
    "namespaces": "cannot list LangGraph's namespaces in one read (namespaces)",
    "ls-last": "cannot list only the last ids (node_ids with last=)",
    "ls-objects": "cannot list object ids (node_objects)",
    "now": "does not take --now, which a clock needs (Mnem with clock=)",
    "pack-file": "cannot stream a pack through a file (upload_pack_to, or receive_pack given a path)",
    "pack-redactions": "cannot carry redaction records in a pack on request, or refuse them (upload_pack_to with "
                       "redactions=, receive_pack with redactions=False)",
    "receive-pusher": "cannot record who pushed (receive_pack with pusher=)",
    "redact": "cannot remove a node version's bytes from history (redact, redactions)",
    "redaction-ranges": "cannot sum its redaction records up, answer ranges of them or take a page of them "
                        "(advertise with summed=True, redaction_ranges, receive_redactions, upload_pack_to with held=)",
    "remotes": "has no remotes (clone, remote_add, remote_remove, remotes, fetch, push, pull)",
    "remotes-http": "cannot serve a remote over HTTP (advertise, upload_pack, upload_pack_to, receive_pack)",
    "revert": "cannot revert by provenance (revert)",
    "search": "cannot search LangGraph's items in one read (search)",
    "search-valid-at": "cannot search or list LangGraph's items by valid time (search or namespaces with valid_at=)",
    "valid-at": "cannot read memory by valid time (memory_valid_at, node_valid_at, valid_times)",
    "write-branch": "cannot write on another branch than HEAD's (write with branch=, or on a Store.on view)",
    "write-erase": "cannot redact what a write deletes in the write's own transaction (write with erase_deleted=)",
    "write-orphan": "cannot write a commit with no parent, letting go of a branch's history (write with orphan=)",
    "gc-plain": "cannot collect garbage without rewriting the store's files (gc with plain_vacuum=)",
    "write-if-absent": "cannot put only what is absent (a write put with if_absent=True)",
})


def require(binary: Binary, feature: str) -> None:
    """Raise ``ContractError`` unless ``binary`` lists ``feature``: the message is the table's, with the fix.

    Args:
        binary: The ``mnem`` about to be run (``Mnem.binary``).
        feature: A key of ``NEEDS``.

    Raises:
        ContractError: ``binary`` does not list ``feature``; nothing has been run.
    """
    if feature not in binary.features:
        raise ContractError(f"the `mnem` at {binary.path} {NEEDS[feature]} (it does not list the `{feature}` "
                            f"feature); {FIX}")
