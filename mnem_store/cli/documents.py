"""Nodes as JSON, encoded once per node object and kept for the life of a worker.

A node object never changes (its id is the hash of its bytes), so its
JSON document (``MemoryNode.to_dict()``) can be kept under that id and
spliced into every later answer as an ``orjson.Fragment``.  In a
``mnem serve`` worker, reading the whole of a 10k-node memory again then
costs a dict lookup per node instead of a decompress, a CBOR decode and a
JSON encode (about 14 µs each).  The documents are kept on the store's
``documents`` shelf (``mnem_store.cache``), at most ``CACHE_NODES`` of them.
A one-shot process, which encodes each node once and without orjson
(``jsonout.py``), gets the plain documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import porcelain
from ..repo import Repo
from . import jsonout

__all__ = ["CACHE_NODES", "node_documents"]

#: Node documents a store keeps at most (a few hundred bytes of JSON each).
CACHE_NODES = 100_000


def node_documents(repo: Repo, nodes: Mapping[str, bytes]) -> dict[str, Any]:
    """Each node's JSON document, by node id in the order given (node id -> object id in).

    Nodes not yet encoded are read in one batch.  A node whose document
    orjson cannot encode (text that is not valid UTF-8) is returned as its
    plain dict, so the caller's own fallback still applies, and is not kept.
    """
    orjson = jsonout.orjson
    if orjson is None:
        loaded = porcelain.load_nodes(repo, list(dict.fromkeys(nodes.values()))) if nodes else {}
        return {node_id: loaded[raw].to_dict() for node_id, raw in nodes.items()}
    shelf = repo.backend.kept.shelf("documents", CACHE_NODES)
    known: dict[bytes, Any] = {raw: shelf[raw] for raw in nodes.values() if raw in shelf}
    missing = [raw for raw in dict.fromkeys(nodes.values()) if raw not in known]
    for raw, node in (porcelain.load_nodes(repo, missing) if missing else {}).items():
        document = node.to_dict()
        try:
            encoded = orjson.dumps(document)
        except TypeError:
            known[raw] = document
            continue
        known[raw] = shelf.keep(raw, orjson.Fragment(encoded))
    return {node_id: known[raw] for node_id, raw in nodes.items()}
