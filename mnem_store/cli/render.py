"""Text rendering shared by the commands: ids, times, content, colour.

Plain output is upstream's byte for byte; colour (ANSI 256) is added only
when stdout is a terminal and ``NO_COLOR`` is unset, as upstream does.
"""

from __future__ import annotations

import re
from typing import Any, Final

from ..canonical import dump_compact, short
from ..errors import escaped, rust_debug
from ..objects import MemoryNode

__all__ = [
    "Painter", "compact", "first_line", "fmt_time", "marker", "message_lines", "rust_debug", "short", "terminal_safe",
    "value_text",
]

ID, GOOD, BAD, CHANGED, DIM, WARN, BRANCH = "75", "71", "167", "179", "245", "173", "140"

#: Characters a terminal acts on rather than shows: C0 controls but tab and newline, DEL, C1 controls (an 8-bit
#: CSI among them), and the invisible marks and overrides that reorder or hide text (bidi, zero-width, BOM,
#: line and paragraph separators).
_ACTING = r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]"
#: Those characters, found in text printed without colour (the empty group stands for the painter's codes).
#: These patterns are compiled on first use (``re`` keeps them): a ``--json`` answer never needs them.
_PLAIN: Final = f"(){_ACTING}"
#: The same, when this process paints: its own colour codes (the palette above, and the reset) stay as they are.
_PAINTED: Final = rf"(\x1b\[38;5;(?:{'|'.join((ID, GOOD, BAD, CHANGED, DIM, WARN, BRANCH))})m|\x1b\[0m)|{_ACTING}"


class Painter:
    """Wraps text in ANSI colour codes, or leaves it alone."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        """``text`` in ANSI 256-colour ``code``, or unchanged when colour is off."""
        return f"\x1b[38;5;{code}m{text}\x1b[0m" if self.enabled else text

    def change(self, text: str, kind: str) -> str:
        """``text`` in the colour of a change ``kind``: added, removed or modified."""
        return self({"added": GOOD, "removed": BAD, "modified": CHANGED}[kind], text)


def terminal_safe(text: str, colour: bool) -> str:
    r"""Text output with every character a terminal would act on written as ``\u{hex}``.

    What a command prints quotes what others wrote: an agent's commit
    message, a pusher's author, a node id, a provenance source.  An escape
    sequence in one could clear the screen, a carriage return or a bidi
    override could forge a line of output.  So the text mode's whole output
    passes through here (``--json`` is data: JSON escapes controls itself),
    keeping tab and newline, and with ``colour`` the painter's own codes.
    Plain text reads as upstream prints it; only such characters differ
    (docs/differences.md).  A message that spells one of the palette's
    codes paints in our colours, which hides nothing.
    """
    found = re.compile(_PAINTED if colour else _PLAIN)
    if found.search(text) is None:
        return text
    return found.sub(lambda match: match[1] or escaped(match[0]), text)


def fmt_time(ms: int) -> str:
    """Unix ms as ``YYYY-MM-DD HH:MM:SSZ`` (UTC, proleptic Gregorian, floor division)."""
    secs = ms // 1000
    days, sod = divmod(secs, 86_400)
    hh, mm, ss = sod // 3600, (sod % 3600) // 60, sod % 60
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    return f"{year:04}-{month:02}-{day:02} {hh:02}:{mm:02}:{ss:02}Z"


def message_lines(message: str) -> list[str]:
    r"""Split like Rust's ``str::lines``: on ``\n``, dropping one trailing ``\r`` per line."""
    if not message:
        return []
    parts = message.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def first_line(message: str) -> str:
    """A commit message's first line (its subject); "" for an empty message."""
    lines = message_lines(message)
    return lines[0] if lines else ""


def compact(content: Any) -> str:
    """Node content as upstream prints it: compact JSON with sorted keys."""
    return dump_compact(content)


def value_text(node: MemoryNode) -> str:
    """A node's value as text output shows it: its content as ``compact`` prints it.

    A version whose bytes were redacted shows its record in parentheses,
    "(redacted at T by A: reason)", never the old value.
    """
    return f"({node.redacted.shown()})" if node.redacted is not None else compact(node.content)


def marker(kind: str) -> str:
    """The sign upstream prints before a changed node: + added, - removed, ~ modified."""
    return {"added": "+", "removed": "-", "modified": "~"}[kind]
