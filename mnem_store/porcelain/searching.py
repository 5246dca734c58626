"""The verbs LangGraph's store reads run: a page of items, namespaces, and similarity to a query vector."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, NamedTuple

from ..expiry import live_leases, refuse_rev
from ..repo import Repo
from .reading import nodes_at, read_start

if TYPE_CHECKING:
    from ..search import Condition, Hit, Query
    from ..stamps import Stamped

__all__ = ["Found", "Ranker", "namespaces", "search", "similar"]


def similar(
    repo: Repo, model: str, query: bytes, rev: str | None = None, ids: list[str] | None = None,
    prefixes: list[str] | None = None, *, live: bool = False, limit: int | None = None, distance: str = "cosine",
) -> dict[str, float]:
    """The score of ``query`` against each node's closest embedded field under ``model`` (``similarity``).

    Candidates are the nodes at ``rev`` (default HEAD's commit) among
    ``ids`` and under ``prefixes`` (their union; neither: every node), less
    expired ones with ``live``; nodes with no vector for the model are left
    out.  Scored by ``distance`` (``similarity.DISTANCES``), best first, at most ``limit``.
    """
    from ..similarity import require_numpy

    require_numpy()
    if live:
        refuse_rev(rev, "similar")
    with repo.backend.read():
        start, branch = read_start(repo, rev)
        if start is None:
            return {}
        expired = [nid for nid, expires in live_leases(repo, branch, None).items() if expires is None] if live else []
        return _scored(repo, start, model, query, prefixes, ids, expired, limit, distance)


def _scored(
    repo: Repo, start: bytes, model: str, query: bytes, prefixes: list[str] | None, ids: list[str] | None,
    expired: Collection[str], limit: int | None, distance: str,
) -> dict[str, float]:
    """``similar``'s scores at commit ``start``, inside the caller's read (``mnem similar``, ``mnem search``)."""
    from ..similarity import CACHE_OBJECTS, CACHE_STACKS, scores

    # A commit's nodes under given prefixes or ids never change: their stacked vectors are kept under that.
    key = (start, None if prefixes is None else tuple(sorted(set(prefixes))), None if ids is None else tuple(ids))
    return scores(query, lambda: nodes_at(repo, start, prefixes, ids), model,
                  lambda raws: repo.backend.vectors.of(model, raws),
                  repo.backend.kept.shelf("vectors", CACHE_OBJECTS), limit, distance,
                  stacks=repo.backend.kept.shelf("vector stacks", CACHE_STACKS), key=key, excluded=expired)


class Found(NamedTuple):
    """One item of a search's page (``mnem search``): the hit, its two stamps, and its lease's expiry (None: none)."""

    hit: Hit
    created: int
    updated: int
    expires: int | None


class Ranker(NamedTuple):
    """What a ``vector`` or ``hybrid`` search ranks by: the query's vector, the model, the distance."""

    model: str
    vector: bytes
    distance: str = "cosine"


def search(
    repo: Repo, query: Query, rev: str | None = None, *, live: bool = False, ranker: Ranker | None = None,
    valid_at: int | None = None,
) -> list[Found]:
    """A page of LangGraph items (``mnem_store.search``) at ``rev`` (default HEAD's commit), in one read.

    ``live`` (HEAD's branch only) leaves out items whose lease has run out.
    ``ranker`` is needed by a query in ``vector`` or ``hybrid`` mode.  Only
    the page's items are stamped (created, updated) and returned.
    ``valid_at`` (Unix ms) searches the items valid then along ``rev``'s
    history instead (``valid_at``), stamped in valid time; vectors still
    score the values ``rev`` holds.
    """
    from mnem_ids.items import id_prefix

    from ..search import rank
    from ..stamps import node_stamps

    if live:
        refuse_rev(rev, "search")
    with repo.backend.read():
        start, branch = read_start(repo, rev)
        prefix = id_prefix(query.namespace)
        prefixes = [prefix] if prefix else None
        valid = _valid(repo, start, valid_at, prefixes)
        nodes = nodes_at(repo, start, prefixes) if valid is None else {n: s.object for n, s in valid.items()}
        leases = live_leases(repo, branch, None) if live else {}
        expired = {nid for nid, expires in leases.items() if expires is None and nid in nodes}
        vectors = None
        if ranker is not None and start is not None and query.query and query.mode in ("vector", "hybrid"):
            vectors = _scored(repo, start, ranker.model, ranker.vector, prefixes, None, expired, None, ranker.distance)
        page = rank(repo, start, prefix, nodes, expired, query, vectors, valid_at)
        stamped = valid if valid is not None else node_stamps(repo, start, [hit.id for hit in page])
        return [Found(hit, stamped[hit.id].created, stamped[hit.id].updated, leases.get(hit.id)) for hit in page]


def _valid(
    repo: Repo, start: bytes | None, when: int | None, prefixes: list[str] | None,
) -> dict[str, Stamped] | None:
    """The nodes under ``prefixes`` valid at ``when`` along ``start``'s history (``validtime``); None without it."""
    if when is None:
        return None
    from ..validtime import valid_at as valid

    return valid(repo, start, when, None, prefixes)


def namespaces(
    repo: Repo, conditions: Sequence[Condition] = (), rev: str | None = None, *, live: bool = False,
    max_depth: int | None = None, limit: int = 100, offset: int = 0, valid_at: int | None = None,
) -> list[tuple[str, ...]]:
    """LangGraph's ``list_namespaces`` at ``rev`` (default HEAD's commit), in one read of ids alone.

    Only the ids under the first prefix condition's labels (up to its first
    ``"*"``) are read; ``live`` (HEAD's branch only) leaves out expired ones.
    ``valid_at`` (Unix ms) lists the namespaces of the items valid then along ``rev``'s history.
    """
    from mnem_ids.items import id_prefix

    from ..search import list_namespaces, namespace_sizes

    if live:
        refuse_rev(rev, "namespaces")
    labels = next((condition.id_prefix_labels() for condition in conditions if condition.kind == "prefix"), ())
    prefix = id_prefix(labels)
    with repo.backend.read():
        start, branch = read_start(repo, rev)
        if start is None:
            return []
        valid = _valid(repo, start, valid_at, [prefix] if prefix else None)
        nodes = nodes_at(repo, start, [prefix] if prefix else None) if valid is None else {
            n: s.object for n, s in valid.items()}
        leases = live_leases(repo, branch, None) if live else {}
        expired = [nid for nid, expires in leases.items() if expires is None and nid in nodes]
        return list_namespaces(namespace_sizes(repo, start, prefix, nodes, valid_at), expired, conditions, max_depth,
                               limit, offset)
