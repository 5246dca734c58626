"""Scoring stored embeddings against a query vector: cosine similarity, best field per node.

An adapter with an embedding index (LangGraph's ``IndexConfig``) stores one
vector per embedded field of a node object (``Backend.vectors``) and asks
for the candidates' similarity to its query's embedding.  A node scores as
its closest field, as LangGraph's own stores do.  numpy does the
arithmetic: ten thousand 1536-wide vectors are one matrix product of a few
milliseconds, where Python loops would take most of a second; it is
imported only here, so no other command pays for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .backend import VectorRow
from .errors import UsageError

__all__ = ["scores"]


def scores(query: bytes, nodes: Mapping[str, bytes], rows: Sequence[VectorRow]) -> dict[str, float]:
    """``{node id: cosine similarity}`` best first, for the nodes whose objects have rows; ties by node id.

    Args:
        query: The query vector, little-endian float32.
        nodes: Candidate node ids and their object ids.
        rows: ``(object id, field, vector)`` rows of those objects.

    Raises:
        UsageError: A stored vector's width differs from the query's (the
            index was built with another model or ``dims``).
    """
    import numpy as np

    owners: dict[bytes, list[str]] = {}
    for node_id, raw in nodes.items():
        owners.setdefault(raw, []).append(node_id)
    kept = [row for row in rows if row[0] in owners]
    if not kept:
        return {}
    wanted = np.frombuffer(query, dtype="<f4")
    width = wanted.shape[0]
    if any(len(vector) != 4 * width for _, _, vector in kept):
        raise UsageError(
            f"the query has {width} dimensions but stored vectors of this model do not; "
            "the index was built with other settings: rebuild it for this model"
        )
    matrix = np.frombuffer(b"".join(vector for _, _, vector in kept), dtype="<f4").reshape(len(kept), width)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(wanted) or 1.0)
    similarity = (matrix @ wanted) / np.where(norms == 0, 1.0, norms)
    best: dict[str, float] = {}
    for (raw, _, _), value in zip(kept, similarity.tolist(), strict=True):
        for node_id in owners[raw]:
            if value > best.get(node_id, -2.0):
                best[node_id] = value
    return dict(sorted(best.items(), key=lambda pair: (-pair[1], pair[0])))
