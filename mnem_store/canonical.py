"""Canonical CBOR, object ids and the JSON value model.

Upstream hashes objects as RFC 8949 deterministic CBOR with text keys sorted
length-first then bytewise, shortest integers and the shortest *lossless*
float width (ciborium's behaviour, not the "always f64" its docs claim).
``cbor2``'s ``canonical=True`` produces exactly that for our value model, and
the golden-vector tests pin it.
"""

from __future__ import annotations

import json
import math
from typing import Any

import cbor2

from .errors import CorruptStoreError, UsageError

__all__ = [
    "InexactNumberError",
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


class InexactNumberError(UsageError):
    """Valid JSON holding an integer no store keeps exactly (beyond 64 bits): refused, never rounded.

    Its own class so that a command reporting a payload's syntax errors as
    "is not valid JSON" (``cli.context.parse_json_arg``) passes this one on
    as it is: the text is valid JSON, and the fix is to send the number
    another way.
    """


def _inexact(where: str, number: int | str) -> InexactNumberError:
    """The refusal of an integer outside the range a store keeps exactly (its value or literal), naming the fix."""
    try:
        digits, about = len(str(number).lstrip("-")), ""
    except ValueError:  # longer than ``str`` converts (4300 digits): counted from its bits
        digits, about = int(int(number).bit_length() * math.log10(2)) + 1, "about "
    shown = f"the integer {number}" if digits <= 40 else f"an integer of {about}{digits} digits"
    return InexactNumberError(
        f"{where} holds {shown}, outside the range a store keeps exactly ({I64_MIN} to {U64_MAX}); "
        "it is refused rather than rounded to a float: store it as a string to keep every digit"
    )


#: The longest integer literal parsed to an ``int`` (refused as inexact either way): Python converts
#: at most 4300 digits, and the conversion's cost grows with the square of the length.
_MAX_DIGITS = 4000

#: Each byte of a text as a digit (1) or not (0), so that runs of digits are found by ``bytes.find``.
_DIGIT_MARKS = bytes(1 if 0x30 <= byte <= 0x39 else 0 for byte in range(256))
#: The shortest run of digits that may be an integer beyond 64 bits.
_LONG_RUN = b"\x01" * 19
#: The bytes that join a run of digits to a word or a number: a letter, a digit, ``_`` or the point.
_JOINING = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


def _long_integer(text: str | bytes) -> bool:
    """Whether ``text`` may hold an integer literal of 19 digits or more standing alone.

    Standing alone: not inside a fraction, an exponent or a word such as a
    hex id.  Only such a literal can lie outside 64 bits, where ``orjson``
    parses it as a float; a run found inside a string, or beside a letter
    outside ASCII, only costs the exact parse (``_exact``), never a wrong
    answer.  The digits are marked in one ``translate`` and the runs found
    with ``find``: a regular expression looking around every character
    cost about 40 ns a byte, 5 ms for a LangGraph checkpoint of 120 KB.
    """
    data = text.encode() if isinstance(text, str) else text
    marks = data.translate(_DIGIT_MARKS)
    start = marks.find(_LONG_RUN)
    while start != -1:  # the first 19 marks in a row are a run's start: the byte before is no digit
        end = marks.find(b"\x00", start + len(_LONG_RUN))
        end = len(marks) if end == -1 else end
        if (start == 0 or data[start - 1] not in _JOINING) and (end == len(data) or data[end] not in _JOINING):
            return True
        start = marks.find(_LONG_RUN, end)
    return False


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
    """BLAKE3-256 of canonical bytes: the 32-byte id of an object (a state's too: ``stateimage``).

    The one place that knows the hash.  ``blake3`` is imported at the first
    hash, not at load: a one-shot read hashes nothing (docs/engine.md).
    """
    import blake3

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

    Rejects non-finite floats, non-string keys, non-JSON types and nesting
    deeper than upstream's parser accepts, because upstream content is the
    JSON data model only.  Also rejects an integer outside CBOR's 64-bit
    range (``InexactNumberError``): serde_json would parse it as the nearest
    float, so upstream stores a number other than the one sent; here a
    value is stored exactly or not at all (docs/differences.md).
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if I64_MIN <= value <= U64_MAX:
            return value
        raise _inexact(where, value)
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
    """Parse strict JSON (no NaN/Infinity), every integer exact, and check it for storage.

    ``orjson`` parses, and vouches for the syntax; it reads an integer beyond
    64 bits as the nearest float, so a text holding a long integer literal
    is parsed again by ``json``, which keeps integers whole, and
    ``check_content`` refuses the ones no store keeps.  When ``orjson``
    refuses the text only because such an integer overflows a float
    (``-1e400`` written out in digits), the refusal says so rather than
    "not valid JSON".

    ``check=False`` only parses: for an envelope (the ``write`` payload) whose
    contents are checked one by one, so the nesting limit counts from each
    content, as it does for ``add --content-json``, and not from the envelope.

    Raises:
        InexactNumberError: An integer beyond 64 bits (with ``check``, or one too long for a float).
        UsageError: Not JSON (``<where> is not valid JSON: <the parser's words>``), or (with ``check``) not
            storable content.
    """
    import orjson  # imported here, not at load: cli/jsonout.py says why

    long_integer = _long_integer(text)
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        if long_integer:
            _refuse_long_integers(text, where)
        raise UsageError(f"{where} is not valid JSON: {exc}") from None
    if long_integer:
        value = _exact(text, where)
    return check_content(value, where) if check else value


def _exact(text: str | bytes, where: str) -> Any:
    """``text`` parsed with every integer a whole ``int`` (``json``; NaN and Infinity refused as ``ValueError``)."""

    def integer(literal: str) -> int:
        if len(literal) > _MAX_DIGITS:
            raise _inexact(where, literal)
        return int(literal)

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    try:
        return json.loads(text, parse_int=integer, parse_constant=constant)
    except RecursionError:
        raise UsageError(f"{where} is not valid JSON: nested deeper than {MAX_DEPTH} levels") from None


def _refuse_long_integers(text: str | bytes, where: str) -> None:
    """Raise ``InexactNumberError`` if ``text`` is JSON that ``orjson`` refused for an integer too long for it."""
    try:
        value = _exact(text, where)
    except InexactNumberError:
        raise
    except (ValueError, UsageError):  # not JSON for ``json`` either: the caller reports orjson's reason
        return
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool) and not I64_MIN <= item <= U64_MAX:
            raise _inexact(where, item)
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


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
