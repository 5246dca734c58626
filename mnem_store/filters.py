"""``mnem search --filter``: LangGraph's filter language, as its SQL stores read it.

A filter is a JSON object mapping a field to what it must hold.  The field
is a key of the item's value or a dotted path into nested objects
(``"author.name"``), as SqliteStore and PostgresStore read it; a key that
itself holds a dot is still found when the value has it (InMemoryStore
looks keys up whole).  What it must hold is:

* a plain value: equality (JSON's ``1``, ``1.0`` and ``true`` compare as
  Python compares them, which is what LangGraph's stores do in Python);
* an object of operators, all of which must hold: ``$eq`` ``$ne`` ``$gt``
  ``$gte`` ``$lt`` ``$lte`` (the six LangGraph documents).  An ordering
  operator with a number compares numerically, as the SQL stores cast the
  field (a field ``"7"`` is greater than ``4``, ``true`` counts as 1); with
  text it compares text, numerically when both read as numbers and by code
  point otherwise; a field it cannot compare (missing, an object) is no match;
* any other object: a partial match of the nested object;
* an array: the same length, element by element.

An odd item is simply no match, never a failed search.  An operator outside
the six is refused before anything is read (``check``): a typo must not
silently match nothing.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .errors import UsageError

__all__ = ["OPERATORS", "by_value", "check", "equality", "matches"]

_ORDERINGS: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le,
}
#: Every operator a filter may use.
OPERATORS = ("$eq", "$ne", *_ORDERINGS)


def check(conditions: Any, where: str = "--filter") -> dict[str, Any]:
    """The filter, refused (``usage``) unless it is an object whose operators are all ``OPERATORS``."""
    if not isinstance(conditions, dict):
        raise UsageError(f"{where} must be a JSON object of fields and what each must hold, such as "
                         '{"tier": "pro"} or {"seats": {"$gte": 10}}')
    for wanted in conditions.values():
        _check_wanted(wanted, where)
    return conditions


def _check_wanted(wanted: Any, where: str) -> None:
    if isinstance(wanted, dict):
        if any(key.startswith("$") for key in wanted):
            unknown = [key for key in wanted if key not in OPERATORS]
            if unknown:
                raise UsageError(f"{where} uses the operator {unknown[0]!r}, which LangGraph's filters do not have; "
                                 f"a filter may use {', '.join(OPERATORS)}")
            return
        for inner in wanted.values():
            _check_wanted(inner, where)
    elif isinstance(wanted, list):
        for inner in wanted:
            _check_wanted(inner, where)


def matches(value: Mapping[str, Any], conditions: Mapping[str, Any]) -> bool:
    """Whether an item's value passes every condition of a checked filter."""
    return all(_compare(_field(value, path), wanted) for path, wanted in conditions.items())


def equality(conditions: Mapping[str, Any]) -> tuple[str, Any] | None:
    """A checked filter's first condition that is plain equality with a scalar (``by_value`` answers it), or None.

    Nothing but a scalar equals a scalar, and equal scalars hash alike
    (``1``, ``1.0`` and ``true`` too), so a dictionary from each item's
    scalar at the field to the items holding it answers such a condition
    as comparing every item would.
    """
    return next(((path, wanted) for path, wanted in conditions.items() if isinstance(wanted, _SCALARS)), None)


def by_value(values: Iterable[Mapping[str, Any]], path: str) -> dict[Any, list[int]]:
    """The positions of ``values`` by the scalar each holds at the field ``path`` (absent: None), ascending.

    A value holding an object or an array there is left out: no scalar equals it.
    """
    found: dict[Any, list[int]] = {}
    for position, value in enumerate(values):
        held = _field(value, path)
        if isinstance(held, _SCALARS):
            found.setdefault(held, []).append(position)
    return found


#: What a plain equality condition can index: JSON's scalars (a stored value holds no NaN).
_SCALARS = (str, int, float, bool, type(None))


def _field(value: Mapping[str, Any], path: str) -> Any:
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
    if isinstance(wanted, list):
        return (isinstance(found, list) and len(found) == len(wanted)
                and all(_compare(f, w) for f, w in zip(found, wanted, strict=True)))
    return found == wanted


def _operator(found: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(found == operand)
    if op == "$ne":
        return bool(found != operand)
    compare = _ORDERINGS[op]
    left, right = _number(found), _number(operand)
    if left is not None and right is not None:
        return bool(compare(left, right))
    if isinstance(found, str) and isinstance(operand, str):
        return bool(compare(found, operand))
    return False


def _number(value: Any) -> float | None:
    """A value as a number the way the SQL stores cast it (numbers, booleans, numeric text), else None."""
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return None if math.isnan(number) else number
    return None
