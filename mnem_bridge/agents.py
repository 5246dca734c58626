"""``mnem_bridge.agents``: one commit per call, the write contract of ADR-0016.

An agent (or the MCP server, or the LangGraph store) records a belief with
one call that is exactly one commit, atomic, and never leaves or consumes
staged state, so a retried tool call cannot leave memory half-written.  Each
call is one ``mnem write`` (``Store.write``), applied to the branch tip in
one transaction.  No call writes a reserved id (``reserved``: a LangGraph
checkpoint's nodes): it is refused with ``UsageError`` before anything runs.
Nor does one pass ``mnem``'s limits on one call (an id's length, a value's
size, a batch's count and size: ``MNEM_MAX_*``, which ``mnem`` reads from
the environment it inherits): that is ``UsageError`` too, naming the limit,
and nothing is written.  The default commit messages are upstream's
(``remember <id>``, ``forget <id>``), with a long id cut (``text.in_message``).

A writer that loses a race is retried a bounded number of times: when a
concurrent writer moved the branch under it (``ConflictError``, the error
ADR-0016's "bounded retry-on-ConflictError" names) or held the store's
write lock past the binary's wait (``BusyError``).  Upstream's helpers make
4 attempts with a linear back-off of 25, 50 and 75 ms between them; upstream
also sleeps 100 ms after the last failure, which only delays the error, so
here the last failure is raised at once.  Other errors, such as ``forget``
of a node that is not in memory (``InvalidRefError``), are not retried.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any, TypeVar

from . import inline
from .errors import BusyError, ConflictError, ProtocolError, UsageError
from .models import PROVENANCE_KEYS
from .reserved import refuse_reserved
from .store import Store
from .text import in_message
from .times import Time

__all__ = ["ATTEMPTS", "BACKOFF_SECONDS", "ITEM_KEYS", "forget", "remember", "remember_many", "with_retry"]

logger = logging.getLogger(__name__)

#: Attempts per call before the last ``ConflictError`` or ``BusyError`` is raised.
ATTEMPTS = 4
#: Sleep after failed attempt ``n`` (0-based, not the last) is ``BACKOFF_SECONDS * (n + 1)``.
BACKOFF_SECONDS = 0.025
#: What an item of ``remember_many`` may carry besides ``id`` and ``content``: provenance, and when it became true.
ITEM_KEYS = (*PROVENANCE_KEYS, "event_time")

T = TypeVar("T")


def remember(
    store: Store,
    id: str,
    content: Any,
    *,
    source: str | None = None,
    step: str | None = None,
    observation: str | None = None,
    tool_call: str | None = None,
    note: str | None = None,
    summary: str | None = None,
    author: str = "agent",
    time_ms: int | None = None,
    event_time: Time | None = None,
) -> str:
    """Record one belief, with provenance, as one commit.

    Args:
        store: The store.
        id: The node id (recording it again revises the belief).
        content: Any JSON value.
        source: Provenance: an external source identifier.
        step: Provenance: the agent step (upstream's ``agent_step``).
        observation: Provenance: what was observed.
        tool_call: Provenance: the tool call that produced it.
        note: Provenance: a free-form note.
        summary: The commit message (default ``remember <id>``, a long id cut as ``text.in_message`` cuts it).
        author: The commit author.
        time_ms: Commit time in Unix ms (default: the binary's clock as it commits): when it was learnt.
        event_time: When the fact became true, if not when it was learnt (an extension): Unix ms, ISO 8601
            text (no offset: UTC) or a ``datetime`` (naive: UTC); stored in the fact as Unix ms, and what
            ``Store.memory_valid_at`` reads.

    Returns:
        The commit id.

    Raises:
        UsageError: ``id`` is reserved (``reserved``), ``event_time`` is not a time, or the id or value passes
            ``mnem``'s limits on one call (``MNEM_MAX_ID_BYTES``, ``MNEM_MAX_VALUE_BYTES``; docs/cli-json.md,
            "Input limits"); nothing is written.
        ConflictError: Another writer moved the branch on every attempt.
        BusyError: The store stayed busy through every attempt.
    """
    item = {"id": id, "content": content, "source": source, "step": step,
            "observation": observation, "tool_call": tool_call, "note": note, "event_time": event_time}
    return _one_commit(store, "remember", [item], [], summary or f"remember {in_message(id)}", author, time_ms)


def remember_many(
    store: Store,
    items: Iterable[Mapping[str, Any]],
    *,
    summary: str | None = None,
    author: str = "agent",
    time_ms: int | None = None,
) -> str:
    """Record several beliefs as one commit.

    Args:
        store: The store.
        items: Mappings with ``id`` and ``content``, and optionally ``source``,
            ``step``, ``observation``, ``tool_call``, ``note`` and ``event_time`` (as for
            ``remember``; other keys are ignored).
        summary: The commit message (default ``remember <n> node(s)``, also for none).
        author: The commit author.
        time_ms: Commit time in Unix ms (default: the binary's clock as it commits).

    Returns:
        The commit id (no items still make one commit, as upstream).

    Raises:
        UsageError: An item is not a mapping with ``id`` and ``content``, its id is reserved
            (``reserved``), its ``event_time`` is not a time, or the batch passes ``mnem``'s limits on one
            call (an id, a value, the count or size of the batch: docs/cli-json.md, "Input limits");
            nothing is written.
        ConflictError: Another writer moved the branch on every attempt.
        BusyError: The store stayed busy through every attempt.
    """
    puts = [_item(index, item) for index, item in enumerate(items)]
    count = len(puts)
    message = summary or f"remember {count} node{'' if count == 1 else 's'}"
    return _one_commit(store, "remember_many", puts, [], message, author, time_ms)


def _item(index: int, item: Any) -> dict[str, Any]:
    """One ``remember_many`` item as a put: a typed error, naming the item, when it is not one."""
    if not isinstance(item, Mapping) or "id" not in item or "content" not in item:
        shown = repr(item)
        raise UsageError(f"remember_many item {index} must be a mapping with at least id and content, "
                         f"got {shown if len(shown) <= 80 else shown[:77] + '...'}")
    return {"id": item["id"], "content": item["content"], **{key: item.get(key) for key in ITEM_KEYS}}


def forget(
    store: Store,
    id: str,
    *,
    summary: str | None = None,
    author: str = "agent",
    time_ms: int | None = None,
) -> str:
    """Delete one belief (a tombstone; history keeps it) as one commit.

    Args:
        store: The store.
        id: The node id.
        summary: The commit message (default ``forget <id>``, a long id cut as ``text.in_message`` cuts it).
        author: The commit author.
        time_ms: Commit time in Unix ms (default: the binary's clock as it commits).

    Returns:
        The commit id.

    Raises:
        UsageError: ``id`` is reserved (``reserved``); nothing is written.
        InvalidRefError: The node is not in memory (not retried).
        ConflictError: Another writer moved the branch on every attempt.
        BusyError: The store stayed busy through every attempt.
    """
    return _one_commit(store, "forget", [], [id], summary or f"forget {in_message(id)}", author, time_ms)


def _one_commit(store: Store, writer: str, puts: list[dict[str, Any]], deletes: list[str], message: str, author: str,
                time_ms: int | None) -> str:
    """One ``mnem write`` for ``writer`` (the call's name, for messages), retried as ``with_retry`` says."""
    refuse_reserved([*(put["id"] for put in puts), *deletes], writer)
    commit, _ = with_retry(lambda: store.write(puts, deletes, message=message, author=author, time_ms=time_ms))
    if commit is None:  # without --skip-missing, mnem write always records exactly one commit
        raise ProtocolError(f"mnem write recorded no commit for {message!r}", command=store.last_command)
    return commit.id


def with_retry(action: Callable[[], T]) -> T:
    """Run ``action``, retrying a lost race (``ConflictError``, ``BusyError``) with upstream's bounded back-off.

    Args:
        action: One attempt; it must be safe to repeat (each write is all or nothing).

    Returns:
        What the first successful attempt returned.

    Raises:
        ConflictError: The last attempt's error, once every attempt lost the race to another writer.
        BusyError: Likewise, when the last attempt found the store busy.
    """
    for attempt in range(ATTEMPTS - 1):
        try:
            return action()
        except (ConflictError, BusyError) as exc:
            logger.debug("%s (attempt %d of %d): %s", exc.code, attempt + 1, ATTEMPTS, exc.message)
            inline.blocking(partial(time.sleep, BACKOFF_SECONDS * (attempt + 1)))  # not on an event loop's thread
    return action()  # the last attempt: its error is the caller's, with no sleep before it is raised
