"""A checkpoint node's values, stored and read back strictly: a planted or damaged node is a typed error.

``MnemosyneSaver``'s nodes live in a store that others write too: a client
with ``mnem:write`` pushes commits that may hold them, a person may run
``mnem write --allow-reserved``.  LangGraph's serializer stores an object as
the module and name of a callable and its arguments, and calls it to read it
back, so whoever writes a node chooses what loading it runs.  What the saver
reads is therefore checked before LangGraph sees it:

* Values are decoded by a serializer that builds only what it is told to
  (``strict_serializer``): LangGraph's ``SAFE_MSGPACK_TYPES`` (messages,
  ``Send``, ``Command``, ``Interrupt``, dates, ...) and the types the app
  names; pickle never loads.  LangGraph's own strict mode puts a blocked
  object's raw arguments where the object was and logs a warning, so a graph
  would resume from state that silently changed shape; here a blocked type
  makes the node unreadable instead (``UnreadableCheckpointError`` names it,
  the type and the option that allows it).  The serializer reports what it
  blocks through LangGraph's serde events (``listen``), heard only by the
  thread or task doing the load.
* Each node's shape is checked (its keys and their types, the bytes'
  encoding, what they decode to), so a node the saver did not write is the
  same typed error naming it, never a ``KeyError`` from inside.

A value is kept as ``{"type": TAG, "latin1": BYTES}``: the serializer's type
tag and its bytes as one character per byte (``LATIN1``).  Values written
before issue #35 keep the bytes in base64 under ``data``, and still read.
"""

from __future__ import annotations

import base64
import binascii
import contextvars
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from inspect import isclass
from typing import Any, NamedTuple

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.event_hooks import SerdeEvent, register_serde_event_listener
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

import mnem_bridge
from mnem_bridge.text import shown

__all__ = ["EMPTY", "LATIN1", "Blocked", "CheckpointNode", "PendingWrite", "UnreadableCheckpointError", "channel_value",
           "checkpoint_node", "dumps", "loads", "memory_pin", "pending_write", "strict_serializer"]

#: The key of a stored value's serialized bytes, each byte one character (U+0000 to U+00FF).  Serialized
#: messages are mostly ASCII, so this is about 10% larger than the bytes on the way to ``mnem write`` and
#: deflates as the text it holds, where base64 (the ``data`` key of older stores, still read) is a third
#: larger and scrambles the text: 30% fewer bytes stored and 40% less deflate time (issue #35).
LATIN1 = "latin1"

#: The type tag of a channel version whose channel had no value (``{"type": EMPTY, "data": ""}``).
EMPTY = "empty"

#: LangGraph's serde events for an object it refused to build, and for a method it refused to call.
BLOCKED = frozenset({"msgpack_blocked", "msgpack_method_blocked"})

#: How many of the types a node names an error's message quotes.
SHOWN = 5

#: What the serializer blocked: a type's ``(module, name)``, or a method's ``(module, name, method)``.
Blocked = tuple[str, ...]

#: Where the serde events of the load in progress go (``None``: no load of ours is listening).
_heard: contextvars.ContextVar[list[Blocked] | None] = contextvars.ContextVar("mnem_langgraph_blocked",
                                                                              default=None)


class UnreadableCheckpointError(mnem_bridge.CorruptStoreError):
    """A checkpoint node the saver will not load: not shaped as it writes one, or naming a type it does not build.

    Code ``corrupt_store``: the store holds a node that does not decode to
    what its id says it is.  Raised by ``get_tuple``, ``list`` and their async
    forms for the checkpoint it belongs to; other checkpoints stay readable.

    Args:
        node_id: The node.
        problem: What is wrong with it, in the user's terms (unused when ``blocked`` says it).
        blocked: What its values named that the serializer does not build: types' ``(module, name)``,
            methods' ``(module, name, method)`` (LangGraph allows no method but its own few).

    Attributes:
        node_id: The node.
        blocked: What it named, dotted (``"os.system"``); empty when the node is malformed.
    """

    def __init__(self, node_id: str, problem: str, blocked: Sequence[Blocked] = ()) -> None:
        node = shown(node_id, 160)
        remove = (f"`mnem blame {node}` names the commit that wrote it; remove the node with `mnem write "
                  "--allow-reserved` (a delete) or its thread with MnemosyneSaver.delete_thread")
        self.node_id = node_id
        self.blocked = tuple(".".join(parts) for parts in blocked)
        if blocked:  # the names are the node's text: quoted, bounded, and only the first few
            names = ", ".join(shown(name) for name in self.blocked[:SHOWN])
            names += f" and {len(blocked) - SHOWN} more" if len(blocked) > SHOWN else ""
            pairs = [f"({shown(parts[0])}, {shown(parts[1])})" for parts in blocked[:SHOWN] if len(parts) == 2]
            allow = (f"if it is your graph's own type, allow it: MnemosyneSaver(allowed_types="
                     f"[{', '.join(pairs)}]), or compile the graph with "
                     "LANGGRAPH_STRICT_MSGPACK=true to allow its state schema's types (docs/langgraph.md, "
                     "\"What the saver loads\"); if not, ") if pairs else ""
            message = (f"checkpoint node {node} names {names}, which the saver does not load: it builds only "
                       f"LangGraph's safe types and the ones the app allows; {allow}{remove}")
        else:
            message = f"checkpoint node {node} cannot be read: {problem}; MnemosyneSaver did not write it so: {remove}"
        super().__init__(message)


