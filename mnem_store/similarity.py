"""Scoring stored embeddings against a query vector, best field per node, by one of three distances.

An adapter with an embedding index (LangGraph's ``IndexConfig``) stores one
vector per embedded field of a node object (``Backend.vectors``) and asks
for the candidates' similarity to its query's embedding.  A node scores as
its closest field, as LangGraph's own stores do.  The distances are
LangGraph's ``distance_type``s, scored as ``PostgresStore`` scores them so
that a higher score is always closer: ``cosine`` (the cosine similarity,
the default), ``l2`` (minus the Euclidean distance) and ``inner_product``
(the dot product of the vectors as stored, not normalised).  numpy does the
arithmetic: ten thousand 1536-wide vectors are one matrix product of a few
milliseconds, where Python loops would take most of a second; it is
imported only here (``require_numpy``, on one BLAS thread), so no other command pays for it.  Vectors read are
kept, with their norms, on the store's ``vectors`` shelf (``mnem_store.cache``):
a ``mnem serve`` worker reads each value's vectors from the database once.
A search's candidates (a namespace's nodes at one commit, which never
change) are also kept stacked in one matrix on the ``vector stacks``
shelf, so searching them again is one matrix product: gathering ten
thousand small matrices again was most of a search's time.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from typing import Any

from .backend import VectorRow
from .cache import Shelf
from .errors import UsageError

__all__ = ["BLAS_THREADS", "CACHE_OBJECTS", "CACHE_STACKS", "DISTANCES", "require_numpy", "scores"]

#: The distances ``scores`` knows, by LangGraph's names; the first is the default.
DISTANCES = ("cosine", "l2", "inner_product")
#: Rows of candidates per step of an ``l2`` scoring: bounds the temporary difference matrix.
_L2_ROWS = 4096
#: The variable that sets how many threads numpy's BLAS (OpenBLAS) runs; ``require_numpy`` defaults it to one.
BLAS_THREADS = "OPENBLAS_NUM_THREADS"


def require_numpy() -> None:
    """Refuse at once where numpy, the ``langgraph`` extra, is missing, whatever the store holds.

    Checked before anything is read, so ``mnem similar`` answers alike on an
    empty store and a full one: a missing extra is named the first time,
    not after the first vector is written.

    It is also where numpy is first imported, so this is where its BLAS
    (OpenBLAS in numpy's wheels) is held to one thread (``BLAS_THREADS``),
    unless the environment already says how many.  A search's
    matrix-vector product is a fraction of a millisecond on one core; split
    over a thread pool on a busy machine, it waited for a descheduled thread
    (5 to 9 ms of a 10,000-item search beside two CPU-bound processes).
    One thread sums each score in the same order, so scores do not change.

    Raises:
        UsageError: numpy cannot be imported (the message says how to install it).
    """
    os.environ.setdefault(BLAS_THREADS, "1")  # read once, when numpy loads its BLAS
    try:
        import numpy  # noqa: F401
    except ImportError as missing:
        from .install import pip_install

        raise UsageError(f"mnem similar scores embeddings with numpy, which is not installed here ({missing}): "
                         f"{pip_install('langgraph')}") from None


def scores(
    query: bytes, nodes: Mapping[str, bytes] | Callable[[], Mapping[str, bytes]], model: str,
    fetch: Callable[[list[bytes]], Sequence[VectorRow]], shelf: Shelf, limit: int | None = None,
    distance: str = "cosine", *, stacks: Shelf | None = None, key: Hashable = None,
    excluded: Collection[str] = (),
) -> dict[str, float]:
    """``{node id: score}`` best first, ties by node id, for the nodes whose objects have vectors.

    Args:
        query: The query vector, little-endian float32.
        nodes: Candidate node ids and their object ids, or what reads them
            (called only when ``stacks`` does not hold the candidates' matrix).
        model: The name the vectors are stored under.
        fetch: Reads the rows of the objects given (``Vectors.of`` for the model).
        shelf: Where the store keeps vectors read (at most ``CACHE_OBJECTS``).
        limit: At most this many, the best.
        distance: One of ``DISTANCES``: how a field's score is computed (higher is closer).
        stacks: Where the store keeps candidate sets' vectors stacked into
            one matrix (at most ``CACHE_STACKS``), under ``key``.
        key: What names the candidate set for good: content ids (a commit
            and the prefixes or ids read there), so a stack kept under it
            stays true under the cache rule (``mnem_store.cache``).  None
            (or no ``stacks``): stacked for this call only.
        excluded: Candidates left out of this answer (expired ones), by node id.

    Raises:
        UsageError: An unknown ``distance``, or a stored vector's width
            differs from the query's (the index was built with another
            model or ``dims``); or numpy, the ``langgraph`` extra, is
            not installed (the message says how to install it).
    """
    require_numpy()
    import numpy as np

    if distance not in DISTANCES:
        raise UsageError(f"unknown distance {distance!r}: use one of {', '.join(DISTANCES)}")
    wanted = np.frombuffer(query, dtype="<f4")
    stack = _stacked(model, nodes, fetch, shelf, stacks if key is not None else None, key)
    if stack is None:
        return {}
    if stack.matrix.shape[1] != wanted.shape[0]:
        raise UsageError(
            f"the query has {wanted.shape[0]} dimensions but stored vectors of this model do not; "
            "the index was built with other settings: rebuild it for this model"
        )
    similarity = _similarity(stack.matrix, stack.norms, wanted, distance)
    best = similarity if stack.starts is None else np.maximum.reduceat(similarity, stack.starts)  # closest field
    candidates = np.arange(len(stack.ids))
    if excluded:
        gone = [stack.position[node_id] for node_id in excluded if node_id in stack.position]
        if gone:
            candidates = np.delete(candidates, gone)
    if limit is not None and limit < len(candidates):  # the limit best, and every node tied with the last of them
        kept = best[candidates]
        threshold = -np.partition(-kept, max(limit - 1, 0))[max(limit - 1, 0)]
        candidates = candidates[kept >= threshold]
    # Best first; ties in stacking order (candidates ascend), which is node-id order.
    ranked = candidates[np.argsort(-best[candidates], kind="stable")][:limit]
    return dict(zip(stack.id_array[ranked].tolist(), best[ranked].tolist(), strict=True))  # in bulk, not per node


#: Candidate sets (a namespace at one commit, per model) whose vectors a store keeps stacked in one matrix.
CACHE_STACKS = 8


class _Stack:
    """A candidate set's vectors as one (fields, width) matrix, in node-id order, and what it was built from.

    ``starts`` holds each node's first row when some node has several
    fields (None: one row per node).  ``missing`` are the candidates'
    objects that had no vectors when it was stacked: vectors may be added
    to an existing object later (``mnem embed``) without a rebuild, so a
    stack with missing objects looks them up again before it is used.
    """

    def __init__(self, ids: list[str], matrix: Any, norms: Any, starts: Any, missing: set[bytes]) -> None:
        import numpy as np

        self.ids = ids
        self.id_array = np.array(ids, dtype=object)
        self.position = {node_id: i for i, node_id in enumerate(ids)}
        self.matrix = matrix
        self.norms = norms
        self.starts = starts
        self.missing = missing


def _stacked(
    model: str, nodes: Mapping[str, bytes] | Callable[[], Mapping[str, bytes]],
    fetch: Callable[[list[bytes]], Sequence[VectorRow]], shelf: Shelf, stacks: Shelf | None, key: Hashable,
) -> _Stack | None:
    """The candidates' stack: kept under ``(model, key)``, else built from the objects' vectors (None: no vectors)."""
    import numpy as np

    kept: _Stack | None = stacks.find((model, key)) if stacks is not None else None
    if kept is not None and (not kept.missing or not fetch(sorted(kept.missing))):
        return kept
    candidates = nodes() if callable(nodes) else nodes
    known = _cached(model, set(candidates.values()), fetch, shelf)
    owners = sorted((node_id, known[raw]) for node_id, raw in candidates.items() if raw in known)
    missing = {raw for raw in candidates.values() if raw not in known}
    if not owners:
        stack = None
    else:
        try:
            matrix = np.concatenate([matrix for _, (matrix, _) in owners])
        except ValueError:
            matrix = None  # stored vectors of several widths
        if matrix is None:
            raise UsageError(
                "stored vectors of this model differ in width; the index was built with other settings: "
                "rebuild it for this model"
            )
        counts = [rows.shape[0] for _, (rows, _) in owners]
        starts = None if max(counts) == 1 else np.cumsum([0, *counts[:-1]])
        stack = _Stack([node_id for node_id, _ in owners], matrix, np.concatenate([norms for _, (_, norms) in owners]),
                       starts, missing)
    if stacks is not None and stack is not None:
        stacks.keep((model, key), stack)
    return stack


def _similarity(stacked: Any, norms: Any, wanted: Any, distance: str) -> Any:
    """Each stored vector's score for the query, as PostgresStore computes it (higher is closer).

    ``cosine``: ``1 - cosine distance`` (a zero vector scores 0, where
    pgvector gives NaN); ``l2``: minus the Euclidean distance, computed from
    the differences rather than from norms and dot products, which would lose
    the small distances of near-duplicates to rounding; ``inner_product``:
    the plain dot product.
    """
    import numpy as np

    if distance == "inner_product":
        return stacked @ wanted
    if distance == "l2":
        return -np.concatenate([np.linalg.norm(stacked[start : start + _L2_ROWS] - wanted, axis=1)
                                for start in range(0, len(stacked), _L2_ROWS)])
    return (stacked @ wanted) / np.where(norms == 0, 1.0, norms) / (np.linalg.norm(wanted) or 1.0)


#: Objects whose vectors (with their norms, by model) a store keeps; replacing stored vectors is a rebuild.
CACHE_OBJECTS = 200_000


def _cached(
    model: str, objects: set[bytes], fetch: Callable[[list[bytes]], Sequence[VectorRow]], shelf: Shelf,
) -> dict[bytes, tuple[Any, Any]]:
    """Each object's vectors as a (fields, width) matrix with the fields' norms, from the cache or read once.

    The vectors are kept as stored: ``l2`` and ``inner_product`` score them
    unnormalised; ``cosine`` divides by the norms kept beside them.
    """
    import numpy as np

    found = {raw: shelf[model, raw] for raw in objects if (model, raw) in shelf}
    missing = [raw for raw in objects if raw not in found]
    rows: dict[bytes, list[bytes]] = {}
    for raw, _, vector in fetch(missing) if missing else ():
        rows.setdefault(raw, []).append(vector)
    for raw, vectors in rows.items():
        widths = {len(vector) for vector in vectors}
        if len(widths) != 1:
            raise UsageError("stored vectors of one value differ in width: rebuild the index for this model")
        matrix = np.frombuffer(b"".join(vectors), dtype="<f4").reshape(len(vectors), -1)
        found[raw] = shelf.keep((model, raw), (matrix, np.linalg.norm(matrix, axis=1)))
    return found
