"""``search(filter=...)``: LangGraph's filter language, as SqliteStore and PostgresStore read it.

A filter maps a field to a wanted value.  The field is a key of the item's
value or a dotted path into nested dicts (``"author.name"``), as the SQL
stores read it; a key that itself holds a dot is still found when the value
has it (``InMemoryStore`` looks keys up whole).  The wanted value is:

* a plain value: equality;
* a dict of operators, all of which must hold: ``$eq`` ``$ne`` ``$gt``
  ``$gte`` ``$lt`` ``$lte`` (the six LangGraph documents).  An ordering
  operator with a number compares numerically, as the SQL stores cast the
  field to a number (so a field ``"7"`` is greater than ``4``, and ``true``
  counts as 1); with a string it compares strings, numerically when both
  read as numbers (``InMemoryStore``'s rule) and by code point otherwise
  (SQLite's); a field it cannot compare (missing, a dict) is no match;
* any other dict: a partial match of the nested dict;
* a list: the same length, element by element.

Where ``InMemoryStore`` raises mid-search (``float(None)``) this is simply
no match: one odd item must not fail a whole search.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["OPERATORS", "field", "matches_filter"]

_ORDERINGS: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le,
}
#: Every operator a filter may use.
OPERATORS = ("$eq", "$ne", *_ORDERINGS)
_MISSING = object()


def matches_filter(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """Whether an item's value passes every condition of a ``search`` filter.

    Args:
        value: An item's value.
        conditions: The ``filter`` argument of ``search``.

    Returns:
        True when every field satisfies its condition.

    Raises:
        ValueError: An operator outside ``OPERATORS`` (a typo must not silently match nothing).
    """
    return all(_compare(field(value, path), wanted) for path, wanted in (conditions or {}).items())


def field(value: Mapping[str, Any], path: str) -> Any:
    """The value at a filter's field: the key itself if present, else the dotted path (None when absent)."""
    if path in value:
        return value[path]
    found: Any = value
    for part in path.split("."):
        if not isinstance(found, Mapping) or part not in found:
            return None
        found = found[part]
    return found


def _compare(found: object, wanted: object) -> bool:
    if isinstance(wanted, dict):
        if any(key.startswith("$") for key in wanted):
            return all(_operator(found, op, operand) for op, operand in wanted.items())
        return isinstance(found, dict) and all(_compare(found.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (isinstance(found, (list, tuple)) and len(found) == len(wanted)
                and all(_compare(f, w) for f, w in zip(found, wanted, strict=True)))
    return found == wanted


def _operator(found: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(found == operand)
    if op == "$ne":
        return bool(found != operand)
    if op not in _ORDERINGS:
        raise ValueError(f"Unsupported operator: {op}; a filter may use {', '.join(OPERATORS)}")
    compare = _ORDERINGS[op]
    left, right = _number(found), _number(operand)
    if left is not None and right is not None:
        return bool(compare(left, right))
    if isinstance(found, str) and isinstance(operand, str):
        return bool(compare(found, operand))
    return False


def _number(value: Any) -> float | None:
    """A value as a number the way the stores cast it (numbers, booleans, numeric text), else None."""
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return None if math.isnan(number) else number
    return None
