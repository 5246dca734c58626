"""``MnemosyneSaver``: a LangGraph checkpointer whose checkpoints live in the memory store.

A graph compiled with ``checkpointer=MnemosyneSaver(path)`` keeps its
per-step state in the same store as its long-term memory, so both share one
history (``mnem log`` lists each checkpoint as a commit).  Everything goes
through ``mnem_bridge``; the engine is never imported.

Layout.  Every node lies under ``CHECKPOINT_PREFIX``, which the MCP tools
and ``MnemosyneStore`` never show, laid out by ``mnem_ids.checkpoints`` (the
one spelling the engine and the bridge share): the thread, the checkpoint
namespace, then one of three kinds, as ``InMemorySaver`` keeps them: a
checkpoint without its channel values, with its metadata and its parent's
id; one channel's value at one version; a task's pending write.  A channel's
value is written only when its version is new, so a checkpoint never copies
a value that did not change (versions carry a random part, as
``InMemorySaver``'s do, so two forks of a thread cannot write different
values under one id).

Values are LangGraph's serializer's (``self.serde.dumps_typed``), its type
tag beside the bytes as a Latin-1 string (``stored.LATIN1``), read back
strictly (``stored``): only the types LangGraph deems safe and those the
app allows are built, and a node the saver did not write so is an
``UnreadableCheckpointError`` naming it.  A ``put`` is one
``mnem write`` (one commit; with retention, ``keep_last`` / ``max_age``, an
``ls`` before it and, once the namespace holds more than the rule keeps, a
read of its checkpoints, the write then redacting what it removes in its
own transaction), ``put_writes`` one too (its regular writes put
only if absent), ``get_tuple`` two reads (three without a checkpoint id: an
``ls`` finds the latest) and ``list`` three whatever it returns.

Checkpoint-coupled memory (``couple_memory=True``).  The checkpoints then
live on their own branch, ``CHECKPOINT_BRANCH``, written with ``mnem write
--branch`` and read there, so the memory branch holds memory commits only
and a branch made for a replay cannot hide a thread's other checkpoints.
Each checkpoint of a thread's root namespace records a ``MemoryPin``: the
memory branch its run reads and writes (``None``: HEAD's, as without the
flag) and that branch's commit when the checkpoint was put.  A checkpoint
whose parent is no longer the thread's latest starts a fork (a replay, or
a resume or update at a past checkpoint): it gets a new branch,
``replay/<thread>/<its id>``, made at the parent's commit.  A
``MnemosyneStore`` on the same store finds the saver in the running task's
config and reads and writes the pinned branch (``coupling``); a
``get_state`` puts nothing, so inspecting the past switches nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
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
from mnem_bridge.features import require
from mnem_bridge.text import in_message
from mnem_ids import SEPARATOR, encode_part
from mnem_ids.checkpoints import (
    BLOB,
    CHECKPOINT,
    CHECKPOINT_PREFIX,
    WRITE,
    Parsed,
    namespace_prefix,
    node,
    parse,
    thread_prefix,
)

from . import retention, stored
from .opening import open_store
from .stored import UnreadableCheckpointError

__all__ = ["CHECKPOINT_BRANCH", "MemoryPin", "MnemosyneSaver", "UnreadableCheckpointError", "replay_branch"]

logger = logging.getLogger(__name__)

#: Nodes read per ``mnem show --limit`` page.
PAGE = 5000
#: Above this many checkpoints, ``_load`` reads their namespaces whole rather than naming each one.
NAMED_READS = 64

#: Seconds between looks at the kept pins while ``amemory_pin`` waits for a put on the same event loop.
PIN_POLL = 0.002
#: Pins a saver keeps, the least recently used let go first; one let go is read again from its checkpoint node.
KEPT_PINS = 1024

#: The branch a ``couple_memory`` saver keeps every checkpoint on, apart from the memory branches.
CHECKPOINT_BRANCH = "langgraph/checkpoints"


class MemoryPin(NamedTuple):
    """The memory a checkpoint ran with: the branch its run reads and writes, and that branch's commit then.

    ``branch`` is ``None`` for HEAD's branch (a run that was never replayed
    uses memory as it would without coupling); ``commit`` is ``None`` when
    that branch had no commit yet.
    """

    branch: str | None
    commit: str | None


def replay_branch(thread_id: str, checkpoint_id: str) -> str:
    """The memory branch a fork's first checkpoint starts: ``replay/<thread>/<checkpoint id>``.

    The fork's own checkpoint id makes it unique (replaying one checkpoint
    twice makes two branches); characters a branch name may not hold are
    written as ``-``.
    """
    thread = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else "-" for ch in thread_id) or "-"
    return f"replay/{thread}/{checkpoint_id}"


class Key(NamedTuple):
    """Where one checkpoint is: its thread, namespace and id."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str


