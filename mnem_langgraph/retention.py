"""Which of a checkpoint namespace's checkpoints a saver's retention rule keeps, decided from what is stored.

``MnemosyneSaver(keep_last=N, max_age=D)`` removes, as part of each
``put``, the checkpoints of that put's thread and namespace the rule no
longer keeps (``checkpoint.MnemosyneSaver._retired``).  This module is the
rule alone, with no store access, so it can be held to LangGraph's model on
plain data:

* the checkpoint just written is always kept, and counts as one of the
  ``keep_last`` (the newest by id: LangGraph's ids sort by time);
* one the rule keeps is kept whole: LangGraph resumes, replays and lists
  from it with its own channel values and pending writes, none of which
  refers to its parent (sends a task makes are its checkpoint's own
  ``__pregel_tasks`` value since checkpoint format 4, not its parent's
  writes);
* except for ``DeltaChannel`` (beta), whose value a checkpoint need not
  hold: LangGraph rebuilds it by walking the parent chain back to the
  nearest checkpoint that holds a snapshot, replaying the pending writes on
  the way (``BaseCheckpointSaver.get_delta_channel_history``).  A kept
  checkpoint's metadata names those channels
  (``counters_since_delta_snapshot``: a count per channel since its last
  snapshot, absent at a snapshot), so its ancestors are kept back to the
  one where every such channel is snapshotted or had no value yet.

A saver that keeps no history of its checkpoints (``keep_history=False``)
also lets go of its branch's history as it writes, on the cadence
``Cadence`` keeps: that is what holds the store's size steady, as the
checkpoints a rule removes otherwise stay in history.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, NamedTuple

import mnem_bridge

__all__ = ["Cadence", "Rule", "Stamped", "kept", "rule", "stamped"]

#: The metadata key where LangGraph counts, per ``DeltaChannel``, the steps since its last snapshot.
DELTA_COUNTERS = "counters_since_delta_snapshot"

#: The fewest writes between two roots of a saver that keeps no history: what its branch's history may hold.
ROOT_EVERY = 100
#: A collection walks every commit the store keeps; spacing collections by this share of them bounds the walk's
#: cost per write (a twentieth of a commit's decoding), whatever else the store holds.
KEPT_PER_WRITE = 20


class Rule(NamedTuple):
    """What a namespace keeps: its newest ``keep_last`` checkpoints, and only those put less than ``max_age_ms`` ago.

    ``None`` leaves that bound out; a checkpoint goes when either bound it has
    says so.
    """

    keep_last: int | None
    max_age_ms: int | None


class Stamped(NamedTuple):
    """A stored checkpoint as retention weighs it."""

    checkpoint_id: str
    parent: str | None
    #: Its channels' versions: the channel values it reads.
    versions: Mapping[str, Any]
    #: The ``DeltaChannel`` channels whose value it does not hold (rebuilt from its ancestors).
    unsnapshotted: frozenset[str]
    #: When it was put, by the store's clock (Unix ms).
    at: int


def rule(keep_last: int | None, max_age: timedelta | None) -> Rule | None:
    """The saver's options checked: ``None`` when both are ``None`` (no retention).

    Raises:
        mnem_bridge.UsageError: ``keep_last`` is not a whole number of at least 1, or ``max_age``
            not a positive ``timedelta`` of at least a millisecond (the store's clock counts milliseconds).
    """
    if keep_last is None and max_age is None:
        return None
    if keep_last is not None and (not isinstance(keep_last, int) or isinstance(keep_last, bool) or keep_last < 1):
        raise mnem_bridge.UsageError(f"keep_last must be a whole number of checkpoints of at least 1 (the one just "
                                     f"written), not {keep_last!r}; None keeps every checkpoint")
    age_ms = None
    if max_age is not None:
        if not isinstance(max_age, timedelta) or max_age < timedelta(milliseconds=1):
            raise mnem_bridge.UsageError(f"max_age must be a datetime.timedelta of at least a millisecond, not "
                                         f"{max_age!r}; None keeps checkpoints of any age")
        age_ms = max_age // timedelta(milliseconds=1)
    return Rule(keep_last, age_ms)


def stamped(checkpoint_id: str, checkpoint: Mapping[str, Any], metadata: Mapping[str, Any], parent: str | None,
            at: int) -> Stamped:
    """A checkpoint as its node holds it (``stored.checkpoint_node``), put at ``at``.

    A channel counts as not snapshotted only if the checkpoint has a version
    of it: one never written has nothing to rebuild, however long LangGraph
    counts its steps.
    """
    versions = checkpoint["channel_versions"]
    counters = metadata.get(DELTA_COUNTERS)
    delta = frozenset(name for name in counters if name in versions) if isinstance(counters, Mapping) else frozenset()
    return Stamped(checkpoint_id, parent, versions, delta, at)


def kept(found: Mapping[str, Stamped], newest: str, rule: Rule, now: int) -> set[str]:
    """The ids of ``found`` (a namespace's checkpoints, ``newest`` among them) that ``rule`` keeps at ``now``.

    The rule's own choice (``newest`` always in it), then every ancestor a
    kept checkpoint's ``DeltaChannel`` values are rebuilt from (module
    docstring).
    """
    others = sorted((cid for cid in found if cid != newest), reverse=True)
    if rule.keep_last is not None:
        others = others[:rule.keep_last - 1]
    if rule.max_age_ms is not None:
        others = [cid for cid in others if now - found[cid].at < rule.max_age_ms]
    chosen = {newest, *others}
    for cid in list(chosen):
        waiting = found[cid].unsnapshotted
        parent = found[cid].parent
        while waiting and parent is not None and parent in found:
            chosen.add(parent)
            ancestor = found[parent]
            waiting = waiting & ancestor.unsnapshotted
            parent = ancestor.parent
    return chosen


class Cadence:
    """When a saver that keeps no history writes its next commit as a root, then collects what it let go.

    Every ``ROOT_EVERY`` writes, or one per ``KEPT_PER_WRITE`` commits the
    last collection kept if that is more: the branch's history then holds at
    most that many commits, and the store at most that many writes' bytes
    beyond what it keeps, while a collection's walk of the whole store costs
    each write a bounded share.  Counted per saver object, across threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._since = 0
        self._every = ROOT_EVERY

    def due(self) -> bool:
        """Count one write; whether it is the one to write as a root (the count then starts again)."""
        with self._lock:
            self._since += 1
            if self._since < self._every:
                return False
            self._since = 0
            return True

    def collected(self, kept_commits: int | None) -> None:
        """A collection after a root kept ``kept_commits`` commits (``None``: not said): space the next by it."""
        with self._lock:
            self._every = max(ROOT_EVERY, (kept_commits or 0) // KEPT_PER_WRITE)

    def missed(self) -> None:
        """The collection after a root failed: make the next write a root again, so the next collection comes."""
        with self._lock:
            self._since = self._every
