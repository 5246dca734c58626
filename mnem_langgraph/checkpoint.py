"""``MnemosyneSaver``: a LangGraph checkpointer whose checkpoints live in the memory store.

A graph compiled with ``checkpointer=MnemosyneSaver(path)`` keeps its
per-step state in the same store as its long-term memory, so both share one
history (``mnem log`` lists each checkpoint as a commit).  Everything goes
through ``mnem_bridge``; the engine is never imported.

Layout.  Every node lies under ``mnem_bridge.reserved.CHECKPOINT_PREFIX``,
which the MCP tools and ``MnemosyneStore`` never show.  After it come the
thread and the checkpoint namespace, each escaped as ``keys.encode_part``
escapes a label, then one of three kinds, as ``InMemorySaver`` keeps them:

* ``c:ID``: a checkpoint without its channel values, its metadata and its
  parent's id;
* ``b:CHANNEL:VERSION``: one channel's value at one version, written only
  when the version is new, so a checkpoint never copies a value that did not
  change (versions carry a random part, as ``InMemorySaver``'s do, so two
  forks of a thread cannot write different values under one id);
* ``w:ID:TASK:IDX``: a pending write of a task against checkpoint ``ID``.

Values are LangGraph's serializer's (``self.serde.dumps_typed``), its type
tag beside the bytes in base64.  A ``put`` is one ``mnem write`` (one
commit), ``put_writes`` an ``ls`` and a ``write``, ``get_tuple`` two reads
(three without a checkpoint id: an ``ls`` finds the latest) and ``list``
three whatever it returns.
"""

from __future__ import annotations

import base64
import logging
import os
import random
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

import mnem_bridge
from mnem_bridge.agents import with_retry
from mnem_bridge.reserved import CHECKPOINT_PREFIX

from .keys import SEPARATOR, decode_part, encode_part
from .opening import open_store

__all__ = ["MnemosyneSaver"]

logger = logging.getLogger(__name__)

#: Nodes read per ``mnem show --limit`` page.
PAGE = 5000
#: Above this many checkpoints, ``_load`` reads their namespaces whole rather than naming each one.
NAMED_READS = 64

CHECKPOINT, BLOB, WRITE = "c", "b", "w"


class Key(NamedTuple):
    """Where one checkpoint is: its thread, namespace and id."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str


class _Parsed(NamedTuple):
    """A reserved node id taken apart: thread, namespace, kind and the parts after the kind."""

    thread_id: str
    checkpoint_ns: str
    kind: str
    rest: tuple[str, ...]


def _join(*parts: str) -> str:
    return SEPARATOR.join(encode_part(part) for part in parts)


def _thread_prefix(thread_id: str) -> str:
    return CHECKPOINT_PREFIX + encode_part(thread_id) + SEPARATOR


def _ns_prefix(thread_id: str, checkpoint_ns: str) -> str:
    return _thread_prefix(thread_id) + encode_part(checkpoint_ns) + SEPARATOR


def _checkpoint_node(key: Key) -> str:
    return _ns_prefix(key.thread_id, key.checkpoint_ns) + _join(CHECKPOINT, key.checkpoint_id)


def _writes_prefix(key: Key) -> str:
    return _ns_prefix(key.thread_id, key.checkpoint_ns) + _join(WRITE, key.checkpoint_id) + SEPARATOR


def _blob_node(thread_id: str, checkpoint_ns: str, channel: str, version: object) -> str:
    return _ns_prefix(thread_id, checkpoint_ns) + _join(BLOB, channel, str(version))


def _parse(node_id: str) -> _Parsed | None:
    """A reserved node id's parts, or ``None`` for an id this saver did not write."""
    if not node_id.startswith(CHECKPOINT_PREFIX):
        return None
    parts = [decode_part(part) for part in node_id[len(CHECKPOINT_PREFIX):].split(SEPARATOR)]
    if len(parts) < 4 or any(part is None for part in parts):
        return None
    thread_id, checkpoint_ns, kind, *rest = (part or "" for part in parts)
    return _Parsed(thread_id, checkpoint_ns, kind, tuple(rest))


def _key_of(parsed: _Parsed) -> Key | None:
    """The checkpoint a checkpoint node or a pending write belongs to (``None`` for a channel value)."""
    if (parsed.kind == CHECKPOINT and len(parsed.rest) == 1) or (parsed.kind == WRITE and len(parsed.rest) == 3):
        return Key(parsed.thread_id, parsed.checkpoint_ns, parsed.rest[0])
    return None


