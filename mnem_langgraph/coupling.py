"""Checkpoint-coupled memory, the store's side: which branch a running step reads and writes.

A ``MnemosyneSaver(couple_memory=True)`` records, with each checkpoint, the
memory branch its run uses (``checkpoint.MemoryPin``): ``None`` for HEAD's
branch, or the ``replay/...`` branch a fork (a replay from a past
checkpoint) started.  ``MnemosyneStore`` and the saver never reference each
other: inside a LangGraph task, ``get_config()`` carries the saver the
graph was compiled with (``__pregel_checkpointer``), the thread, and the
checkpoint the step started from (``checkpoint_map[""]``, the root
graph's, which is also what a subgraph's task sees for the root); the pin
of that checkpoint names the branch.  Outside a run, with another
checkpointer, a saver without the flag or one on another store, nothing
changes.

With LangGraph's default durability (``"async"``) a step can start before
the checkpoint it starts from is stored: the put runs in the background.
The pin is then waited for (the saver signals each put it has made), never
guessed.  With ``durability="exit"`` no checkpoint is stored during the run,
so nothing is waited for and the run uses HEAD's branch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import mnem_bridge

from .checkpoint import MnemosyneSaver

__all__ = ["Coupling", "abranch_of", "branch_of", "coupling", "on_branch"]

#: Where a task's config holds the graph's checkpointer and the checkpoints its step started from, by
#: namespace (LangGraph's ``CONFIG_KEY_CHECKPOINTER`` and ``CONFIG_KEY_CHECKPOINT_MAP``, private there;
#: tests/langgraph/test_checkpoint_replay.py fails if they move).
CHECKPOINTER_KEY, CHECKPOINT_MAP_KEY = "__pregel_checkpointer", "checkpoint_map"
#: Where it holds the run's durability (``CONFIG_KEY_DURABILITY``): ``"sync"``, ``"async"`` or ``"exit"``.
DURABILITY_KEY = "__pregel_durability"


class Coupling(NamedTuple):
    """A running step's coupled saver, its thread and the root checkpoint it started from."""

    saver: MnemosyneSaver
    thread_id: str
    checkpoint_id: str
    #: Whether the checkpoint is stored during the run (durability other than ``"exit"``), so may be waited for.
    stored: bool


def coupling(store: mnem_bridge.Store) -> Coupling | None:
    """The coupling of the LangGraph step running now, without a call to ``mnem`` (``None``: none).

    Read in the caller's context (for ``abatch``, before the work moves
    into ``run_inline``), as ``runinfo`` reads the run's provenance.
    """
    try:
        from langgraph.config import get_config

        config = get_config()
    except (ImportError, RuntimeError):
        return None
    configurable: Mapping[str, Any] = config.get("configurable") or {}
    saver = configurable.get(CHECKPOINTER_KEY)
    checkpoint_id = (configurable.get(CHECKPOINT_MAP_KEY) or {}).get("")
    thread_id = configurable.get("thread_id")
    if (not isinstance(saver, MnemosyneSaver) or not saver.couple_memory or saver.root != store.root
            or not checkpoint_id or thread_id is None):
        return None
    return Coupling(saver, str(thread_id), str(checkpoint_id), configurable.get(DURABILITY_KEY) != "exit")


def branch_of(coupled: Coupling | None) -> str | None:
    """The branch a coupled step's batch uses (``None``: HEAD's), waiting for its checkpoint's put if need be."""
    if coupled is None:
        return None
    pin = coupled.saver.memory_pin(coupled.thread_id, coupled.checkpoint_id, wait=coupled.stored)
    return pin.branch if pin else None


async def abranch_of(coupled: Coupling | None) -> str | None:
    """``branch_of`` for ``abatch``: the wait is awaited, so the put it waits for can run on the same loop."""
    if coupled is None:
        return None
    pin = await coupled.saver.amemory_pin(coupled.thread_id, coupled.checkpoint_id, wait=coupled.stored)
    return pin.branch if pin else None


def on_branch(store: mnem_bridge.Store, branch: str | None) -> mnem_bridge.Store:
    """The store a batch uses: ``store`` itself for HEAD's branch (``None``), else its view on ``branch``.

    A step whose checkpoint pins no branch (a run never replayed, or a
    checkpoint without a pin) uses HEAD's branch exactly as an uncoupled
    store does.  On a replay branch the view (``Store.on``) reads at the
    branch's tip and writes onto it, HEAD untouched; a branch made before
    memory had any commit reads as empty until its first write creates it.
    TTL leases are applied only to HEAD's branch, so such a step's reads
    do not hide expired items nor refresh leases (the adapter asks for no
    live read on a view, which refuses one); a put's TTL is still recorded
    on the branch.
    """
    return store if branch is None else store.on(branch)
