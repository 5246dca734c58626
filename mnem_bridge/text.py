"""Text checks shared by everything that hands strings to ``mnem``: what an argv or JSON cannot carry.

An argv cannot hold NUL, and a lone surrogate has no UTF-8 encoding, so
neither an argv, the worker's JSON request nor stdin can carry one.  The
bridge (``client.check_arguments``) and the LangGraph store (its key checks)
refuse such text up front with the same words, and bound what they quote.
"""

from __future__ import annotations

__all__ = ["is_utf8", "shown", "text_problem"]


def text_problem(text: str, *, nul: bool) -> str | None:
    """Why ``text`` cannot reach ``mnem`` (to follow "the X ..."), or ``None``; ``nul``: it goes on an argv."""
    if nul and "\0" in text:
        return "contains NUL, which no command line can carry"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"holds the lone surrogate U+{ord(text[exc.start]):04X} at position {exc.start}, which is not text"
    return None


def is_utf8(text: str) -> bool:
    """Whether ``text`` has a UTF-8 encoding (no lone surrogates), so JSON can carry it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(text: str, limit: int = 60) -> str:
    """A bounded ``repr`` for messages: a 4 MB argument must not become a 4 MB error."""
    quoted = repr(text)
    return quoted if len(quoted) <= limit else quoted[: limit - 4] + "...'"
