"""Which node versions a provenance request names: the one rule ``mnem revert`` and ``mnem redact`` both match by.

A request gives any of four fields: three of the node's own provenance
(``source``, ``agent_step`` as ``--step``, ``observation``) and the
``author`` of the commit that wrote the version.  A version matches when
every field given holds, by exact text (a field not given matches
anything).  A removal, or a version whose bytes were redacted, carries no
provenance of its own, so it never matches a node field; the author of the
commit that wrote it still names it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from .objects import MemoryNode

__all__ = ["ProvenanceMatch"]


class ProvenanceMatch(NamedTuple):
    """The provenance fields a request gives (None: any), and whether a version matches them."""

    source: str | None = None
    step: str | None = None
    observation: str | None = None
    author: str | None = None

    def of_node(self) -> bool:
        """Whether a field of the node's own provenance is given (so the version's node must be read)."""
        return self.source is not None or self.step is not None or self.observation is not None

    def is_empty(self) -> bool:
        """Whether no field is given (every version matches)."""
        return self.author is None and not self.of_node()

    def by(self, authors: Iterable[str]) -> bool:
        """Whether one of the commits that wrote a version (their ``authors``, read lazily) is the author given."""
        return self.author is None or any(author == self.author for author in authors)

    def carried_by(self, node: MemoryNode | None) -> bool:
        """Whether ``node`` (None: a removal) holds every field of the node's own provenance given."""
        if not self.of_node():
            return True
        if node is None or node.redacted is not None:
            return False
        found = node.provenance
        return all(wanted is None or wanted == have for wanted, have in (
            (self.source, found.source), (self.step, found.agent_step), (self.observation, found.observation)))
