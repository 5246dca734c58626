"""``MnemosyneStore.at(rev)``: the memory as of one commit, as a read-only BaseStore.

A graph node (or a test, or a debugging session) can hand this to code that
expects a store and see exactly what the agent knew at that commit.  The
commit is resolved once, when the view is made, so a view of ``"main"``
keeps showing that commit after main moves on; since a commit never
changes, the view reads it once and answers every later read from memory.
``MnemosyneStore.valid_at(T)`` is the same view of another memory: what
held at T by the facts' event times, along that commit's history
(``mnem stamps --valid-at``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from langgraph.store.base import BaseStore, Op, PutOp, Result

from mnem_bridge import Store, run_inline

from .hybrid import WHOLE
from .index import Embedded, EmbeddingIndex, similarity
from .keys import check_op
from .ranking import QueryMode, resolve_query_mode
from .snapshot import Snapshot

__all__ = ["MemoryView", "ReadOnlyError"]

logger = logging.getLogger(__name__)


class ReadOnlyError(RuntimeError):
    """A write through a ``MemoryView``: history is not rewritten through a past commit."""


class MemoryView(BaseStore):
    """Read-only BaseStore over the memory recorded by one commit.

    Args:
        store: The bridge store.
        commit: The full commit id to show.
        index: The index the store's queries rank by: a query then ranks
            by the vectors of the values the commit held.
        mode: How the store answers a query (``ranking``), so the past is
            searched as the present is; None, as for the store, means by
            ``index`` if there is one, else the substring filter.
        valid_at: Show what was true at this time (Unix ms) by the facts' event times, along the commit's
            first-parent history, instead of the commit's memory.  A ranked query scores the values the
            commit holds, so by vectors a fact the commit no longer holds is not ranked.
    """

    supports_ttl = False

    def __init__(
        self, store: Store, commit: str, index: EmbeddingIndex | None = None, mode: QueryMode | None = None,
        *, valid_at: int | None = None,
    ) -> None:
        self._store = store
        self.commit = commit
        self.valid_at = valid_at
        self._mode = resolve_query_mode(mode, index is not None)
        self._index = index if self._mode in ("vector", "hybrid") else None
        self._snapshot: Snapshot | None = None

    def __repr__(self) -> str:
        valid = "" if self.valid_at is None else f" valid at {self.valid_at}"
        return f"<MemoryView {self.commit[:12]}{valid} of {str(self._store.root)!r}>"

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Answer read ops from the commit's memory.

        Args:
            ops: Gets, searches and namespace listings.

        Returns:
            One result per op, in order.

        Raises:
            ReadOnlyError: The batch holds a put or delete (nothing is read either).
            InvalidNamespaceError: An op breaks BaseStore's namespace rules.
        """
        ops = list(ops)
        for op in ops:
            check_op(op)
            if isinstance(op, PutOp):
                raise ReadOnlyError(
                    f"the view of commit {self.commit[:12]} is read-only; write through the MnemosyneStore, "
                    f"or branch from this commit (store.branch(name, start={self.commit[:12]!r}))"
                )
        embedded = self._index.embed(ops) if self._index else Embedded()
        if self._snapshot is None:
            self._snapshot = Snapshot.of(self._store.node_times(at=self.commit) if self.valid_at is None
                                         else self._store.valid_times(self.valid_at, at=self.commit))
        memory = self._snapshot
        fields = self._index.fields if self._index else WHOLE
        return [memory.answer(op, similarity(self._store, self._index, op, embedded, self.commit), self._mode, fields)
                for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch``, its waits for ``mnem`` awaited on the event loop (``mnem_bridge.run_inline``)."""
        return await run_inline(self.batch, list(ops))
