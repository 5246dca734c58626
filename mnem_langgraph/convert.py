"""Between memory nodes and LangGraph items: values, provenance, times.

Writing, a value dict becomes the node content and its reserved ``_meta``
dict becomes the node's provenance.  ADR-0016 says ``_meta`` is lifted *and
stripped*; upstream's adapter stores it in the content as well, so ``get``
returns it.  We follow the ADR: provenance lives in the node's provenance
(where ``why`` and ``mnem blame`` show it), and the stored value is exactly
what the caller meant as data.

Reading, a node stamped by ``mnem stamps`` becomes an ``Item`` whose
``created_at`` / ``updated_at`` are history's answer, not the time of the
read.  A search's items come from the engine already made (``reads``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from langgraph.store.base import Item

from mnem_bridge import TimedNode, UsageError, times
from mnem_bridge.agents import ITEM_KEYS

__all__ = [
    "META_KEY",
    "Entry",
    "from_ms",
    "split_meta",
    "value_of",
]

logger = logging.getLogger(__name__)

#: The reserved value key whose dict is lifted into provenance.
META_KEY = "_meta"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def split_meta(value: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str | int]]:
    """Separate a put's data from its ``_meta`` provenance (and event time).

    Args:
        value: The value given to ``put``.

    Returns:
        The content to store (``value`` without ``_meta``) and the provenance
        as ``Store.write`` takes it: ``{"source" | "step" | "observation" |
        "tool_call" | "note": text}`` (``step`` is the node's ``agent_step``),
        empty when there is no ``_meta``.  ``_meta``'s ``event_time`` (an
        extension: when the fact became true, Unix ms, ISO 8601 text or a
        ``datetime``, UTC unless it says otherwise) rides along as Unix ms:
        a put's value is all ``BaseStore.put`` carries into a batch, so the
        reserved key is the one way in that works for ``put``, ``aput`` and
        every library that writes through them.

    Raises:
        UsageError: ``value`` is not a dict, ``_meta`` is not a dict, names another key, or holds
            something other than text, an integer (a step number) or
            ``None``, or an ``event_time`` that is not a time.  Refusing is better than dropping provenance the caller
            believed was recorded.  (A ``ValueError``, as every refused value
            is, and the same class the bridge raises for a value that is not JSON.)
    """
    if not isinstance(value, Mapping):  # BaseStore's values are dicts; dict() of anything else fails obscurely
        raise UsageError(f"a value must be a dict, got {type(value).__name__}")
    content = dict(value)
    meta = content.pop(META_KEY, None)
    if meta is None:
        return content, {}
    if not isinstance(meta, Mapping):
        raise UsageError(f"{META_KEY} must be a dict of provenance fields, got {type(meta).__name__}")
    unknown = set(meta) - set(ITEM_KEYS)
    if unknown:
        raise UsageError(f"{META_KEY} has unknown keys {sorted(map(str, unknown))}; allowed: {', '.join(ITEM_KEYS)}")
    provenance: dict[str, str | int] = {}
    for key, text in meta.items():
        if text is None:
            continue
        if key == "event_time":
            provenance[key] = times.to_ms(text)
            continue
        if isinstance(text, bool) or not isinstance(text, (str, int)):
            raise UsageError(f"{META_KEY}[{key!r}] must be text (or an integer step), got {type(text).__name__}")
        provenance[key] = str(text)
    return content, provenance


def from_ms(ms: int) -> datetime:
    """Unix milliseconds as an aware UTC datetime (exact, negative times included).

    ``timedelta``'s positional (days, seconds, microseconds) is the same
    exact sum as its ``milliseconds=`` keyword at half the cost, and a
    search page converts two times per item.
    """
    seconds, rest = divmod(ms, 1000)
    return _EPOCH + timedelta(0, seconds, rest * 1000)


def value_of(content: Any) -> dict[str, Any]:
    """An item value for node content: a dict as is, anything else as ``{"value": content}``.

    Our puts always store dicts; other writers (the MCP ``remember`` tool,
    ``mnem add``) may store a bare string or number under an id that looks
    namespaced, and an Item's value must be a dict.
    """
    return content if isinstance(content, dict) else {"value": content}


@dataclass(frozen=True, slots=True)
class Entry:
    """One item read by a get: where it lives, its value, its two times, and when its TTL runs out (None: never)."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created: int
    updated: int
    expires: int | None = None

    @classmethod
    def of(cls, namespace: tuple[str, ...], key: str, timed: TimedNode) -> Entry:
        """The item a stamped node holds, at ``(namespace, key)`` (the id it was read under)."""
        return cls(namespace, key, value_of(timed.node.content), timed.created, timed.updated, timed.expires)

    def item(self) -> Item:
        """A fresh ``Item``: callers may mutate its value."""
        return Item(value=_copied(self.value), key=self.key, namespace=self.namespace,
                    created_at=from_ms(self.created), updated_at=from_ms(self.updated))


def _copied(value: Any) -> Any:
    """A copy of a JSON value: its dicts and lists new, its strings and numbers shared (they cannot change).

    What ``copy.deepcopy`` gives for JSON, in a third of the time: a value
    read from ``mnem`` holds nothing else, and has no cycles.
    """
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value
