"""``MnemosyneStore.at(rev)``: the memory as of one commit, as a read-only BaseStore.

A graph node (or a test, or a debugging session) can hand this to code that
expects a store and see exactly what the agent knew at that commit.  The
commit is resolved once, when the view is made, so a view of ``"main"``
keeps showing that commit after main moves on.  Each read is answered as
the store answers it (``reads``, one ``mnem`` call per op) at that commit;
the engine keeps what a commit's reads need by content id, so the view
holds nothing itself.  ``MnemosyneStore.valid_at(T)`` is the same view of
another memory: what held at T by the facts' event times, along that
commit's history (``--valid-at``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from langgraph.store.base import BaseStore, GetOp, ListNamespacesOp, Op, PutOp, Result, SearchOp

from mnem_bridge import Store, run_inline

from . import reads
from .convert import Entry
from .index import Embedded, EmbeddingIndex
from .keys import check_op, node_id
from .ranking import QueryMode, resolve_query_mode

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
        asked = [node_id(op.namespace, op.key) for op in ops if isinstance(op, GetOp) and op.namespace]
        timed = {} if not asked else self._store.node_times(asked, at=self.commit) if self.valid_at is None else (
            self._store.valid_times(self.valid_at, asked, at=self.commit))  # the gets: one read
        results: list[Result] = []
        for op in ops:
            if isinstance(op, SearchOp):
                hits = reads.search(self._store, op, self._mode, self._index, embedded, self.commit, self.valid_at)
                results.append(reads.search_items(hits))
            elif isinstance(op, ListNamespacesOp):
                results.append(reads.namespaces(self._store, op, self.commit, self.valid_at))
            else:
                assert isinstance(op, GetOp)
                found = timed.get(node_id(op.namespace, op.key)) if op.namespace else None
                results.append(None if found is None else Entry.of(tuple(op.namespace), op.key, found).item())
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch``, its waits for ``mnem`` awaited on the event loop (``mnem_bridge.run_inline``)."""
        return await run_inline(self.batch, list(ops))
