"""Times as a caller gives them, for the binary: Unix milliseconds, ISO 8601 text, or a ``datetime``.

The binary takes a time in two spellings (docs/cli-json.md, "Times"):
Unix ms, or ISO 8601 where a time without an offset is UTC.  A revision
(``main@{2026-12-01}``), ``log --since`` and ``--valid-at`` carry the text
to the binary as it is, which parses it and answers a typed error.  An
``event_time`` is different: it is stored as an integer inside the fact, so
it is turned into Unix ms here, before anything is written, by the same
rules (a test holds the two sides to each other,
tests/bridge/test_time_travel.py).  A naive ``datetime`` is UTC too, never
the machine's zone, so one call means the same instant on every machine.
"""

from __future__ import annotations

from datetime import UTC, datetime

from .errors import UsageError

__all__ = ["Time", "at_time", "text_of", "to_ms"]

#: A time as the bridge takes one: Unix ms, ISO 8601 text (no offset: UTC), or a ``datetime`` (naive: UTC).
Time = int | str | datetime

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_ms(value: Time) -> int:
    """``value`` in Unix milliseconds (an ``event_time``).

    Args:
        value: Unix ms, ISO 8601 text (a date is its first instant) or a ``datetime``.

    Returns:
        The instant, Unix ms.

    Raises:
        UsageError: Text that is neither form, or a value of another type (a ``bool`` is not a time).
    """
    if isinstance(value, datetime):
        return _ms(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        if value.isascii() and value.isdigit():
            return int(value)
        try:
            parsed = datetime.fromisoformat(value) if value.isascii() and value.strip() == value else None
        except ValueError:
            parsed = None
        if parsed is not None:
            return _ms(parsed)
    raise UsageError(f"{value!r} is not a time: give an ISO 8601 date or time (2026-12-01, 2026-12-01T09:30Z; "
                     "no offset means UTC), Unix milliseconds, or a datetime")


def text_of(value: Time) -> str:
    """``value`` as the binary's command line takes a time: text as given (the binary checks it), else Unix ms."""
    return value if isinstance(value, str) else str(to_ms(value))


def at_time(rev: str | None, when: Time) -> str:
    """The revision ``rev@{when}``: the newest commit of ``rev``'s first-parent line by then (None: HEAD's)."""
    return f"{rev or ''}@{{{text_of(when)}}}"


def _ms(moment: datetime) -> int:
    delta = (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)) - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000
