"""The ``vectors`` table: embeddings of node objects by model and field, an adapter's search index.

A row is ``(model, node object id, field path, vector)``, the vector as
little-endian float32 bytes.  The object id hashes the node's content and
provenance, so a row serves every commit and branch holding that value and
is never stale: a new value is a new object with rows of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..backend import VectorRow, Vectors
from .leases import in_list
from .session import Session

__all__ = ["SqlVectors"]


class SqlVectors(Vectors):
    """Vectors as rows of one table, over one ``Session``."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def add(self, model: str, rows: Iterable[VectorRow]) -> None:
        """Upsert rows by ``(model, object, field)``.

        Vectors are kept by ``(model, object)`` on the store's shelves, so
        adding to or replacing an object's vectors is a rebuild
        (``Session.rebuild``); the usual write, vectors for new values only,
        is not.
        """
        rows = list(rows)
        if any(self._stored(model, {raw for raw, _, _ in rows})):
            self.session.rebuild()
        self.session.executemany(
            "INSERT INTO vectors (model, object, field, vector) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (model, object, field) DO UPDATE SET vector = excluded.vector",
            [(model, raw, field, vector) for raw, field, vector in rows],
        )

    def _stored(self, model: str, objects: set[bytes]) -> Iterator[bool]:
        """Whether each bounded chunk of ``objects`` has any stored row of the model (lazily, chunk by chunk)."""
        for marks, chunk in in_list(list(objects)):
            yield self.session.execute(
                f"SELECT 1 FROM vectors WHERE model = ? AND object IN ({marks}) LIMIT 1", (model, *chunk)
            ).fetchone() is not None

    def of(self, model: str, objects: Iterable[bytes]) -> list[VectorRow]:
        """Rows of the model for these objects, a bounded ``IN`` list per statement."""
        found: list[VectorRow] = []
        for marks, chunk in in_list(list(objects)):
            found += [
                (bytes(raw), field, bytes(vector))
                for raw, field, vector in self.session.execute(
                    f"SELECT object, field, vector FROM vectors WHERE model = ? AND object IN ({marks})",
                    (model, *chunk),
                )
            ]
        return found
