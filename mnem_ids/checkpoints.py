"""How ``MnemosyneSaver`` lays out a checkpoint's nodes: the one spelling of the layout (see the package).

Every node starts with ``CHECKPOINT_PREFIX``.  Its ``.`` is a character no
LangGraph namespace label may hold, so no ``MnemosyneStore.put`` can write
there.  Then come the thread and the checkpoint namespace, each escaped as
any part is (``mnem_ids.encode_part``), so thread ``a`` never matches the
nodes of thread ``a:b``, and then one of three kinds, with its parts:

* ``c:ID``: a checkpoint (without its channel values), its metadata and its
  parent's id;
* ``b:CHANNEL:VERSION``: one channel's value at one version;
* ``w:ID:TASK:IDX``: a pending write of a task against checkpoint ``ID``.

Checkpoint ids (uuid6) and versions hold neither ``:`` nor ``%``, so they
are their own escapes and ids sort as they do: the greatest ``c:`` id under
a namespace is its latest checkpoint.
"""

from __future__ import annotations

from typing import NamedTuple

from . import SEPARATOR, decode_part, encode_part

__all__ = ["BLOB", "CHECKPOINT", "CHECKPOINT_PREFIX", "WRITE", "Parsed", "namespace_prefix", "node", "parse",
           "thread_of", "thread_prefix"]

#: The id prefix of every node ``MnemosyneSaver`` writes (checkpoints, channel values, pending writes).
CHECKPOINT_PREFIX = ".checkpoint:"

#: The three kinds of node: a checkpoint, a channel's value, a pending write.
CHECKPOINT, BLOB, WRITE = "c", "b", "w"


class Parsed(NamedTuple):
    """A checkpoint node's id taken apart: thread, namespace, kind and the parts after the kind, unescaped."""

    thread_id: str
    checkpoint_ns: str
    kind: str
    rest: tuple[str, ...]


def thread_prefix(thread_id: str) -> str:
    """What the id of every node of one thread starts with."""
    return CHECKPOINT_PREFIX + encode_part(thread_id) + SEPARATOR


def namespace_prefix(thread_id: str, checkpoint_ns: str) -> str:
    """What the id of every node of one thread's checkpoint namespace starts with."""
    return thread_prefix(thread_id) + encode_part(checkpoint_ns) + SEPARATOR


def node(thread_id: str, checkpoint_ns: str, kind: str, *parts: str) -> str:
    """The id of a node of ``kind`` with ``parts`` (or, with fewer parts, what its ids start with but the separator)."""
    return namespace_prefix(thread_id, checkpoint_ns) + SEPARATOR.join(encode_part(part) for part in (kind, *parts))


def parse(node_id: str) -> Parsed | None:
    """A checkpoint node's parts (``node``'s arguments), or ``None`` for an id this layout does not write."""
    if not node_id.startswith(CHECKPOINT_PREFIX):
        return None
    parts = [decode_part(part) for part in node_id[len(CHECKPOINT_PREFIX):].split(SEPARATOR)]
    if len(parts) < 4 or any(part is None for part in parts):
        return None
    thread_id, checkpoint_ns, kind, *rest = (part or "" for part in parts)
    return Parsed(thread_id, checkpoint_ns, kind, tuple(rest))


def thread_of(node_id: str) -> str | None:
    """The thread a checkpoint node belongs to (``None``: not a checkpoint node, or its thread is no escape's)."""
    if not node_id.startswith(CHECKPOINT_PREFIX):
        return None
    return decode_part(node_id[len(CHECKPOINT_PREFIX):].split(SEPARATOR, 1)[0])
