"""What an open store keeps between reads, and the one rule that keeps it true.

Every write transaction moves the store's *generation* (a ``meta`` row)
before it commits, whoever writes: a commit, a ref move, a checkout, TTL
expiry, vectors, an import.  Every read transaction reads the generation
first, and ``Kept.observe`` compares it with the one the kept values were
learnt at.  Nothing else invalidates anything, so a write by any process,
on either backend, is seen by the next read of every other.

Two things are kept, each for a measured reason (BENCHMARKS.md, "What the
caches buy"):

* the **memo**: what the database said (HEAD, tips, graph rows, objects,
  names), true at one generation; any move empties it;
* the **shelves**: values fixed by a content id (a commit's facts and
  change set, a node's JSON, a state's image, stamps walked from a commit,
  an object's vectors, a commit's nodes under a prefix and their vectors
  stacked for ``similar``).  An ordinary write only adds rows, so what an id
  names stays true and the shelves survive it.  A *rebuild* (``reindex``,
  vectors replaced) may change what derived rows say about an existing id,
  so it starts a new *epoch*: the generation's high bits, and every shelf
  empties.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

__all__ = ["EPOCH_BITS", "GENERATION_KEY", "MEMO_LIMIT", "ROWS", "Kept", "Shelf", "epoch"]

#: The ``meta`` row holding the generation: ``epoch << EPOCH_BITS | writes in that epoch``.
GENERATION_KEY = "generation"
EPOCH_BITS = 32

#: Entries the memo may hold before a read starts it over (rows, ids and a few decoded values).
MEMO_LIMIT = 20_000
#: The memo's entries (keyed ``(kind, ...)``) that are rows any statement can read again, even inside the write
#: that wrote them: dropping them midway (``Kept.shed``) costs a query for each asked again, never a wrong answer.
#: The rest (locks held, HEAD, branch tips a write moved) are what a transaction holds, and stay.
ROWS = frozenset({"object", "graph", "segments"})


def epoch(generation: int | None) -> int | None:
    """The rebuild count a generation belongs to (None for a store never written since generations began)."""
    return None if generation is None else generation >> EPOCH_BITS


class Shelf(OrderedDict[Any, Any]):
    """Values by content id, least recently used dropped first past ``size`` entries."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def find(self, key: Any) -> Any:
        """The value kept under ``key`` (now the most recently used), or None."""
        found = self.get(key)
        if found is not None:
            self.move_to_end(key)
        return found

    def keep(self, key: Any, value: Any) -> Any:
        """Keep ``value`` under ``key`` and return it."""
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)
        return value


class Kept:
    """One open store's memo and shelves, and the generation and epoch they were learnt at."""

    def __init__(self) -> None:
        self.memo: dict[Any, Any] = {}
        self._shelves: dict[str, Shelf] = {}
        self._generation: int | None = None  # the memo's (None: learnt in a write, or nothing learnt yet)
        self._epoch: int | None = None  # the shelves'

    def shelf(self, name: str, size: int) -> Shelf:
        """The shelf ``name`` (made on first use, holding at most ``size`` entries)."""
        found = self._shelves.get(name)
        if found is None:
            found = self._shelves[name] = Shelf(size)
        return found

    def observe(self, generation: int | None) -> None:
        """The rule, applied by every read transaction to the generation it read first."""
        if generation != self._generation or len(self.memo) > MEMO_LIMIT:
            self.memo.clear()
            self._generation = generation
        if epoch(generation) != self._epoch:
            self._shelves.clear()
            self._epoch = epoch(generation)

    def shed(self) -> None:
        """Drop the memo's rows (``ROWS``), keeping the rest.

        A write keeps every row it reads or writes until it ends, which is
        right for a commit and unbounded for a write of a whole pack: that
        one sheds as it goes (``transfer.unpack``), so its memory does not
        grow with the pack.
        """
        for key in [key for key in self.memo if isinstance(key, tuple) and key[0] in ROWS]:
            del self.memo[key]

    def forget_memo(self) -> None:
        """Empty the memo: a write begins or ends, and what it learns is its own (the next read learns afresh)."""
        self.memo.clear()
        self._generation = None

    def forget(self) -> None:
        """Trust nothing kept: ``verify`` checks the store as it is on disk."""
        self.forget_memo()
        self._shelves.clear()
