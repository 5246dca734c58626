"""Text checks shared by everything that hands strings to ``mnem``: what an argv or JSON cannot carry.

An argv cannot hold NUL, and a lone surrogate has no UTF-8 encoding, so
neither an argv, the worker's JSON request nor stdin can carry one.  The
bridge (``client.check_arguments``) and the LangGraph store (its key checks)
refuse such text up front with the same words, and bound what they quote.
The commit messages they generate name ids through ``in_message``, which
cuts a long one as ``mnem`` cuts it in the messages it generates.
"""

from __future__ import annotations

__all__ = ["MESSAGE_ID_CHARS", "in_message", "is_utf8", "shown", "text_problem"]

#: The longest id a generated commit message names whole (upstream's text); a longer one is cut to this length,
#: as ``mnem`` cuts it (``mnem_store.limits``), so ``mnem log --oneline`` stays one line of reasonable length.
MESSAGE_ID_CHARS = 80


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


def in_message(node_id: str) -> str:
    """``node_id`` as a generated commit message names it: whole up to ``MESSAGE_ID_CHARS``, else cut with ``...``."""
    return node_id if len(node_id) <= MESSAGE_ID_CHARS else node_id[: MESSAGE_ID_CHARS - 3] + "..."


def shown(text: str, limit: int = 60) -> str:
    """A bounded ``repr`` for messages: a 4 MB argument must not become a 4 MB error."""
    quoted = repr(text)
    return quoted if len(quoted) <= limit else quoted[: limit - 4] + "...'"
