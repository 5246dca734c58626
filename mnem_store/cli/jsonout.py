"""How a ``--json`` answer becomes text: the standard library's encoder in a one-shot process, orjson in a worker.

A one-shot ``mnem --json`` command lives for a few tens of milliseconds.
Importing orjson costs more than half of a bare interpreter's start-up (it
loads ``dataclasses``, ``inspect``, ``uuid`` and ``datetime`` as it
starts), while the standard library's C encoder writes a small answer as
fast.  A worker (``mnem serve``) pays that import once and then encodes
large answers many times, where orjson is several times faster, and keeps
each node's encoded JSON (``documents.py``); it calls ``use_orjson()``
before its first request.

Both write the same bytes.  The standard library's compact form with
``ensure_ascii=False`` escapes exactly the characters orjson escapes, and
spells every float the same, with one exception: where it writes an
exponent with a leading zero (``1e-05``, ``1.5e-07``), orjson writes
``0.00001`` and ``1.5e-7``.  An answer holding a digit followed by
``e-0`` is therefore encoded again with orjson; text that merely looks
like such a float only costs that answer orjson's import.  ``tests/store/test_jsonout.py``
holds the two to the same bytes over arbitrary documents.
"""

from __future__ import annotations

import json
import re
from types import ModuleType
from typing import Any

__all__ = ["dumps", "orjson", "use_orjson"]

#: How the standard library spells a float that orjson spells otherwise: ``1e-05``, ``1.5e-07``.
_PADDED_EXPONENT = re.compile(r"[0-9]e-0")

#: orjson once a worker has asked for it, else None.
orjson: ModuleType | None = None


def use_orjson() -> None:
    """Encode every later answer with orjson (a worker's choice, made once at start)."""
    global orjson
    import orjson as module

    orjson = module


def dumps(value: Any) -> str:
    """``value`` as one line of compact JSON.

    Raises:
        TypeError: ``value`` holds text that is not valid Unicode (a lone
            surrogate from undecodable argv bytes), as orjson raises it.
    """
    if orjson is not None:
        encoded: bytes = orjson.dumps(value)
        return encoded.decode()
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if _PADDED_EXPONENT.search(text):  # perhaps a float spelled unlike orjson: let orjson spell it
        import orjson as spelled

        return spelled.dumps(value).decode()
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise TypeError("str is not valid UTF-8: surrogates not allowed") from None
    return text