def _checkpoints_prefix(thread_id: str, checkpoint_ns: str) -> str:
    """What the id of every checkpoint (not value, not write) of a namespace starts with."""
    return node(thread_id, checkpoint_ns, CHECKPOINT) + SEPARATOR


def _checkpoint_node(key: Key) -> str:
    return node(key.thread_id, key.checkpoint_ns, CHECKPOINT, key.checkpoint_id)


def _writes_prefix(key: Key) -> str:
    return node(key.thread_id, key.checkpoint_ns, WRITE, key.checkpoint_id) + SEPARATOR


def _blob_node(thread_id: str, checkpoint_ns: str, channel: str, version: object) -> str:
    return node(thread_id, checkpoint_ns, BLOB, channel, str(version))


def _key_of(parsed: Parsed) -> Key | None:
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
        serde: LangGraph's serializer, used as its own savers use it.  Default: ``JsonPlusSerializer``
            in strict mode whatever ``LANGGRAPH_STRICT_MSGPACK`` says (``stored.strict_serializer``):
            it builds only LangGraph's safe types and ``allowed_types``, and never loads pickle.  A
            serializer given here is loaded as configured (``JsonPlusSerializer()`` with no
            arguments builds any type unless that variable is set); only the types it blocks are
            still refused (``UnreadableCheckpointError``).
        clock: "Now" in Unix milliseconds for the commits' times (``None``: the system clock).
        couple_memory: Couple long-term memory to the checkpoints (module docstring): checkpoints
            go on ``CHECKPOINT_BRANCH``, each records the memory commit it ran with, and a run
            resumed or replayed from a past checkpoint reads memory as of that checkpoint and
            writes it on a new branch, through a ``MnemosyneStore`` on the same store.  Off by
            default: checkpoints then go on HEAD's branch, beside memory, and nothing is recorded.
        allowed_types: The app's own types the default serializer may build besides LangGraph's
            safe ones: classes, or ``(module, name)`` pairs (what a blocked type's error names).
            ``with_allowlist`` widens a saver the same way; a graph compiled while
            ``LANGGRAPH_STRICT_MSGPACK`` is set adds its state schema's types so.
        keep_last: Retention: keep at most this many checkpoints per thread and checkpoint namespace
            (the one a ``put`` writes counts as one).  ``None`` (default): keep every checkpoint.
        max_age: Retention: keep only checkpoints put less than this long ago, by the store's clock
            (``clock``, else the system's).  ``None`` (default): any age.  With either option, each
            ``put`` removes the checkpoints of its namespace the rule no longer keeps, with their
            pending writes and the channel values no kept checkpoint reads, in the put's own commit,
            and redacts their bytes from history in the same transaction (``mnem write
            --erase-deleted``; on PostgreSQL with a plain VACUUM, not a rewrite:
            docs/postgres.md); it never removes the checkpoint
            it writes, nor an ancestor a kept checkpoint's ``DeltaChannel`` is rebuilt from
            (``retention``).
        keep_history: ``False``: keep no history of the checkpoints, so that with retention the store
            stays at a steady size.  Checkpoints then go on ``CHECKPOINT_BRANCH`` (as with
            ``couple_memory``), and every ``retention.ROOT_EVERY`` writes or more (``retention.Cadence``)
            one is written as a root (``mnem write --orphan``) and ``mnem gc --plain-vacuum`` follows:
            the branch's earlier commits, and the checkpoints only they held, go; the files keep their
            size and later writes reuse it.  Retention then removes what it lets go without redacting it
            (its bytes go at that collection, not in the put's transaction); ``delete_thread``,
            ``delete_for_runs`` and ``prune`` still erase at once.  Each checkpoint carries its put
            time as ``event_time``, so ``max_age`` judges it as before.  ``True`` (default): every
            checkpoint stays in history, as its commit.

    Raises:
        NoStoreError: No store at ``path`` and none may be created there.
        BinaryNotFoundError: No ``mnem`` binary.
        mnem_bridge.UsageError: ``allowed_types`` beside ``serde`` (give the types to that
            serializer), an entry that is neither a class nor a pair of texts, or a ``keep_last``
            or ``max_age`` out of range.
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
        couple_memory: bool = False,
        allowed_types: Iterable[type | tuple[str, str]] = (),
        keep_last: int | None = None,
        max_age: timedelta | None = None,
        keep_history: bool = True,
    ) -> None:
        #: What each put keeps of its namespace (``None``: everything).
        self._rule = retention.rule(keep_last, max_age)
        allowed = list(allowed_types)
        if serde is not None and allowed:
            raise mnem_bridge.UsageError("MnemosyneSaver takes allowed_types or serde, not both: a serializer of "
                                         "your own builds the types you configure it to")
        super().__init__(serde=serde if serde is not None else stored.strict_serializer(allowed))
        self._client, self._store = open_store(path, mnem=mnem, timeout=timeout, create=create, clock=clock)
        self.author = author
        #: Whether long-term memory follows the checkpoints (see ``couple_memory``).
        self.couple_memory = couple_memory
        #: The branch the checkpoints are on: ``None`` for HEAD's.
        self._branch = CHECKPOINT_BRANCH if couple_memory or not keep_history else None
        #: When the branch lets go of its history (``keep_history=False``), else ``None``.
        self._cadence = None if keep_history else retention.Cadence()
        #: Pins already read or written, by (thread, checkpoint id): a checkpoint's pin never changes while the
        #: checkpoint is stored.  At most ``KEPT_PINS``; a deleted checkpoint's goes with it (``_let_go``).
        self._pins: OrderedDict[tuple[str, str], MemoryPin | None] = OrderedDict()
        #: Whether the checkpoints' branch may not exist yet (then reads check first; see ``_readable``).
        self._branch_missing = self._branch is not None
        #: Notified whenever a pin is kept, for ``memory_pin``'s wait.
        self._arrived = threading.Condition()

    @property
    def root(self) -> Path | mnem_bridge.StoreUrl:
        """The store's folder or PostgreSQL URL, by which a ``MnemosyneStore`` knows it shares the store."""
        return self._store.root

    def close(self) -> None:
        """End this saver's ``mnem`` worker (a later call starts a new one)."""
        self._client.close()

    def __enter__(self) -> MnemosyneSaver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        coupled = " couple_memory" if self.couple_memory else ""
        return f"<MnemosyneSaver {str(self._store.root)!r} author={self.author!r}{coupled}>"

    # ------------------------------------------------------------------ store access
    def _nodes(self, prefixes: Iterable[str]) -> dict[str, Any]:
        """The content of every node whose id starts with one of ``prefixes``, in pages of ``PAGE``."""
        starts = sorted(set(prefixes))
        found: dict[str, Any] = {}
        cursor: str | None = None
        while starts and self._readable():
            page = self._store.memory_page(limit=PAGE, cursor=cursor, prefixes=starts, at=self._branch)
            found.update((node_id, node["content"]) for node_id, node in page.document["memory"].items())
            cursor = page.next_cursor
            if cursor is None:
                break
        return found

    def _ids(self, prefixes: Iterable[str], last: int | None = None) -> list[Parsed]:
        """The saver's nodes under ``prefixes`` (the ``last`` greatest ids only), parsed, without reading one."""
        return [parsed for node_id in self._node_ids(prefixes, last) if (parsed := parse(node_id)) is not None]

    def _node_ids(self, prefixes: Iterable[str], last: int | None = None) -> list[str]:
        """The ids under ``prefixes`` on the checkpoints' branch (``mnem ls``; ``last``: only the greatest)."""
        return self._store.node_ids(prefixes=list(prefixes), at=self._branch, last=last) if self._readable() else []

    def _readable(self) -> bool:
        """Whether the checkpoints' branch exists: ``CHECKPOINT_BRANCH`` is made by the first put.

        Asked (one ``mnem branch``) only until it is found, so a coupled
        saver pays it before its first checkpoint, never after.
        """
        if not self._branch_missing:
            return True
        self._branch_missing = not any(name == self._branch for name, _ in self._store.branches())
        return not self._branch_missing

    def _write(self, puts: list[dict[str, Any]], deletes: Sequence[str], message: str, *, erase: str | None = None,
               prefix: str | None = None, plain_vacuum: bool = False) -> None:
        """One commit of puts and deletes, retried if another writer held the store.

        With ``erase`` (a reason), the same transaction redacts every version
        in history of each deleted node and of every node under ``prefix``
        (``mnem write --erase-deleted``), recorded as removed by the saver's
        author: a crash leaves the deletes and their erasure both, or neither.
        ``plain_vacuum``: PostgreSQL's plain VACUUM, not a rewrite, after it (retention).  Without history
        (``keep_history=False``), a write the cadence names is a root, and a collection follows it (``_collect``).
        """
        if puts or deletes or prefix is not None:
            root = self._cadence is not None and self._cadence.due()
            with_retry(lambda: self._store.write(puts, deletes, message=message, author=self.author,
                                                 skip_missing=True, branch=self._branch, allow_reserved=True,
                                                 erase_deleted=erase, erase_prefix=prefix,
                                                 plain_vacuum=plain_vacuum, orphan=root))
            if root and self._cadence is not None:
                self._collect(self._cadence)

    def _collect(self, cadence: retention.Cadence) -> None:
        """``mnem gc --plain-vacuum`` after a root: the branch's earlier commits, and what only they held, go.

        The write before has landed, so a collection that fails (a store held
        past the busy timeout) is logged, not raised, and the next write is a
        root again, to try once more.
        """
        try:
            collected = with_retry(lambda: self._store.gc(plain_vacuum=True))
        except mnem_bridge.MnemError as error:
            logger.warning("MnemosyneSaver(keep_history=False) could not collect the history it let go; the next "
                           "write tries again: %s", error)
            cadence.missed()
            return
        cadence.collected(collected.kept_commits)

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
                            _checkpoints_prefix(key.thread_id, key.checkpoint_ns) for key in keys)
        chosen: list[tuple[Key, stored.CheckpointNode]] = []
        for key in keys:
            node_id = _checkpoint_node(key)
            if node_id not in nodes:  # a node holding null is there, and malformed
                continue
            content = nodes[node_id]
            read = stored.checkpoint_node(self.serde, node_id, content)
            self._remember(key, content)
            if filter and not all(read.metadata.get(name) == wanted for name, wanted in filter.items()):
                continue
            chosen.append((key, read))
            if limit is not None and len(chosen) >= limit:
                break
        wanted = [_writes_prefix(key) for key, _ in chosen]
        wanted += [_blob_node(key.thread_id, key.checkpoint_ns, channel, version)
                   for key, read in chosen for channel, version in read.checkpoint["channel_versions"].items()]
        extra = self._nodes(wanted)
        return [self._tuple(key, read, extra) for key, read in chosen]

    def _tuple(self, key: Key, read: stored.CheckpointNode, extra: Mapping[str, Any]) -> CheckpointTuple:
        """One ``CheckpointTuple``: the checkpoint with its channel values, and its writes in replay order.

        Raises:
            UnreadableCheckpointError: One of its channel values or pending writes does not load.
        """
        values: dict[str, Any] = {}
        for channel, version in read.checkpoint["channel_versions"].items():
            node_id = _blob_node(key.thread_id, key.checkpoint_ns, channel, version)
            if node_id in extra:
                present, value = stored.channel_value(self.serde, node_id, extra[node_id])
                if present:
                    values[channel] = value
        prefix = _writes_prefix(key)
        writes = sorted((stored.pending_write(self.serde, node_id, content)
                         for node_id, content in extra.items() if node_id.startswith(prefix)),
                        key=lambda write: writes_sort_key(write.task_path, write.task_id, write.idx))
        return CheckpointTuple(
            config=_config(key),
            checkpoint={**read.checkpoint, "channel_values": values},  # type: ignore[typeddict-item]
            metadata=read.metadata,  # type: ignore[arg-type]
            parent_config=_config(Key(key.thread_id, key.checkpoint_ns, read.parent)) if read.parent else None,
            pending_writes=[(write.task_id, write.channel, write.value) for write in writes],
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
            # Checkpoint ids sort by time (uuid6, unescaped in a node id), so the greatest node id is the latest.
            found = [key for parsed in self._ids([_checkpoints_prefix(thread_id, checkpoint_ns)],
                                                 last=1)
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
            prefix = (thread_prefix(thread_id) if checkpoint_ns is None else
                      _checkpoints_prefix(thread_id, checkpoint_ns))
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

        With retention (``keep_last`` / ``max_age``), the same commit removes
        what the rule no longer keeps of the namespace (read first: an ``ls``
        of the namespace, and once it holds more than the rule allows, its
        checkpoints with their times), and the same transaction removes those
        nodes' bytes from history (PostgreSQL: a plain VACUUM, not a rewrite,
        follows; docs/postgres.md).

        Returns:
            The config of the stored checkpoint.
        """
        thread_id, checkpoint_ns = _where(config)
        key = Key(thread_id, checkpoint_ns, checkpoint["id"])
        kept: dict[str, Any] = dict(checkpoint)
        values: dict[str, Any] = kept.pop("channel_values")
        puts: list[dict[str, Any]] = [
            {"id": _blob_node(thread_id, checkpoint_ns, channel, version),
             "content": stored.dumps(self.serde, values[channel]) if channel in values else
             {"type": stored.EMPTY, "data": ""}}
            for channel, version in new_versions.items()]
        full = get_checkpoint_metadata(config, metadata)
        parent = config["configurable"].get("checkpoint_id")
        content: dict[str, Any] = {"checkpoint": stored.dumps(self.serde, kept),
                                   "metadata": stored.dumps(self.serde, full), "parent": parent}
        if self.couple_memory and not checkpoint_ns:
            content["memory"] = self._pin_for(key, parent)._asdict()
        # Without history a root restarts every node's history, so the put time goes with the node (max_age reads it).
        puts.append({"id": _checkpoint_node(key), "content": content,
                     **({"event_time": self._now()} if self._cadence is not None else {})})
        where = in_message(thread_id) if not checkpoint_ns else f"{in_message(thread_id)} {in_message(checkpoint_ns)}"
        message = f"checkpoint {where} step {full.get('step')} ({full.get('source')})"
        rule = self._rule
        retired = self._retired(rule, key, kept["channel_versions"], full, parent) if rule is not None else ()
        if not retired or rule is None:
            self._write(puts, (), message)
        elif self._cadence is not None:  # no history: their bytes go with the next collection (keep_history)
            self._write(puts, retired, f"{message}; retention removes {len(retired)} older node(s)")
        else:
            self._write(puts, retired, f"{message}; retention removes {len(retired)} older node(s)",
                        erase=f"MnemosyneSaver retention ({_described(rule)}) of {where}", plain_vacuum=True)
        self._branch_missing = False
        self._remember(key, content)
        if retired:
            self._forget_pins(retired)
        return _config(key)

    def _retired(self, rule: retention.Rule, key: Key, versions: Mapping[str, Any], metadata: Mapping[str, Any],
                 parent: str | None) -> Sequence[str]:
        """The nodes of ``key``'s namespace the retention rule lets go once ``key`` is put (``retention``).

        The checkpoints it does not keep, their pending writes, the channel
        values no kept checkpoint reads, and pending writes older than every
        kept checkpoint whose checkpoint is not stored (a task's writes that
        landed after their checkpoint went).  A stored checkpoint this saver cannot
        read is never let go, and while there is one no channel value is
        either: which values it reads is not known.

        Raises:
            ContractError: A ``mnem`` that cannot redact, before anything is written.
        """
        everything = self._ids([namespace_prefix(key.thread_id, key.checkpoint_ns)])
        stored_ids = {other.checkpoint_id for parsed in everything
                      if parsed.kind == CHECKPOINT and (other := _key_of(parsed)) is not None} - {key.checkpoint_id}
        if not stored_ids or (rule.max_age_ms is None and len(stored_ids) < (rule.keep_last or 0)):
            return []
        require(self._client.binary, "write-erase")
        now = self._now()
        found, unreadable = self._stamped(key)
        found[key.checkpoint_id] = retention.stamped(key.checkpoint_id, {"channel_versions": versions}, metadata,
                                                     parent, now)
        keep = retention.kept(found, key.checkpoint_id, rule, now)
        oldest, known = min(keep), found.keys() | unreadable
        doomed = {Key(key.thread_id, key.checkpoint_ns, cid) for cid in found if cid not in keep}
        doomed |= {other for parsed in everything if parsed.kind == WRITE and (other := _key_of(parsed)) is not None
                   and other.checkpoint_id < oldest and other.checkpoint_id not in known}
        used = None if unreadable else {(key.thread_id, key.checkpoint_ns, channel, str(version))
                                        for cid in keep for channel, version in found[cid].versions.items()}
        return _swept(everything, doomed, used)

    def _stamped(self, key: Key) -> tuple[dict[str, retention.Stamped], set[str]]:
        """The stored checkpoints of ``key``'s namespace but ``key``, as retention weighs them, in one ``stamps``.

        Returns:
            ``({checkpoint id: Stamped}, {id of a checkpoint this saver cannot read})``.
        """
        found: dict[str, retention.Stamped] = {}
        unreadable: set[str] = set()
        timed = self._store.node_times(prefixes=[_checkpoints_prefix(key.thread_id, key.checkpoint_ns)],
                                       at=self._branch)
        for node_id, item in timed.items():
            parsed = parse(node_id)
            stored_key = _key_of(parsed) if parsed is not None and parsed.kind == CHECKPOINT else None
            if stored_key is None or stored_key.checkpoint_id == key.checkpoint_id:
                continue
            try:
                read = stored.checkpoint_node(self.serde, node_id, item.node.content)
            except UnreadableCheckpointError as error:
                logger.warning("retention keeps checkpoint %s, and every channel value, as it cannot read it: %s",
                               node_id, error.message)
                unreadable.add(stored_key.checkpoint_id)
                continue
            found[stored_key.checkpoint_id] = retention.stamped(stored_key.checkpoint_id, read.checkpoint,
                                                                read.metadata, read.parent, item.created)
        return found, unreadable

    def _now(self) -> int:
        """"Now" as the store will record it for the next call: the saver's clock, else the system's (Unix ms)."""
        clock = self._client.clock
        return clock() if clock is not None else time.time_ns() // 1_000_000

    def _forget_pins(self, deleted: Sequence[str]) -> None:
        """Forget the pins of the checkpoints among the nodes one commit just deleted."""
        gone = {(found.thread_id, found.checkpoint_id) for parsed in map(parse, deleted)
                if parsed is not None and parsed.kind == CHECKPOINT and (found := _key_of(parsed)) is not None
                and not found.checkpoint_ns}
        self._let_go(gone.__contains__)

    # ------------------------------------------------------------------ coupled memory
    def _remember(self, key: Key, content: Any) -> tuple[MemoryPin | None] | None:
        """Keep the pin a checkpoint node records, so the store's later lookups cost nothing.

        Returns:
            ``(pin,)`` for a node of a root namespace read by a coupled saver; ``None`` otherwise.

        Raises:
            UnreadableCheckpointError: The node is not an object, or its pin is not one.
        """
        if not self.couple_memory or key.checkpoint_ns:
            return None
        read = stored.memory_pin(_checkpoint_node(key), content)
        pin = MemoryPin(*read) if read else None
        with self._arrived:
            self._pins[key.thread_id, key.checkpoint_id] = pin
            self._pins.move_to_end((key.thread_id, key.checkpoint_id))
            while len(self._pins) > KEPT_PINS:
                self._pins.popitem(last=False)
            self._arrived.notify_all()
        return (pin,)

    def _kept(self, place: tuple[str, str]) -> tuple[MemoryPin | None] | None:
        """``(pin,)`` when the pin of ``place`` is kept (now the most recently used), else ``None``."""
        with self._arrived:
            if place not in self._pins:
                return None
            self._pins.move_to_end(place)
            return (self._pins[place],)

    def _let_go(self, deleted: Callable[[tuple[str, str]], bool]) -> None:
        """Drop the pins of the checkpoints just deleted: no longer stored, they have none (``memory_pin``)."""
        with self._arrived:
            for place in [place for place in self._pins if deleted(place)]:
                del self._pins[place]

    def _pin_for(self, key: Key, parent: str | None) -> MemoryPin:
        """The memory a new root checkpoint runs with: its parent's branch, or a new one when it forks.

        A checkpoint forks when its parent is no longer the thread's latest,
        LangGraph's own test for a superseded checkpoint
        (``pregel._checkpoint.checkpoint_superseded``): a replay, a resume
        at a past checkpoint or an update of one.  The fork's branch starts
        at the commit its parent ran with, so memory written after the parent
        is not there and the branch the parent ran on is never written.
        """
        inherited = self.memory_pin(key.thread_id, parent) if parent else None
        branch = inherited.branch if inherited else None
        if parent and self._later_than(Key(key.thread_id, "", parent)):
            start = inherited.commit if inherited else None
            branch = replay_branch(key.thread_id, key.checkpoint_id)
            if start is not None:
                self._store.new_branch(branch, start=start)
            logger.info("checkpoint %s of thread %s forks from %s: memory on branch %s from %s",
                        key.checkpoint_id, key.thread_id, parent, branch, start)
            return MemoryPin(branch, start)
        if branch is None:
            return MemoryPin(None, self._store.head_commit())
        try:
            return MemoryPin(branch, self._store.resolve(branch))
        except mnem_bridge.InvalidRefError:  # a fork made when memory had no commit, not written since
            return MemoryPin(branch, None)

    def _later_than(self, key: Key) -> bool:
        """Whether the namespace holds a checkpoint with a later id than ``key``'s: a one-node page read.

        The page starts after ``key``'s node in id order (``show --limit 1
        --cursor``), so what crosses to ``mnem`` does not grow with the
        thread, as listing its checkpoints' ids did.  Escaping keeps the
        order of LangGraph's ids (uuid6 text holds neither ``:`` nor ``%``).
        """
        if not self._readable():
            return False
        page = self._store.memory_page(limit=1, cursor=_checkpoint_node(key), at=self._branch,
                                       prefixes=[_checkpoints_prefix(key.thread_id, key.checkpoint_ns)])
        return bool(page.document["memory"])

    def memory_pin(self, thread_id: str, checkpoint_id: str, *, wait: bool = False) -> MemoryPin | None:
        """The memory a checkpoint of the thread's root namespace ran with (``None``: none recorded).

        Read once (the checkpoint node) and then kept: a checkpoint's pin
        never changes.  At most ``KEPT_PINS`` are kept, the least recently
        used let go first and read again when asked; a checkpoint deleted
        (``delete_thread``, ``prune``, ``delete_for_runs``) has none.
        ``MnemosyneStore`` asks it, for the checkpoint a running step started
        from, which branch that step reads and writes.

        Args:
            thread_id: The thread.
            checkpoint_id: A checkpoint of its root namespace.
            wait: When the checkpoint is not stored yet, wait (up to the
                saver's ``timeout``) for this saver to put it: LangGraph's
                ``"async"`` durability runs a step while its checkpoint's put
                is still in the background.

        Returns:
            The pin, or ``None`` without ``couple_memory``, for a checkpoint
            not stored (after the wait), or for one put before coupling was on.
        """
        if not self.couple_memory:
            return None
        place = (str(thread_id), checkpoint_id)
        found = self._kept(place) or self._read_pin(place)
        if found is None and wait:
            with self._arrived:  # read under the lock the wait ends holding, so no other put can drop it first
                if self._arrived.wait_for(lambda: place in self._pins, timeout=self._client.timeout):
                    found = (self._pins[place],)
        return found[0] if found else None

    async def amemory_pin(self, thread_id: str, checkpoint_id: str, *, wait: bool = False) -> MemoryPin | None:
        """``memory_pin``, its read and its wait awaited, so the put waited for can run on the same event loop."""
        if not self.couple_memory:
            return None
        place = (str(thread_id), checkpoint_id)
        found = self._kept(place) or await mnem_bridge.run_inline(self._read_pin, place)
        deadline = time.monotonic() + self._client.timeout
        while found is None and wait and time.monotonic() < deadline:
            await asyncio.sleep(PIN_POLL)
            found = self._kept(place)
        return found[0] if found else None

    def _read_pin(self, place: tuple[str, str]) -> tuple[MemoryPin | None] | None:
        """Read a checkpoint node and keep its pin: ``(pin,)``, or ``None`` when the checkpoint is not stored."""
        key = Key(place[0], "", place[1])
        node_id = _checkpoint_node(key)
        found = self._nodes([node_id])
        return self._remember(key, found[node_id]) if node_id in found else None

    def memory_of(self, config: RunnableConfig) -> MemoryPin | None:
        """``memory_pin`` for a checkpoint's config (``get_state(...).config``, a history entry's ``config``).

        So a caller can read memory as a checkpoint saw it
        (``store.at(pin.commit)``) or find the branch a replay wrote.
        """
        thread_id, _ = _where(config)
        checkpoint_id = get_checkpoint_id(config)
        return self.memory_pin(thread_id, checkpoint_id) if checkpoint_id else None

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
        puts = []
        for i, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, i)
            content = {"task_id": task_id, "channel": channel, "idx": idx, "task_path": task_path,
                       **stored.dumps(self.serde, value)}
            # A regular write stored already stays: mnem write decides it in its transaction (no ls first).
            puts.append({"id": f"{prefix}{idx}", "content": content, **({"if_absent": True} if idx >= 0 else {})})
        self._write(puts, (), f"checkpoint writes {in_message(thread_id)} task {in_message(task_id)}")

    def delete_thread(self, thread_id: str) -> None:
        """Remove a thread's checkpoints, channel values and writes as one commit, and their bytes from history.

        History keeps its commits, and their ids, but not the bytes: every
        version of every node the thread ever had (its id under the thread's
        prefix), including those removed earlier, is redacted in the
        commit's own transaction (``mnem write --erase-deleted``), so a crash
        leaves the thread whole or its bytes gone, never removed with its
        bytes kept; reading a version at an older commit then answers a
        redaction marker ("redacted at T by the saver's author:
        MnemosyneSaver.delete_thread ..."), never the value.  This is how an
        app honours an erasure request for a thread: on PostgreSQL the
        tables are rewritten after the commit, as ``mnem redact`` does.

        Raises:
            ContractError: A ``mnem`` that cannot redact in a write, before anything is removed.
        """
        prefix = thread_prefix(str(thread_id))
        require(self._client.binary, "write-erase")
        ids = self._node_ids([prefix])
        message = f"delete checkpoints of thread {in_message(str(thread_id))}"
        self._write([], ids, message, erase=f"MnemosyneSaver.delete_thread: {message}", prefix=prefix)
        self._let_go(lambda place: place[0] == str(thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, channel value and write of a thread to another, as one commit.

        The whole parent chain is copied, as ``DeltaChannel`` needs.
        """
        source, target = thread_prefix(str(source_thread_id)), thread_prefix(str(target_thread_id))
        puts = [{"id": target + node_id[len(source):], "content": content}
                for node_id, content in self._nodes([source]).items()]
        self._write(puts, (), f"copy checkpoints of thread {in_message(str(source_thread_id))} to "
                                 f"{in_message(str(target_thread_id))}")

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Remove the checkpoints whose metadata names one of ``run_ids``, with their writes, as one commit.

        Reads the metadata of every checkpoint in the store: a run is not part of a node id.
        Channel values no remaining checkpoint of their namespace refers to go too.  History keeps
        its commits but not the bytes of what went: every version of each removed node is
        redacted in the commit's own transaction (reason ``MnemosyneSaver.delete_for_runs``).

        Raises:
            ContractError: A ``mnem`` that cannot redact in a write, before anything is removed.
        """
        runs = set(run_ids)
        if not runs:
            return
        require(self._client.binary, "write-erase")
        everything = self._ids([CHECKPOINT_PREFIX])
        keys = [key for parsed in everything if parsed.kind == CHECKPOINT and (key := _key_of(parsed))]
        loaded = self._load(keys)
        doomed = {_key(item) for item in loaded if item.metadata.get("run_id") in runs}
        self._sweep(everything, doomed, [item for item in loaded if _key(item) not in doomed],
                    f"delete checkpoints of {len(runs)} run(s)", "delete_for_runs")

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Keep only each namespace's latest checkpoint (``"keep_latest"``), or none (``"delete"``), as one commit.

        ``keep_latest`` keeps the latest checkpoint's writes and every channel
        value it refers to, and, when it does not hold a ``DeltaChannel``'s
        value, its ancestors back to the snapshot that value is rebuilt from
        (``retention``; ``BaseCheckpointSaver.prune``'s first safe option),
        read then with their namespace's other checkpoints.  History
        keeps its commits but not the bytes of what went: every version of
        each removed node is redacted in the commit's own transaction
        (reason ``MnemosyneSaver.prune``): the store no longer holds them (PostgreSQL: docs/postgres.md).

        Raises:
            ValueError: Another strategy.
            ContractError: A ``mnem`` that cannot redact in a write, before anything is removed.
        """
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"unknown prune strategy {strategy!r}: 'keep_latest' or 'delete'")
        prefixes = [thread_prefix(str(thread_id)) for thread_id in thread_ids]
        if not prefixes:
            return
        require(self._client.binary, "write-erase")
        everything = self._ids(prefixes)
        keys = [key for parsed in everything if parsed.kind == CHECKPOINT and (key := _key_of(parsed))]
        latest: dict[tuple[str, str], Key] = {}
        if strategy == "keep_latest":
            for key in keys:
                place = (key.thread_id, key.checkpoint_ns)
                if place not in latest or key.checkpoint_id > latest[place].checkpoint_id:
                    latest[place] = key
        survivors = self._load(sorted(latest.values()))
        kept = set(latest.values()) | {ancestor for item in survivors for ancestor in self._rebuilt_from(item)}
        if len(kept) > len(latest):
            survivors = self._load(sorted(kept))
        self._sweep(everything, {key for key in keys if key not in kept}, survivors,
                    f"prune checkpoints of {len(prefixes)} thread(s) ({strategy})", "prune")

    def _rebuilt_from(self, item: CheckpointTuple) -> set[Key]:
        """The ancestors a checkpoint's ``DeltaChannel`` values are rebuilt from (none read when it holds them all)."""
        key = _key(item)
        parent = item.parent_config["configurable"]["checkpoint_id"] if item.parent_config else None
        newest = retention.stamped(key.checkpoint_id, item.checkpoint, item.metadata, parent, 0)
        if not newest.unsnapshotted:
            return set()
        found, _ = self._stamped(key)
        found[key.checkpoint_id] = newest
        return {Key(key.thread_id, key.checkpoint_ns, cid)
                for cid in retention.kept(found, key.checkpoint_id, retention.Rule(1, None), 0)}

    def _sweep(self, everything: Sequence[Parsed], doomed: set[Key], survivors: Sequence[CheckpointTuple],
               message: str, call: str) -> None:
        """Delete the doomed checkpoints, their writes, and the channel values no survivor of their namespace uses.

        One commit, their bytes redacted in its transaction, the reason naming ``call``.
        """
        if not doomed:
            return
        used = {(*_key(item)[:2], channel, str(version))
                for item in survivors for channel, version in item.checkpoint["channel_versions"].items()}
        deletes = _swept(everything, doomed, used)
        self._write([], deletes, message, erase=f"MnemosyneSaver.{call}: {message}")
        self._forget_pins(deletes)

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


def _swept(everything: Iterable[Parsed], doomed: set[Key], used: set[tuple[str, str, str, str]] | None) -> list[str]:
    """The ids of ``everything`` that go with the ``doomed`` checkpoints.

    Their nodes, their pending writes, and the channel values of their
    namespaces that ``used`` (``(thread, namespace, channel, version)`` of
    what the remaining checkpoints read) does not hold; with ``used`` ``None``
    no channel value goes.
    """
    touched = {(key.thread_id, key.checkpoint_ns) for key in doomed}
    deletes: list[str] = []
    for parsed in everything:
        key = _key_of(parsed)
        blob = parsed.kind == BLOB and len(parsed.rest) == 2
        if (key is not None and key in doomed) or (
                blob and used is not None and (parsed.thread_id, parsed.checkpoint_ns) in touched
                and (parsed.thread_id, parsed.checkpoint_ns, *parsed.rest) not in used):
            deletes.append(_node_id(parsed))
    return deletes


def _described(rule: retention.Rule) -> str:
    """A retention rule as a redaction's reason names it: ``keep_last=10``, ``max_age=3600000ms``, or both."""
    return ", ".join(part for part in (f"keep_last={rule.keep_last}" if rule.keep_last is not None else "",
                                       f"max_age={rule.max_age_ms}ms" if rule.max_age_ms is not None else "") if part)


def _node_id(parsed: Parsed) -> str:
    """The node id ``parse`` took apart."""
    return node(parsed.thread_id, parsed.checkpoint_ns, parsed.kind, *parsed.rest)