def strict_serializer(allowed_types: Iterable[type | tuple[str, str]] = ()) -> JsonPlusSerializer:
    """LangGraph's serializer building only ``SAFE_MSGPACK_TYPES`` and ``allowed_types``, whatever the environment.

    Without ``allowed_msgpack_modules`` LangGraph's serializer builds any type
    unless ``LANGGRAPH_STRICT_MSGPACK`` is set; ``None`` makes it strict.
    ``with_allowlist`` (a compiled graph's, under that variable) widens it.

    Args:
        allowed_types: Classes, or ``(module, name)`` pairs, to build besides the safe ones.

    Raises:
        mnem_bridge.UsageError: An entry is neither.
    """
    extra = list(allowed_types)
    for entry in extra:
        if not (isclass(entry) or (isinstance(entry, tuple) and len(entry) == 2
                                   and all(isinstance(part, str) for part in entry))):
            raise mnem_bridge.UsageError(f"allowed_types takes classes or (module, name) pairs, got {entry!r}")
    serde = JsonPlusSerializer(allowed_msgpack_modules=None)
    return serde.with_msgpack_allowlist(extra) if extra else serde


def _listen(event: SerdeEvent) -> None:
    """Note a type the serializer blocked, for the load of ours that is in progress in this thread or task."""
    heard = _heard.get()
    if heard is not None and event["kind"] in BLOCKED:
        method = event.get("method")
        heard.append((str(event["module"]), str(event["name"]), *([str(method)] if method is not None else [])))


register_serde_event_listener(_listen)


@contextmanager
def _blocked() -> Iterator[list[Blocked]]:
    """The types the serializer blocks meanwhile, in this thread or task only."""
    heard: list[Blocked] = []
    token = _heard.set(heard)
    try:
        yield heard
    finally:
        _heard.reset(token)


def dumps(serde: SerializerProtocol, value: Any) -> dict[str, str]:
    """The serializer's type tag and bytes, the bytes as a Latin-1 string (``LATIN1``)."""
    kind, data = serde.dumps_typed(value)
    return {"type": kind, LATIN1: data.decode("latin-1")}


def loads(serde: SerializerProtocol, node_id: str, typed: Any, what: str = "its value") -> Any:
    """A value ``dumps`` stored (or base64 under ``data``, as before issue #35), checked.

    Args:
        serde: The saver's serializer.
        node_id: The node holding it, for the error.
        typed: The stored ``{"type", "latin1" | "data"}``.
        what: The value's name within the node, for the error.

    Raises:
        UnreadableCheckpointError: ``typed`` is not shaped so, its bytes do not decode (an unknown tag
            such as ``pickle``, bad msgpack), or they name a type the serializer does not build.
    """
    if not isinstance(typed, Mapping) or not isinstance(typed.get("type"), str):
        raise UnreadableCheckpointError(node_id, f"{what} is not an object with a text type")
    data = _bytes(node_id, typed, what)
    with _blocked() as blocked:
        try:
            value = serde.loads_typed((typed["type"], data))
        except Exception as exc:  # hostile bytes: whatever the decoder raises means the value cannot be read
            raise UnreadableCheckpointError(
                node_id, f"{what} ({shown(typed['type'])}) does not decode: {type(exc).__name__}") from exc
    if blocked:
        raise UnreadableCheckpointError(node_id, f"{what} names types it may not", list(dict.fromkeys(blocked)))
    return value