def _config(key: Key) -> RunnableConfig:
    return {"configurable": {"thread_id": key.thread_id, "checkpoint_ns": key.checkpoint_ns,
                             "checkpoint_id": key.checkpoint_id}}


def _where(config: RunnableConfig) -> tuple[str, str]:
    """The thread and namespace a config names (LangGraph allows a thread id that is not a string)."""
    configurable = config["configurable"]
    return str(configurable["thread_id"]), str(configurable.get("checkpoint_ns") or "")


class MnemosyneSaver(BaseCheckpointSaver[str]):
    """A ``BaseCheckpointSaver`` on a Mnemosyne store: each checkpoint one commit, beside long-term memory.

    Args:
        path: The store, as ``MnemosyneStore`` takes it: a folder (created on
            first use when nothing else is there), a PostgreSQL store's URL,
            or ``None`` for ``$MNEM_STORE`` or discovery.
        author: The author of every commit the saver makes.
        mnem: The ``mnem`` binary (default: ``$MNEM_BIN``, then PATH, then the one beside this Python).
        timeout: Seconds one ``mnem`` invocation may take.
        create: As ``MnemosyneStore``'s: ``None`` creates a missing folder but never a PostgreSQL store.
        serde: LangGraph's serializer (default ``JsonPlusSerializer``), used as its own savers use it.
        clock: "Now" in Unix milliseconds for the commits' times (``None``: the system clock).

    Raises:
        NoStoreError: No store at ``path`` and none may be created there.
        BinaryNotFoundError: No ``mnem`` binary.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        author: str = "agent",
        mnem: str | os.PathLike[str] | None = None,
        timeout: float = mnem_bridge.DEFAULT_TIMEOUT,
        create: bool | None = None,
        serde: SerializerProtocol | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        super().__init__(serde=serde)
        self._client, self._store = open_store(path, mnem=mnem, timeout=timeout, create=create, clock=clock)
        self.author = author

    def close(self) -> None:
        """End this saver's ``mnem`` worker (a later call starts a new one)."""
        self._client.close()

    def __enter__(self) -> MnemosyneSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<MnemosyneSaver {str(self._store.root)!r} author={self.author!r}>"

    # ------------------------------------------------------------------ encoding
    def _dumps(self, value: Any) -> dict[str, str]:
        kind, data = self.serde.dumps_typed(value)
        return {"type": kind, "data": base64.b64encode(data).decode("ascii")}

    def _loads(self, typed: Mapping[str, Any]) -> Any:
        return self.serde.loads_typed((typed["type"], base64.b64decode(typed["data"])))

    # ------------------------------------------------------------------ store access
    def _nodes(self, prefixes: Iterable[str]) -> dict[str, Any]:
        """The content of every node whose id starts with one of ``prefixes``, in pages of ``PAGE``."""
        starts = sorted(set(prefixes))
        found: dict[str, Any] = {}
        cursor: str | None = None
        while starts:
            page = self._store.memory_page(limit=PAGE, cursor=cursor, prefixes=starts)
            found.update((node_id, node["content"]) for node_id, node in page.document["memory"].items())
            cursor = page.next_cursor
            if cursor is None:
                break
        return found

    def _ids(self, prefixes: Iterable[str]) -> list[_Parsed]:
        """The saver's nodes under ``prefixes``, parsed, without reading one (``mnem ls``)."""
        return [parsed for node_id in self._store.node_ids(prefixes=list(prefixes))
                if (parsed := _parse(node_id)) is not None]

    def _write(self, puts: list[dict[str, Any]], deletes: Sequence[str], message: str) -> None:
        """One commit of puts and deletes, retried if another writer held the store."""
        if puts or deletes:
            with_retry(lambda: self._store.write(puts, deletes, message=message, author=self.author,
                                                 skip_missing=True))

    def _load(self, keys: Sequence[Key], filter: Mapping[str, Any] | None = None,
              limit: int | None = None) -> list[CheckpointTuple]:
        """The tuples of ``keys`` (in their order) that exist and match ``filter``, at most ``limit``, in two reads.

        The first read fetches the checkpoint nodes, the second their channel
        values and pending writes, which are known only once the checkpoints
        are decoded.
        """
        if not keys or (limit is not None and limit <= 0):
            return []
        named = len(keys) <= NAMED_READS
        nodes = self._nodes(_checkpoint_node(key) if named else
                            _ns_prefix(key.thread_id, key.checkpoint_ns) + CHECKPOINT + SEPARATOR for key in keys)
        chosen: list[tuple[Key, Mapping[str, Any], dict[str, Any], CheckpointMetadata]] = []
        for key in keys:
            content = nodes.get(_checkpoint_node(key))
            if content is None:
                continue
            metadata = self._loads(content["metadata"])
            if filter and not all(metadata.get(name) == wanted for name, wanted in filter.items()):
                continue
            chosen.append((key, content, self._loads(content["checkpoint"]), metadata))
            if limit is not None and len(chosen) >= limit:
                break
        wanted = [_writes_prefix(key) for key, *_ in chosen]
        wanted += [_blob_node(key.thread_id, key.checkpoint_ns, channel, version)
                   for key, _, checkpoint, _ in chosen for channel, version in checkpoint["channel_versions"].items()]
        extra = self._nodes(wanted)
        return [self._tuple(key, content, checkpoint, metadata, extra)
                for key, content, checkpoint, metadata in chosen]

    def _tuple(self, key: Key, content: Mapping[str, Any], checkpoint: dict[str, Any], metadata: CheckpointMetadata,
               extra: Mapping[str, Any]) -> CheckpointTuple:
        """One ``CheckpointTuple``: the checkpoint with its channel values, and its writes in replay order."""
        values: dict[str, Any] = {}
        for channel, version in checkpoint["channel_versions"].items():
            blob = extra.get(_blob_node(key.thread_id, key.checkpoint_ns, channel, version))
            if blob is not None and blob["type"] != "empty":
                values[channel] = self._loads(blob)
        prefix = _writes_prefix(key)
        writes = sorted((write for node_id, write in extra.items() if node_id.startswith(prefix)),
                        key=lambda write: writes_sort_key(write["task_path"], write["task_id"], write["idx"]))
        parent = content.get("parent")
        return CheckpointTuple(
            config=_config(key),
            checkpoint={**checkpoint, "channel_values": values},  # type: ignore[typeddict-item]
            metadata=metadata,
            parent_config=_config(Key(key.thread_id, key.checkpoint_ns, parent)) if parent else None,
            pending_writes=[(write["task_id"], write["channel"], self._loads(write)) for write in writes],
        )

    # ------------------------------------------------------------------ BaseCheckpointSaver
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names, or the thread's latest in its namespace when it names none.

        Args:
            config: ``configurable`` with ``thread_id``, ``checkpoint_ns`` and optionally ``checkpoint_id``.

        Returns:
            The tuple, or ``None`` when there is no such checkpoint.
        """
        thread_id, checkpoint_ns = _where(config)
        checkpoint_id = get_checkpoint_id(config)
        if not checkpoint_id:
            found = [key for parsed in self._ids([_ns_prefix(thread_id, checkpoint_ns) + CHECKPOINT + SEPARATOR])
                     if parsed.kind == CHECKPOINT and (key := _key_of(parsed)) is not None]
            if not found:
                return None
            checkpoint_id = max(key.checkpoint_id for key in found)
        loaded = self._load([Key(thread_id, checkpoint_ns, checkpoint_id)])
        return loaded[0] if loaded else None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first (by id, as LangGraph's SQL savers order them), as ``InMemorySaver`` selects.

        Args:
            config: A thread (and namespace, and checkpoint id) to keep to; ``None`` for every thread.
            filter: Metadata every returned checkpoint has (equality per key).
            before: Only checkpoints with an id below this config's.
            limit: At most this many.

        Yields:
            The tuples, with their channel values and pending writes.
        """
        yield from self._list(config, filter, before, limit)

    def _list(self, config: RunnableConfig | None, filter: Mapping[str, Any] | None, before: RunnableConfig | None,
              limit: int | None) -> Sequence[CheckpointTuple]:
        if config is None:
            prefix, checkpoint_ns, checkpoint_id = CHECKPOINT_PREFIX, None, None
        else:
            thread_id, _ = _where(config)
            checkpoint_ns = config["configurable"].get("checkpoint_ns")
            checkpoint_id = get_checkpoint_id(config)
            prefix = (_thread_prefix(thread_id) if checkpoint_ns is None else
                      _ns_prefix(thread_id, checkpoint_ns) + CHECKPOINT + SEPARATOR)
        below = get_checkpoint_id(before) if before else None
        keys = [key for parsed in self._ids([prefix]) if parsed.kind == CHECKPOINT and (key := _key_of(parsed))
                and (checkpoint_ns is None or key.checkpoint_ns == checkpoint_ns)
                and (not checkpoint_id or key.checkpoint_id == checkpoint_id)
                and (not below or key.checkpoint_id < below)]
        keys.sort(key=lambda key: key.checkpoint_id, reverse=True)
        if not filter and limit is not None:
            keys = keys[:max(limit, 0)]
        return self._load(keys, filter, limit)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint and the channel values of its new versions as one commit.

        Args:
            config: The thread and namespace, and the parent's ``checkpoint_id`` if any.
            checkpoint: The checkpoint.
            metadata: Its metadata (with the config's extra keys, as every LangGraph saver adds them).
            new_versions: The channels whose values changed since the parent: only these are written.

        Returns:
            The config of the stored checkpoint.
        """
        thread_id, checkpoint_ns = _where(config)
        key = Key(thread_id, checkpoint_ns, checkpoint["id"])
        stored: dict[str, Any] = dict(checkpoint)
        values: dict[str, Any] = stored.pop("channel_values")
        puts = [{"id": _blob_node(thread_id, checkpoint_ns, channel, version),
                 "content": self._dumps(values[channel]) if channel in values else {"type": "empty", "data": ""}}
                for channel, version in new_versions.items()]
        full = get_checkpoint_metadata(config, metadata)
        puts.append({"id": _checkpoint_node(key), "content": {
            "checkpoint": self._dumps(stored), "metadata": self._dumps(full),
            "parent": config["configurable"].get("checkpoint_id")}})
        where = thread_id if not checkpoint_ns else f"{thread_id} {checkpoint_ns}"
        self._write(puts, (), f"checkpoint {where} step {full.get('step')} ({full.get('source')})")
        return _config(key)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes against a checkpoint as one commit.

        As in LangGraph's savers, a regular write already stored under the
        same task and index is kept (a retried task does not duplicate it),
        while the special channels (errors, interrupts, ...) are replaced.

        Args:
            config: The checkpoint's config.
            writes: ``(channel, value)`` pairs.
            task_id: The task that made them.
            task_path: The task's path, which orders a step's writes for replay.
        """
        thread_id, checkpoint_ns = _where(config)
        key = Key(thread_id, checkpoint_ns, str(config["configurable"]["checkpoint_id"]))
        prefix = _writes_prefix(key) + encode_part(task_id) + SEPARATOR
        indexed = [(WRITES_IDX_MAP.get(channel, i), channel, value) for i, (channel, value) in enumerate(writes)]
        kept = set(self._store.node_ids(prefixes=[prefix])) if any(idx >= 0 for idx, *_ in indexed) else set()
        puts = [{"id": f"{prefix}{idx}", "content": {"task_id": task_id, "channel": channel, "idx": idx,
                                                     "task_path": task_path, **self._dumps(value)}}
                for idx, channel, value in indexed if idx < 0 or f"{prefix}{idx}" not in kept]
        self._write(puts, (), f"checkpoint writes {thread_id} task {task_id}")

    def delete_thread(self, thread_id: str) -> None:
        """Remove a thread's checkpoints, channel values and writes from current memory as one commit.

        History keeps them (``mnem show REV`` at an older commit), as it keeps every removed fact.
        """
        ids = self._store.node_ids(prefixes=[_thread_prefix(str(thread_id))])
        self._write([], ids, f"delete checkpoints of thread {thread_id}")

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, channel value and write of a thread to another, as one commit.

        The whole parent chain is copied, as ``DeltaChannel`` needs.
        """
        source, target = _thread_prefix(str(source_thread_id)), _thread_prefix(str(target_thread_id))
        puts = [{"id": target + node_id[len(source):], "content": content}
                for node_id, content in self._nodes([source]).items()]
        self._write(puts, (), f"copy checkpoints of thread {source_thread_id} to {target_thread_id}")

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Remove the checkpoints whose metadata names one of ``run_ids``, with their writes, as one commit.

        Reads the metadata of every checkpoint in the store: a run is not part of a node id.
        Channel values no remaining checkpoint of their namespace refers to go too.
        """
        runs = set(run_ids)
        if not runs:
            return
        everything = self._ids([CHECKPOINT_PREFIX])
        keys = [key for parsed in everything if parsed.kind == CHECKPOINT and (key := _key_of(parsed))]
        loaded = self._load(keys)
        doomed = {_key(item) for item in loaded if item.metadata.get("run_id") in runs}
        self._sweep(everything, doomed, [item for item in loaded if _key(item) not in doomed],
                    f"delete checkpoints of {len(runs)} run(s)")

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Keep only each namespace's latest checkpoint (``"keep_latest"``), or none (``"delete"``), as one commit.

        ``keep_latest`` keeps the latest checkpoint's writes and every channel
        value it refers to.  It does not walk back to a ``DeltaChannel``
        snapshot (see ``BaseCheckpointSaver.prune``): prune no thread whose
        graph uses one.

        Raises:
            ValueError: Another strategy.
        """
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}: 'keep_latest' or 'delete'")
        prefixes = [_thread_prefix(str(thread_id)) for thread_id in thread_ids]
        if not prefixes:
            return
        everything = self._ids(prefixes)
        keys = [key for parsed in everything if parsed.kind == CHECKPOINT and (key := _key_of(parsed))]
        latest: dict[tuple[str, str], Key] = {}
        if strategy == "keep_latest":
            for key in keys:
                place = (key.thread_id, key.checkpoint_ns)
                if place not in latest or key.checkpoint_id > latest[place].checkpoint_id:
                    latest[place] = key
        kept = set(latest.values())
        self._sweep(everything, {key for key in keys if key not in kept}, self._load(sorted(kept)),
                    f"prune checkpoints of {len(prefixes)} thread(s) ({strategy})")

    def _sweep(self, everything: Sequence[_Parsed], doomed: set[Key], survivors: Sequence[CheckpointTuple],
               message: str) -> None:
        """Delete the doomed checkpoints, their writes, and the channel values no survivor of their namespace uses."""
        if not doomed:
            return
        touched = {(key.thread_id, key.checkpoint_ns) for key in doomed}
        used = {(*_key(item)[:2], channel, str(version))
                for item in survivors for channel, version in item.checkpoint["channel_versions"].items()}
        deletes: list[str] = []
        for parsed in everything:
            key = _key_of(parsed)
            blob = parsed.kind == BLOB and len(parsed.rest) == 2
            if (key is not None and key in doomed) or (
                    blob and (parsed.thread_id, parsed.checkpoint_ns) in touched
                    and (parsed.thread_id, parsed.checkpoint_ns, *parsed.rest) not in used):
                deletes.append(_node_id(parsed))
        self._write([], deletes, message)

    def get_next_version(self, current: str | None, channel: None) -> str:
        """The next version of a channel: the counter, then a random part, as ``InMemorySaver``'s.

        The random part keeps two forks of one thread from giving different
        values the same version, which would put both under one node id.
        """
        number = 0 if current is None else current if isinstance(current, int) else int(str(current).split(".")[0])
        return f"{number + 1:032}.{random.random():016}"

    # ------------------------------------------------------------------ async
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """``get_tuple`` on the event loop's thread, its waits for ``mnem`` awaited (``mnem_bridge.run_inline``)."""
        return await mnem_bridge.run_inline(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """``list``, its reads awaited as ``aget_tuple``'s are (they happen before the first tuple is yielded)."""
        for item in await mnem_bridge.run_inline(self._list, config, filter, before, limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """``put``, awaited as ``aget_tuple`` is."""
        return await mnem_bridge.run_inline(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """``put_writes``, awaited as ``aget_tuple`` is."""
        await mnem_bridge.run_inline(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """``delete_thread``, awaited as ``aget_tuple`` is."""
        await mnem_bridge.run_inline(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """``copy_thread``, awaited as ``aget_tuple`` is."""
        await mnem_bridge.run_inline(self.copy_thread, source_thread_id, target_thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """``delete_for_runs``, awaited as ``aget_tuple`` is."""
        await mnem_bridge.run_inline(self.delete_for_runs, run_ids)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """``prune``, awaited as ``aget_tuple`` is."""
        await mnem_bridge.run_inline(self.prune, thread_ids, strategy=strategy)


def _key(item: CheckpointTuple) -> Key:
    configurable = item.config["configurable"]
    return Key(configurable["thread_id"], configurable["checkpoint_ns"], configurable["checkpoint_id"])


def _node_id(parsed: _Parsed) -> str:
    """The node id ``_parse`` took apart."""
    return _ns_prefix(parsed.thread_id, parsed.checkpoint_ns) + _join(parsed.kind, *parsed.rest)
