"""Wall-clock times as the command line takes them: ``main@{2026-12-01}``, ``log --since``, ``show --valid-at``.

People ask memory questions by date ("what did the agent believe last
Tuesday?"), so every place that takes a time takes the same two spellings:

* Unix milliseconds, ASCII digits only (``1764547200000``), the unit of every
  time the engine stores;
* ISO 8601, as Python's ``datetime.fromisoformat`` reads it: a date
  (``2026-12-01``, the start of that day) or a date and time
  (``2026-12-01T09:30``, ``2026-12-01T09:30:00.250+02:00``, ``...Z``).  A time
  without an offset is UTC, never the machine's local zone: the same text
  names the same instant on every machine that runs the command, as the
  times ``mnem log`` prints (``...Z``) do.

``--now`` (``clock.parse_now``) is stricter on purpose: it is a clock
reading, never typed by a person.
"""

from __future__ import annotations

from datetime import UTC, datetime

from .errors import UsageError

__all__ = ["TIME_FORMS", "iso", "parse_time"]

#: How to write a time, for messages that refuse one.
TIME_FORMS = "an ISO 8601 date or time (2026-12-01, 2026-12-01T09:30Z; no offset means UTC) or Unix milliseconds"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_time(text: str) -> int:
    """A time as the command line writes it, in Unix milliseconds.

    Args:
        text: Unix ms (ASCII digits) or ISO 8601 (see the module's docstring).

    Returns:
        The instant in Unix ms (a date is its first millisecond, UTC).

    Raises:
        UsageError: ``text`` is neither form (the caller may re-raise it as ``invalid_ref`` inside a revision).
    """
    if text.isascii() and text.isdigit():
        return int(text)
    try:
        parsed = datetime.fromisoformat(text) if text.isascii() and text.strip() == text else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise UsageError(f"{text!r} is not a time: give {TIME_FORMS}")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    delta = parsed - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def iso(ms: int) -> str:
    """Unix ms as ISO 8601 in UTC to the millisecond, e.g. ``2026-12-01T09:30:00.000Z`` (for messages)."""
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):  # beyond datetime's years 1-9999: the number says it exactly
        return f"{ms} ms"
