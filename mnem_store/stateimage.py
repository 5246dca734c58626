"""A state's canonical bytes, kept cheap to edit.

A state's id is BLAKE3 of its *whole* canonical CBOR encoding, so every
commit has to produce those bytes: about 45 bytes per node, 4.5 MB at 100k
nodes.  Hashing them is cheap (BLAKE3 runs at several GB/s); encoding a
100k-entry map from scratch is not (~70 ms in cbor2).  A ``StateImage``
keeps the encoded entries in canonical order, cut into blocks of about
``BLOCK`` entries, so applying a commit's few changes re-encodes only the
blocks they touch and the full encoding is one ``join`` (~2 ms at 100k).

Images are immutable: ``apply`` returns a new image that shares the
untouched blocks, so a cached parent image stays valid when a commit that
was built from it is rolled back.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping

import cbor2

from .canonical import object_id
from .errors import CorruptStoreError
from .nodemap import NodeMap

__all__ = ["BLOCK", "StateImage", "encode_key"]

#: Target entries per block: big enough that the final join handles few
#: pieces, small enough that re-encoding a touched block stays in microseconds.
BLOCK = 128

#: ``{"kind": "state", "nodes": `` in canonical order ("kind" sorts before "nodes").
_PREFIX = bytes.fromhex("a2646b696e64657374617465656e6f646573")
_ID_HEAD = b"\x58\x20"  # a 32-byte byte string
#: The greatest code point: every id that starts with a prefix sorts before prefix + this, but one that goes on with it.
_LAST = chr(0x10FFFF)


def encode_key(node_id: str) -> bytes:
    """A node id as a canonical CBOR text string.

    Canonical map order is the bytewise order of the encoded keys, and the
    length is in the header, so sorting these bytes gives "shorter first,
    then bytewise", exactly the order the state map is hashed in.
    """
    return cbor2.dumps(node_id)


def _map_header(count: int) -> bytes:
    if count < 24:
        return bytes((0xA0 + count,))
    if count < 0x100:
        return bytes((0xB8, count))
    if count < 0x10000:
        return b"\xb9" + count.to_bytes(2, "big")
    return b"\xba" + count.to_bytes(4, "big")


class _Block:
    """A run of consecutive entries: encoded keys, object ids and their encoding."""

    __slots__ = ("data", "ids", "keys")

    def __init__(self, keys: list[bytes], ids: list[bytes], data: bytes | None = None) -> None:
        self.keys = keys
        self.ids = ids
        self.data = data if data is not None else b"".join(k + _ID_HEAD + i for k, i in zip(keys, ids, strict=True))


def _blocks_of(keys: list[bytes], ids: list[bytes]) -> list[_Block]:
    return [_Block(keys[s : s + BLOCK], ids[s : s + BLOCK]) for s in range(0, len(keys), BLOCK)]


class StateImage:
    """The node map of one state plus its canonical encoding, in blocks."""

    __slots__ = ("_blocks", "_firsts", "_in_text_order", "nodes")

    def __init__(self, nodes: NodeMap, blocks: list[_Block]) -> None:
        self.nodes = nodes
        self._blocks = blocks
        self._firsts = [block.keys[0] for block in blocks]
        self._in_text_order: list[str] | None = None

    def under(self, prefixes: Iterable[str]) -> dict[str, bytes]:
        """The nodes whose id starts with one of ``prefixes``, in id order.

        The ids are sorted as text once per image (an image never changes,
        and a worker keeps the tip's), so a namespace read bisects to its
        first id and walks only its own, instead of testing every id.
        """
        if self._in_text_order is None:
            self._in_text_order = sorted(self.nodes)
        ordered = self._in_text_order
        ranges = []
        for prefix in prefixes:
            start = bisect_left(ordered, prefix)
            end = bisect_left(ordered, prefix + _LAST, start)
            while end < len(ordered) and ordered[end].startswith(prefix):  # ids holding the last code point itself
                end += 1
            ranges.append((start, end))
        picked = [node_id for start, end in sorted(ranges) for node_id in ordered[start:end]]
        if len(ranges) > 1:  # overlapping prefixes ("a:", "a:b:") name some ids twice
            picked = sorted(set(picked))
        return {node_id: self.nodes[node_id] for node_id in picked}

    @classmethod
    def empty(cls) -> StateImage:
        """The image of the state with no nodes."""
        return cls(NodeMap({}), [])

    @classmethod
    def from_canonical(cls, data: bytes, expected_id: bytes) -> StateImage:
        """Parse a stored state encoding, refusing bytes that do not hash to ``expected_id``.

        Because the bytes are canonical (that is what the id proves), the map
        decodes in canonical order and each block's encoding is a slice of
        ``data``: no re-encoding and no sort.
        """
        if object_id(data) != expected_id:
            raise CorruptStoreError(f"stored state {expected_id.hex()} does not hash to its id")
        try:
            value = cbor2.loads(data)
        except Exception as exc:  # cbor2 raises several unrelated types
            raise CorruptStoreError(f"bad object: {exc}") from None
        nodes = value.get("nodes") if isinstance(value, dict) else None
        if not isinstance(nodes, dict):
            raise CorruptStoreError("bad object: state nodes is not a map")
        keys = list(map(encode_key, nodes))
        ids = list(nodes.values())
        blocks = []
        offset = len(_PREFIX) + len(_map_header(len(nodes)))
        for start in range(0, len(keys), BLOCK):
            part = keys[start : start + BLOCK]
            size = sum(map(len, part)) + len(part) * 34
            blocks.append(_Block(part, ids[start : start + BLOCK], data[offset : offset + size]))
            offset += size
        return cls(NodeMap(nodes), blocks)

    def apply(self, changes: Mapping[str, bytes | None]) -> StateImage:
        """A new image with ``changes`` applied (node id -> object id, or None to remove).

        Costs O(changes * BLOCK + blocks), not O(nodes): only touched blocks
        are re-encoded (and split when they grow past two blocks' worth), and
        the node map is derived, not copied (``NodeMap``).
        """
        nodes, effective = self.nodes.changed(changes)
        edits: dict[int, dict[bytes, bytes | None]] = {}
        for node_id, raw in effective.items():
            key = encode_key(node_id)
            edits.setdefault(max(bisect_right(self._firsts, key) - 1, 0), {})[key] = raw
        if not edits:
            return self
        out = list(self._blocks or [_Block([], [], b"")])
        for index in sorted(edits, reverse=True):  # from the end, so splicing leaves earlier indexes valid
            out[index : index + 1] = _edited(out[index], edits[index])
        return StateImage(nodes, out)

    def encoding(self) -> bytes:
        """The state's canonical CBOR bytes."""
        return b"".join((_PREFIX, _map_header(len(self.nodes)), *(block.data for block in self._blocks)))

    def state_id(self) -> bytes:
        """The state's id: the BLAKE3 hash of its canonical encoding."""
        return object_id(self.encoding())


def _edited(block: _Block, edit: Mapping[bytes, bytes | None]) -> list[_Block]:
    keys, ids = list(block.keys), list(block.ids)
    for key, raw in sorted(edit.items()):
        at = bisect_left(keys, key)
        present = at < len(keys) and keys[at] == key
        if raw is None:
            if present:
                del keys[at], ids[at]
        elif present:
            ids[at] = raw
        else:
            keys.insert(at, key)
            ids.insert(at, raw)
    if len(keys) > 2 * BLOCK:
        return _blocks_of(keys, ids)
    return [_Block(keys, ids)] if keys else []
