"""Commit-graph queries: ancestry and merge bases (first-parent chains are ``Repo.first_parent_chain``).

A ``Graph`` is built for one command and memoises what it decodes (commits,
ancestor sets, a few state maps), because merge, blame and bisect each ask
the same questions several times and histories may hold 10k commits.  Every
walk is linear in the commits it visits; nothing here is quadratic.

Decoded commits are also kept across commands, a few thousand per open
store, on its ``commits`` shelf (``mnem_store.cache``): a commit's id hashes
its content, so what an id decodes to never changes, and a worker (``mnem
serve``) answering one read after another asks for the same recent commits
again and again (a LangGraph ``get`` reads the commit that last set its
item).  Being a shelf, they go when the shelves go: a rebuild's new epoch,
and ``verify``, which trusts nothing kept.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable

from .errors import InvalidRefError
from .objects import Commit
from .repo import Nodes, Repo

__all__ = ["Graph"]

#: How many decoded state maps one command keeps; states can be large, commits are not.
STATE_CACHE_SIZE = 32
#: How many decoded commits an open store keeps across commands (the least recently read goes first).
COMMIT_CACHE_SIZE = 4096


class Graph:
    """Read-only queries over one store's commit graph, memoised for one command."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self._commits: dict[bytes, Commit] = {}
        self._ancestors: dict[bytes, frozenset[bytes]] = {}
        self._states: OrderedDict[bytes, Nodes] = OrderedDict()
        self._decoded = repo.backend.kept.shelf("commits", COMMIT_CACHE_SIZE)

    def commit(self, raw: bytes) -> Commit:
        """The commit ``raw`` names, decoded once per graph (and, for recent ones, once per open store)."""
        found = self._commits.get(raw)
        if found is None:
            found = self._decoded.find(raw)
            if found is None:
                found = self._decoded.keep(raw, self.repo.commit_obj(raw))
            self._commits[raw] = found
        return found

    def parents(self, raw: bytes) -> tuple[bytes, ...]:
        """The parents of commit ``raw``, first parent first."""
        return self.commit(raw).parents

    def nodes(self, raw: bytes) -> Nodes:
        """The state map of a commit (a small LRU: blame and merge revisit a few states)."""
        found = self._states.get(raw)
        if found is not None:
            self._states.move_to_end(raw)
            return found
        found = self._states[raw] = self.repo.commit_nodes(raw)
        if len(self._states) > STATE_CACHE_SIZE:
            self._states.popitem(last=False)
        return found

    def ancestors(self, start: bytes) -> frozenset[bytes]:
        """Every commit reachable from ``start``, ``start`` included."""
        found = self._ancestors.get(start)
        if found is None:
            found = self._ancestors[start] = frozenset(self._reach([start]))
        return found

    def _reach(self, starts: Iterable[bytes]) -> set[bytes]:
        """``starts`` and every commit reachable from them, in one walk."""
        seen: set[bytes] = set()
        queue = deque(starts)
        while queue:
            raw = queue.popleft()
            if raw not in seen:
                seen.add(raw)
                queue.extend(p for p in self.parents(raw) if p not in seen)
        return seen

    def is_ancestor(self, ancestor: bytes, descendant: bytes) -> bool:
        """Whether ``ancestor`` is ``descendant`` or reachable from it (False when this store lacks it).

        Corrected times grow along every parent link, so the walk leaves out
        every commit dated at or below ``ancestor``'s: it reads only what lies
        between the two, not the whole history (a push's fast-forward check).
        """
        if ancestor == descendant or ancestor in self._ancestors.get(descendant, ()):
            return True
        target = self.repo.states.graph(ancestor)
        if target is None:
            return False
        stack, seen = [descendant], set()
        while stack:
            raw = stack.pop()
            if raw == ancestor:
                return True
            if raw not in seen:
                seen.add(raw)
                row = self.repo.states.graph(raw)
                if row is not None and row.corrected > target.corrected:
                    stack.extend(self.parents(raw))
        return False

    def merge_bases(self, a: bytes, b: bytes) -> list[bytes]:
        """The lowest common ancestors of ``a`` and ``b``, newest first (time, then id, descending).

        A common ancestor is dropped when it is a proper ancestor of another
        common ancestor.  One walk from the parents of every common ancestor
        marks exactly those (an ancestor of a common ancestor is common), so
        this stays linear instead of walking from each candidate.
        """
        common = self.ancestors(a) & self.ancestors(b)
        bases = common - self._reach(p for c in common for p in self.parents(c))
        return sorted(bases, key=lambda raw: (self.commit(raw).time, raw), reverse=True)

    def merge_base(self, a: bytes, b: bytes) -> bytes:
        """The single merge base; upstream refuses disjoint and criss-cross histories."""
        bases = self.merge_bases(a, b)
        if not bases:
            raise InvalidRefError(f"{a.hex()} and {b.hex()} have no common ancestor")
        if len(bases) > 1:
            raise InvalidRefError(
                f"{a.hex()} and {b.hex()} have {len(bases)} merge bases (criss-cross history); merge one side first"
            )
        return bases[0]
