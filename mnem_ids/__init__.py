"""Node ids that both sides of the process boundary spell, in one place that imports nothing of the project.

The engine (``mnem_store``) and the adapters' bridge (``mnem_bridge``)
never import each other (``tests/test_layers.py``), yet some ids mean the
same to both.  A LangGraph checkpoint's nodes (``checkpoints``) are
written and parsed by ``MnemosyneSaver``, hidden from agents by
``mnem_bridge.reserved``, and refused to ordinary writers, followed per
thread and marked in the history by the engine (``mnem write``, ``mnem log
--thread``, ``mnem ui``).  Spelling that layout in each of them made four
copies that had to agree; here it is spelled once, and the test above
fails if the literals appear anywhere else.

Why a leaf package rather than the engine owning the layout and the others
asking ``mnem`` for it: an id is a pure function of a thread, a namespace
and a few parts, computed on every checkpoint read and write and on every
answer the bridge filters, so a round trip to ``mnem`` for it would cost a
process call for a string join.  A package that imports nothing of the
project can be imported by all four without bending the one-way rule, and
costs a one-shot ``mnem`` two small modules.

This module holds what every id of the toolkit's layouts shares: parts
joined with ``SEPARATOR``, each part escaped first so that any text
round-trips.  ``%`` becomes ``%25`` and ``:`` becomes ``%3A``
(percent-encoding restricted to those two characters); a part with neither
is its own escape, so ``("memories", "u1")`` + ``"plan"`` is
``memories:u1:plan`` exactly as upstream writes it.
"""

from __future__ import annotations

__all__ = ["ESCAPE", "SEPARATOR", "decode_part", "encode_part"]

SEPARATOR = ":"
ESCAPE = "%"
_ESCAPED_ESCAPE, _ESCAPED_SEPARATOR = "%25", "%3A"


def encode_part(text: str) -> str:
    """Escape one part (a label, a key, a thread) so it holds no bare ``SEPARATOR``.

    Args:
        text: The part.

    Returns:
        ``text`` with ``%`` as ``%25`` and ``:`` as ``%3A``; unchanged if it has neither.
    """
    return text.replace(ESCAPE, _ESCAPED_ESCAPE).replace(SEPARATOR, _ESCAPED_SEPARATOR)


def decode_part(text: str) -> str | None:
    """Undo ``encode_part``, or say the text is not something it produced.

    Every ``%`` that ``encode_part`` writes starts one of its two escapes,
    so ``%3A`` is undone first (no ``%25`` can end in it) and then ``%25``;
    the answer is kept only if encoding it gives ``text`` again.

    Args:
        text: One ``SEPARATOR``-separated part of an id.

    Returns:
        The original part, or ``None`` when ``text`` holds a ``%`` that is
        not one of the two escapes (so nothing this layout writes holds it).
    """
    decoded = text.replace(_ESCAPED_SEPARATOR, SEPARATOR).replace(_ESCAPED_ESCAPE, ESCAPE)
    return decoded if encode_part(decoded) == text else None