def _bytes(node_id: str, typed: Mapping[str, Any], what: str) -> bytes:
    """The serialized bytes a stored value holds: ``latin1`` text, or base64 ``data``."""
    text = typed.get(LATIN1)
    if text is not None:
        if isinstance(text, str):
            try:
                return text.encode("latin-1")
            except UnicodeEncodeError:
                pass
        raise UnreadableCheckpointError(node_id, f"{what}'s {LATIN1} is not text of one byte per character")
    encoded = typed.get("data")
    if isinstance(encoded, str):
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            pass
    raise UnreadableCheckpointError(node_id, f"{what} holds neither {LATIN1} text nor base64 data")


class CheckpointNode(NamedTuple):
    """A checkpoint node (``c:ID``) read: the checkpoint without its channel values, its metadata, its parent."""

    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    parent: str | None


def checkpoint_node(serde: SerializerProtocol, node_id: str, content: Any) -> CheckpointNode:
    """A checkpoint node's content decoded and checked.

    The checkpoint must be an object whose ``channel_versions`` maps channel
    names to versions (the saver reads their values by them) and whose
    ``versions_seen`` is an object (LangGraph's loop reads it); the
    metadata an object; the parent an id or nothing.

    Raises:
        UnreadableCheckpointError: Any of that does not hold, or a value does not load.
    """
    if not isinstance(content, Mapping):
        raise UnreadableCheckpointError(node_id, "it is not an object")
    parent = content.get("parent")
    if parent is not None and not isinstance(parent, str):
        raise UnreadableCheckpointError(node_id, "its parent is not a checkpoint id")
    metadata = loads(serde, node_id, content.get("metadata"), "its metadata")
    if not isinstance(metadata, dict):
        raise UnreadableCheckpointError(node_id, "its metadata is not an object")
    checkpoint = loads(serde, node_id, content.get("checkpoint"), "its checkpoint")
    if not isinstance(checkpoint, dict):
        raise UnreadableCheckpointError(node_id, "its checkpoint is not an object")
    versions = checkpoint.get("channel_versions")
    if not isinstance(versions, dict) or not all(
            isinstance(channel, str) and isinstance(version, str | int | float) and not isinstance(version, bool)
            for channel, version in versions.items()):
        raise UnreadableCheckpointError(node_id, "its checkpoint's channel_versions do not map channels to versions")
    if not isinstance(checkpoint.get("versions_seen"), dict):
        raise UnreadableCheckpointError(node_id, "its checkpoint's versions_seen is not an object")
    return CheckpointNode(checkpoint, metadata, parent)


def memory_pin(node_id: str, content: Any) -> tuple[str | None, str | None] | None:
    """The ``(branch, commit)`` a coupled saver's checkpoint node records, or ``None`` when it records none.

    Raises:
        UnreadableCheckpointError: The node is not an object, or the record not one of two texts (or nulls).
    """
    if not isinstance(content, Mapping):
        raise UnreadableCheckpointError(node_id, "it is not an object")
    pin = content.get("memory")
    if pin is None:
        return None
    if not isinstance(pin, Mapping) or not all(isinstance(pin.get(key), str | None) for key in ("branch", "commit")):
        raise UnreadableCheckpointError(node_id, "its memory pin is not {branch, commit}")
    return pin.get("branch"), pin.get("commit")


class PendingWrite(NamedTuple):
    """A pending write node (``w:ID:TASK:IDX``) read."""

    task_id: str
    channel: str
    idx: int
    task_path: str
    value: Any


def pending_write(serde: SerializerProtocol, node_id: str, content: Any) -> PendingWrite:
    """A pending write node's content decoded and checked.

    Raises:
        UnreadableCheckpointError: A key is missing or of the wrong type, or the value does not load.
    """
    if not isinstance(content, Mapping):
        raise UnreadableCheckpointError(node_id, "it is not an object")
    task_id, channel, idx, task_path = (content.get(key) for key in ("task_id", "channel", "idx", "task_path"))
    if not (isinstance(task_id, str) and isinstance(channel, str) and type(idx) is int and isinstance(task_path, str)):
        raise UnreadableCheckpointError(node_id, "it lacks a text task_id, channel and task_path and an integer idx")
    return PendingWrite(task_id, channel, idx, task_path, loads(serde, node_id, content, "its value"))


def channel_value(serde: SerializerProtocol, node_id: str, content: Any) -> tuple[bool, Any]:
    """A channel value node (``b:CHANNEL:VERSION``): ``(True, value)``, or ``(False, None)`` for no value.

    Raises:
        UnreadableCheckpointError: The value does not load.
    """
    if isinstance(content, Mapping) and content.get("type") == EMPTY:
        return False, None
    return True, loads(serde, node_id, content)
