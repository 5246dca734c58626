"""Canonical CBOR, object ids and the JSON value model.

Upstream hashes objects as RFC 8949 deterministic CBOR with text keys sorted
length-first then bytewise, shortest integers and the shortest *lossless*
float width (ciborium's behaviour, not the "always f64" its docs claim).
``cbor2``'s ``canonical=True`` produces exactly that for our value model, and
the golden-vector tests pin it.
"""

from __future__ import annotations

import math
from typing import Any

import blake3
import cbor2

from .errors import CorruptStoreError, UsageError

__all__ = [
    "check_content",
    "decode",
    "dump_compact",
    "encode",
    "hex_id",
    "json_equal",
    "object_id",
    "parse_hex_id",
    "parse_json",
    "short",
    "sort_keys",
]

I64_MIN = -(2**63)
U64_MAX = 2**64 - 1


def encode(value: Any) -> bytes:
    """Encode a plain value (maps with text keys, lists, bytes, scalars) canonically."""
    return cbor2.dumps(value, canonical=True)


def decode(data: bytes) -> Any:
    """Decode CBOR bytes; any malformation is a corrupt store."""
    try:
        return cbor2.loads(data)
    except Exception as exc:  # cbor2 raises several unrelated types
        raise CorruptStoreError(f"bad object: {exc}") from exc


def object_id(data: bytes) -> bytes:
    """BLAKE3-256 of canonical bytes: the 32-byte id of an object."""
    return blake3.blake3(data).digest()


def hex_id(raw: bytes) -> str:
    """64 lowercase hex characters for a 32-byte id."""
    return raw.hex()


def short(hex_or_raw: str | bytes) -> str:
    """Upstream's 12-character abbreviation of an id."""
    text = hex_or_raw.hex() if isinstance(hex_or_raw, bytes) else hex_or_raw
    return text[:12]


def parse_hex_id(text: str) -> bytes:
    """Parse exactly 64 hex digits (either case) into raw id bytes."""
    if len(text) != 64:
        raise CorruptStoreError(f'"{text}" is not a valid object id: expected 64 hex characters, got {len(text)}')
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise CorruptStoreError(f'"{text}" is not a valid object id: expected only hex characters') from None


#: The deepest nesting serde_json's default parser accepts: its recursion limit of 128 is hit by the 128th
#: array or object, so upstream parses 127 levels and refuses more, and so do we.
MAX_DEPTH = 127


def check_content(value: Any, where: str = "content", depth: int = 0) -> Any:
    """Validate and normalise a JSON value for storage.

    Returns the value with integers outside CBOR's 64-bit range turned into
    floats (as serde_json parses them upstream).  Rejects non-finite floats,
    non-string keys, non-JSON types and nesting deeper than upstream's
    parser accepts, because upstream content is the JSON data model only.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if I64_MIN <= value <= U64_MAX:
            return value
        return float(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UsageError(f"{where} is not valid JSON: non-finite number {value!r}")
        return value
    if depth >= MAX_DEPTH and isinstance(value, (list, tuple, dict)):
        raise UsageError(f"{where} is not valid JSON: nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, (list, tuple)):
        return [check_content(item, where, depth + 1) for item in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise UsageError(f"{where} is not valid JSON: object key {key!r} is not a string")
            out[key] = check_content(item, where, depth + 1)
        return out
    raise UsageError(f"{where} is not valid JSON: {type(value).__name__} is not a JSON type")


def parse_json(text: str | bytes, where: str, *, check: bool = True) -> Any:
    """Parse strict JSON (no NaN/Infinity) and normalise it for storage.

    ``check=False`` only parses: for an envelope (the ``write`` payload) whose
    contents are checked one by one, so the nesting limit counts from each
    content, as it does for ``add --content-json``, and not from the envelope.
    """
    import orjson  # imported here, not at load: cli/jsonout.py says why

    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"{where} is not valid JSON: {exc}") from None
    return check_content(value, where) if check else value


def sort_keys(value: Any) -> Any:
    """Return ``value`` with every map's keys in bytewise order (serde_json's BTreeMap order)."""
    if isinstance(value, dict):
        return {key: sort_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sort_keys(item) for item in value]
    return value


def dump_compact(value: Any) -> str:
    """Compact JSON as upstream prints node content: sorted keys, no spaces."""
    import orjson  # imported here, not at load: cli/jsonout.py says why

    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values as serde_json's ``Value`` defines it.

    Python's ``==`` says ``1 == 1.0 == True``; upstream's content comparison
    does not (an integer is not a float, a number is not a bool), and bisect
    must find the commit upstream finds.
    """
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b
