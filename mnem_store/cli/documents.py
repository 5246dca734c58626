"""Nodes as JSON, encoded once per node object and kept for the life of a worker.

A node object never changes (its id is the hash of its bytes), so its
JSON document (``MemoryNode.to_dict()``) can be kept under that id and
spliced into every later answer as an ``orjson.Fragment``.  In a
``mnem serve`` worker, reading the whole of a 10k-node memory again then
costs a dict lookup per node instead of a decompress, a CBOR decode and a
JSON encode (about 14 µs each).  The cache holds at most ``CACHE_BYTES``
of JSON and starts over when full: simple, and a full cache is refilled by
the reads that need it.  A one-shot process, which encodes each node once
and without orjson (``jsonout.py``), gets the plain documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import porcelain
from ..repo import Repo
from . import jsonout

__all__ = ["CACHE_BYTES", "node_documents"]

#: JSON kept at most (the encoded documents' total size).
CACHE_BYTES = 64 << 20

_cache: dict[bytes, Any] = {}
_held = 0


def node_documents(repo: Repo, nodes: Mapping[str, bytes]) -> dict[str, Any]:
    """Each node's JSON document, by node id in the order given (node id -> object id in).

    Nodes not yet encoded are read in one batch.  A node whose document
    orjson cannot encode (text that is not valid UTF-8) is returned as its
    plain dict, so the caller's own fallback still applies, and is not kept.
    """
    global _held
    orjson = jsonout.orjson
    if orjson is None:
        loaded = porcelain.load_nodes(repo, list(dict.fromkeys(nodes.values()))) if nodes else {}
        return {node_id: loaded[raw].to_dict() for node_id, raw in nodes.items()}
    known: dict[bytes, Any] = {raw: _cache[raw] for raw in nodes.values() if raw in _cache}
    missing = [raw for raw in dict.fromkeys(nodes.values()) if raw not in known]
    for raw, node in (porcelain.load_nodes(repo, missing) if missing else {}).items():
        document = node.to_dict()
        try:
            encoded = orjson.dumps(document)
        except TypeError:
            known[raw] = document
            continue
        if _held + len(encoded) > CACHE_BYTES:
            _cache.clear()
            _held = 0
        known[raw] = _cache[raw] = orjson.Fragment(encoded)
        _held += len(encoded)
    return {node_id: known[raw] for node_id, raw in nodes.items()}
