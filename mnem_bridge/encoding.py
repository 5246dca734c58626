"""What the bridge sends ``mnem``: JSON payloads, vectors, and arguments built from a caller's values.

Each value is checked here, before any process runs: one ``mnem`` would
misread or refuse (NaN, a non-string key, a put without an id, a resolved
id holding ``=``) is a ``UsageError`` that names it, and nothing is run.
"""

from __future__ import annotations

import base64
import contextlib
import json
import math
import os
import struct
from collections.abc import Iterable, Mapping
from typing import Any, get_args

import orjson

from .errors import UsageError
from .models import MemoryNode, MergeSide, MergeStrategy
from .times import to_ms

__all__ = ["Resolution", "encode_json", "pack_vector", "resolution_flags", "resolve_author", "write_put"]

#: How ``merge`` and ``pull`` settle a conflicted node: a side, or a node whose content it becomes.
Resolution = MergeSide | MemoryNode

_SIDES = get_args(MergeSide)
_STRATEGIES = get_args(MergeStrategy)


def encode_json(value: Any) -> str:
    """Compact JSON for the binary: UTF-8 kept, NaN and infinities refused.

    ``orjson`` would silently turn NaN into ``null``; stdlib ``json`` with
    ``allow_nan=False`` refuses it, as upstream does.  ``json`` also turns a
    non-string key (``{1: "x"}``) into a string one, which would store a
    different value than the caller gave, so keys are checked first.  A value
    too deep for ``json``'s recursion is refused here too (the binary refuses
    anything past upstream's 127 levels anyway).

    A value made only of the plain types (``_plain``) is encoded by
    ``orjson``, which writes the same JSON (at most a float spelled
    differently, the same number) twenty times faster: a LangGraph checkpoint's 100 KB value took 0.5 ms in ``json``
    (issue #35).  Anything else, and anything ``orjson`` refuses (a lone
    surrogate, a cycle), goes through ``json``, which encodes, converts or
    refuses it as before.

    Args:
        value: Any JSON-serialisable value.

    Returns:
        The JSON text.

    Raises:
        UsageError: ``value`` is not JSON (also a ``ValueError``, which upstream's SDK raises).
    """
    try:
        if _plain(value):
            with contextlib.suppress(orjson.JSONEncodeError):
                return orjson.dumps(value).decode()
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except RecursionError:
        raise UsageError("content must be JSON-serialisable: it is nested too deeply to encode") from None
    except (TypeError, ValueError) as exc:
        raise UsageError(f"content must be JSON-serialisable: {exc}") from None


#: Integers ``orjson`` encodes: 64-bit, signed or not (``json`` writes larger ones too).
_INT_RANGE = range(-(2**63), 2**64)


def _plain(value: Any) -> bool:
    """Whether ``value`` holds only dicts, lists, tuples, str, bool, None, 64-bit ints and finite floats.

    Exactly those types (a subclass, an enum, a datetime is not plain), so
    ``orjson`` encodes it as ``json`` would.  Walked iteratively (depth is
    not limited here); a dict key that is not a string is refused on the way.

    Raises:
        TypeError: A dict key that is not a string.
    """
    stack, seen, plain = [value], set(), True
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:  # the leaves most values are made of, settled first
            continue
        if kind is int:
            plain = plain and item in _INT_RANGE
        elif kind is float:
            plain = plain and math.isfinite(item)
        elif isinstance(item, (dict, list, tuple)):
            if id(item) in seen:  # shared or circular: checked already (json.dumps reports a cycle)
                continue
            seen.add(id(item))
            plain = plain and kind in (dict, list, tuple)
            if isinstance(item, dict):
                for key in item:
                    if not isinstance(key, str):
                        raise TypeError(f"object keys must be strings, got {type(key).__name__} {key!r}")
                stack.extend(item.values())
            else:
                stack.extend(item)
        else:
            plain = False
    return plain


def resolve_author(author: str | None) -> str:
    """Upstream SDK's author fallback: explicit, else a non-empty ``$MNEM_AUTHOR``, else ``unknown``.

    Args:
        author: The caller's author, or ``None``.

    Returns:
        The author to pass as ``--author``.
    """
    if author is not None:
        return author
    return os.environ.get("MNEM_AUTHOR") or "unknown"


def pack_vector(vector: Iterable[float]) -> str:
    """An embedding as ``mnem`` takes it: base64 of little-endian float32 values."""
    values = list(vector)
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")


def write_put(index: int, item: Any) -> dict[str, Any]:
    """One ``write`` put: ``id``, ``content`` (which may be null) and every other key that is set.

    Unknown keys are passed on for the binary to refuse, rather than dropped here.

    Raises:
        UsageError: ``item`` is not a mapping with ``id`` and ``content`` (a bare
            ``KeyError`` or ``TypeError`` would not say which item, nor be a typed error).
    """
    if not isinstance(item, Mapping) or "id" not in item or "content" not in item:
        raise UsageError(f"put {index} must be a mapping with at least id and content, got {_short_repr(item)}")
    put = {"id": item["id"], "content": item["content"],
           **{key: value for key, value in item.items() if key not in ("id", "content") and value is not None}}
    if "event_time" in put:  # stored in the fact as Unix ms; ISO text or a datetime is turned into that here
        put["event_time"] = to_ms(put["event_time"])
    return put


def _short_repr(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def resolution_flags(resolutions: Mapping[str, Resolution] | None, strategy: MergeStrategy | None) -> list[str]:
    """``merge``'s and ``pull``'s ``--resolve``/``--resolve-json``/``--strategy`` flags, checked here first."""
    if strategy is not None and strategy not in _STRATEGIES:
        raise UsageError(f'strategy must be "ours" or "theirs", got {strategy!r}')
    args = []
    for node_id, choice in (resolutions or {}).items():
        if "=" in node_id:
            raise UsageError(f"cannot resolve {node_id!r}: mnem merge splits ID=VALUE at the first '='")
        if isinstance(choice, MemoryNode):
            args.append(f"--resolve-json={node_id}={encode_json(choice.content)}")
        elif choice in _SIDES:
            args.append(f"--resolve={node_id}={choice}")
        else:
            raise UsageError(f'resolution for {node_id!r} must be one of {", ".join(_SIDES)} or a MemoryNode')
    if strategy is not None:
        args.append(f"--strategy={strategy}")
    return args

