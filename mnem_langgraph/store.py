"""``MnemosyneStore``: a LangGraph ``BaseStore`` where every write is a commit.

LangGraph's long-term memory (``graph.compile(store=...)``,
``runtime.store``, ``InjectedStore``) gets Mnemosyne's history: each batch
of puts and deletes is one atomic commit with the caller's provenance, any
value can be explained (``why``), and a graph node can try a hypothesis on
a branch and merge or abandon it.

Only ``batch`` and ``abatch`` are implemented; BaseStore builds ``get``,
``put``, ``search``, ... and their ``a*`` twins on them.  A batch costs one
``mnem stamps`` for its gets, one ``mnem search`` or ``mnem namespaces``
for each other read (``reads``: the engine filters, ranks and pages where
the values are), and one ``write`` for all its puts and deletes; the store
keeps no copy of the store's data between calls.  The store reads and writes the
committed tip of the current branch; staged changes (``mnem add``) are
neither seen nor touched, just as ``mnem write`` leaves them alone.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, ListNamespacesOp, Op, PutOp, Result, SearchOp, TTLConfig

import mnem_bridge
from mnem_bridge import Blame, Commit, Fetched, MemoryNode, MergeResult, Pulled, Pushed, Reverted, UsageError, times
from mnem_bridge.agents import with_retry
from mnem_bridge.models import MergeSide, MergeStrategy
from mnem_bridge.text import in_message
from mnem_bridge.times import Time

from . import reads
from .convert import META_KEY, Entry, split_meta, value_of
from .coupling import abranch_of, branch_of, coupling, on_branch
from .index import Embedded, EmbeddingIndex
from .keys import check_op, node_id, parse_node_id
from .opening import open_store
from .ranking import QueryMode, resolve_query_mode
from .runinfo import run_provenance, thread_source
from .sweeper import Sweeper
from .view import MemoryView

__all__ = ["MnemosyneStore", "Resolution"]

logger = logging.getLogger(__name__)

#: How a merge conflict on one item is settled: a side, a deletion, or a new value.
Resolution = MergeSide | Mapping[str, Any]


class MnemosyneStore(BaseStore):
    """A BaseStore on a Mnemosyne store: one commit per batch of writes.

    Args:
        path: The store's root (the folder holding ``.mnem``), exactly: an
            explicit path is never walked up from; or a PostgreSQL store's
            URL.  ``None`` uses ``$MNEM_STORE`` if set (also exact), else the
            nearest store at or above the current directory that the current
            user owns, the discovery the ``mnem`` command does.
        create: Whether a store that does not exist yet is created (logged
            at INFO on ``mnem_bridge.store``).  ``None`` (the default): an
            explicit folder (``path`` or ``$MNEM_STORE``) is created on first
            use if it is a new folder (its parent exists) or an empty one of
            yours, while a PostgreSQL store is never created, so that a typo in
            ``store=`` cannot start an empty memory on the server (the
            ``NoStoreError`` names the stores the database holds).  ``True``
            also creates a PostgreSQL store; ``False`` creates nothing.  A
            file, a folder that already holds other files, or a path inside
            another store is refused either way (``NoStoreError`` saying why
            and what to do; see ``mnem_bridge.store.creation_refused``).
        author: The author of every commit this store makes.
        mnem: The ``mnem`` binary to run (default: ``$MNEM_BIN``, then
            ``mnem`` on PATH, then the one beside this Python).
        timeout: Seconds one ``mnem`` invocation may take before its process
            group is killed (``CommandTimeoutError``).  A graph node blocks on
            the store, so a wedged ``mnem`` must not stall it for the bridge's
            default minute when the caller can afford less.
        index: LangGraph's ``IndexConfig`` (``dims``, ``embed``,
            ``fields``), or ``SqliteStore``'s or ``PostgresStore``'s
            (``text_fields``, ``distance_type``, ``ann_index_config``): puts
            embed those fields and ``search(query=...)`` ranks by the
            similarity of their vectors to the query's (``index``).  An
            option that cannot be honoured is refused.
        query_mode: How ``search(query=...)`` answers: ``None`` (the
            default) ranks by vectors with an ``index``, else is ADR-0016's
            substring filter; ``"substring"``, ``"bm25"`` (lexical ranking,
            for natural-language questions such as langmem's) and
            ``"vector"`` (needs ``index``) choose one (``ranking``), and
            ``"hybrid"`` (needs ``index``) fuses BM25's ranking with the
            vectors' (docs/cli-json.md, ``mnem search``).
        ttl: LangGraph's ``TTLConfig`` (``default_ttl`` minutes,
            ``refresh_on_read``, ``sweep_interval_minutes``, which starts
            the sweeper now).  Expired items vanish from reads at once; a
            sweep records their removal as one commit (``sweep_ttl``).
        clock: What "now" is, in Unix milliseconds (``mnem_bridge.Mnem``'s
            ``clock``): when a TTL starts and runs out, and the time of
            each commit.  Lets a test (or a replay) move time by hand
            instead of waiting for a TTL; the sweeper still wakes by the
            real clock.  ``None`` (the default) is the system clock.

    Raises:
        NoStoreError: No store at ``path`` and none may be created there (or,
            with no path, none found; or a PostgreSQL store that does not
            exist, without ``create=True``).
        BinaryNotFoundError: No ``mnem`` binary.
        UsageError: An ``index`` option or ``query_mode`` that cannot be
            honoured (a ``ValueError``), before anything is opened.
    """

    supports_ttl = True

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        author: str = "agent",
        mnem: str | os.PathLike[str] | None = None,
        timeout: float = mnem_bridge.DEFAULT_TIMEOUT,
        index: Mapping[str, Any] | None = None,
        ttl: TTLConfig | None = None,
        query_mode: QueryMode | None = None,
        create: bool | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        #: The index config as given, as LangGraph's stores expose it (None without an index).
        self.index_config = dict(index) if index else None
        self._index = EmbeddingIndex(index) if index else None
        #: The embedder, as LangGraph's stores expose it (None without an index).
        self.embeddings = self._index.embeddings if self._index else None
        self._query_mode = resolve_query_mode(query_mode, self._index is not None)
        #: The index a query ranks by: the store's, unless ``query_mode`` chose a lexical answer.
        self._ranker = self._index if self._query_mode in ("vector", "hybrid") else None
        self.ttl_config = ttl
        self._client, self._store = open_store(path, mnem=mnem, timeout=timeout, create=create, clock=clock)
        self.author = author
        self._sweeper = Sweeper(self.sweep_ttl)
        if ttl and ttl.get("sweep_interval_minutes"):
            self.start_ttl_sweeper()

    @property
    def query_mode(self) -> QueryMode:
        """How ``search(query=...)`` answers: ``"substring"``, ``"bm25"``, ``"vector"`` or ``"hybrid"``."""
        return self._query_mode

    @property
    def root(self) -> Path | mnem_bridge.StoreUrl:
        """The directory holding the store's ``.mnem``, or the PostgreSQL store's URL (without its password)."""
        return self._store.root

    def __repr__(self) -> str:
        return f"<MnemosyneStore {str(self.root)!r} author={self.author!r}>"

    def close(self) -> None:
        """Stop the TTL sweeper and end this store's ``mnem`` worker (a later call starts a new one).

        The client is closed here, not through the bridge ``Store``: a
        ``Store`` handed a client leaves it to whoever made it, so closing only
        the ``Store`` left the worker running until interpreter exit.
        """
        self._sweeper.stop()
        self._client.close()

    def __enter__(self) -> MnemosyneStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ BaseStore
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch as InMemoryStore does, with the writes as one commit.

        Every op is validated first, so a bad op changes nothing.  Reads see
        the state before the batch's writes.  Puts and deletes are then
        applied to the branch tip as one atomic commit, the last op for a key
        winning; deleting a key that does not exist is a no-op, and a batch
        that changes nothing that way makes no commit.  A put's provenance is
        its ``_meta``; without one, inside a LangGraph run, it is the run's
        thread, node, step, tool call and checkpoint (``runinfo``).
        A search's ``query`` is answered as ``query_mode`` says (``ranking``).

        Args:
            ops: Gets, searches, namespace listings, puts and deletes.

        Returns:
            One result per op, in order (``None`` for puts and deletes).

        Raises:
            InvalidNamespaceError: An op breaks BaseStore's namespace rules.
            ValueError: An unknown op, a bad ``_meta``, or a value that is not JSON.
            MnemError: The store refused (e.g. ``InvalidRefError`` on a detached HEAD).
        """
        ops = _checked(ops)
        embedded = self._index.embed(ops, rank=self._ranker is not None) if self._index else Embedded()
        return self._batch(ops, _run_of(ops), embedded, branch_of(coupling(self._store)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` on the event loop's thread, its waits for ``mnem`` awaited (``mnem_bridge.run_inline``).

        Not in a worker thread: the hand-over there and back costs two thread
        wake-ups, more than a whole ``get``.  The run's provenance is read
        here, in the caller's task, where the tool running is visible;
        embeddings use the embedder's async API.
        """
        ops = _checked(ops)
        embedded = await self._index.aembed(ops, rank=self._ranker is not None) if self._index else Embedded()
        run = _run_of(ops)
        branch = await abranch_of(coupling(self._store))
        return await mnem_bridge.run_inline(self._batch, ops, run, embedded, branch)

    def _batch(self, ops: list[Op], run: Mapping[str, str], embedded: Embedded,
               branch: str | None = None) -> list[Result]:
        """``batch`` on checked ops, with ``run`` the provenance of puts without ``_meta`` and the batch's vectors.

        ``branch`` is the branch to read and write instead of HEAD's: inside
        a graph run whose ``MnemosyneSaver`` couples memory to its
        checkpoints, a step replayed from a past checkpoint uses the branch
        the replay made (``coupling``); every other batch passes ``None``.

        Each kind of op has one path: the batch's gets are read together
        (``_gets``, one ``mnem stamps``), and each search and namespace
        listing is one ``mnem search`` or ``mnem namespaces`` (``reads``),
        all before the writes, so reads see the state before the batch's writes.
        """
        store = on_branch(self._store, branch)
        refreshing = bool((self.ttl_config or {}).get("refresh_on_read", False))
        gets = [op for op in ops if isinstance(op, GetOp)]
        got, expiring = self._gets(store, gets) if gets else ([], {})
        answers = iter(got)
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(next(answers))
            elif isinstance(op, SearchOp):
                hits = reads.search(store, op, self._query_mode, self._ranker, embedded)
                if refreshing:  # which hits hold a lease matters only to a read that restarts leases
                    expiring.update(((hit.namespace, hit.key), hit.expires is not None) for hit in hits)
                results.append(reads.search_items(hits))
            elif isinstance(op, ListNamespacesOp):
                results.append(reads.namespaces(store, op))
            else:
                results.append(None)
        if refreshing:
            self._refresh(store, ops, results, lambda namespace, key: expiring.get((namespace, key), False))
        writes = {node_id(op.namespace, op.key): op for op in ops if isinstance(op, PutOp) and op.namespace}
        if writes:
            self._write(store, writes, run, embedded)
        return results

    def _gets(self, store: mnem_bridge.Store, ops: list[GetOp]
              ) -> tuple[list[Result], dict[tuple[tuple[str, ...], str], bool]]:
        """A batch's gets, their nodes read in one ``mnem stamps``: the items, and which of them have a TTL.

        Each item is found by the id it was asked under.
        """
        asked = {(tuple(op.namespace), op.key): node_id(op.namespace, op.key) for op in ops if op.namespace}
        timed = store.node_times(list(asked.values()), live=store.view_branch is None) if asked else {}
        entries = {place: Entry.of(*place, timed[nid]) for place, nid in asked.items() if nid in timed}
        results: list[Result] = []
        for op in ops:
            entry = entries.get((tuple(op.namespace), op.key))
            results.append(None if entry is None else entry.item())
        return results, {place: entry.expires is not None for place, entry in entries.items()}

    def _refresh(
        self, store: mnem_bridge.Store, ops: list[Op], results: list[Result],
        expiring: Callable[[tuple[str, ...], str], bool],
    ) -> None:
        """Restart the TTL of the items reads returned, for the reads that refresh.

        As in ``SqliteStore`` and ``PostgresStore``, a read refreshes when its
        ``refresh_ttl`` is true *and* the store's ``TTLConfig`` turns
        ``refresh_on_read`` on: without that setting no read refreshes, and
        ``_batch`` calls this only with it (and only then notes which hits
        hold a lease, ~1 us of a search's page).  A
        coupled step's view of a replay branch (``Store.on``) refreshes
        nothing: ``mnem touch`` restarts leases on HEAD's branch only.
        """
        touched: list[str] = []
        for op, result in zip(ops, results, strict=True):
            if isinstance(op, GetOp) and op.refresh_ttl and isinstance(result, Item):
                found: list[Item] = [result]
            elif isinstance(op, SearchOp) and op.refresh_ttl and isinstance(result, list):
                found = [item for item in result if isinstance(item, Item)]
            else:
                continue
            touched += [node_id(i.namespace, i.key) for i in found if expiring(tuple(i.namespace), i.key)]
        if touched and store.view_branch is None:
            store.touch(dict.fromkeys(touched))

    def _write(self, store: mnem_bridge.Store, writes: Mapping[str, PutOp], run: Mapping[str, str],
               embedded: Embedded) -> None:
        puts: list[dict[str, Any]] = []
        deletes: list[str] = []
        for nid, op in writes.items():
            if op.value is None:
                deletes.append(nid)
            else:
                content, provenance = split_meta(op.value)
                has_meta = isinstance(op.value, Mapping) and META_KEY in op.value
                put: dict[str, Any] = {"id": nid, "content": content, **(provenance if has_meta else run)}
                if op.ttl is not None:
                    put["ttl"] = max(1, round(op.ttl * 60_000))  # minutes, as LangGraph counts them, to ms
                vectors = embedded.puts.get((tuple(op.namespace), op.key))
                if vectors:
                    put["vectors"] = vectors
                puts.append(put)
        message = "; ".join(
            f"{verb} {_listing(ids)}" for verb, ids in (("put", [p["id"] for p in puts]), ("delete", deletes)) if ids
        )
        commit, changes = with_retry(
            lambda: store.write(puts, deletes, message=message, author=self.author, skip_missing=True)
        )
        logger.debug("%s -> %s %s", message, commit.id if commit else "no commit", changes)

    # ------------------------------------------------------------------ TTL
    def sweep_ttl(self) -> int:
        """Remove the items whose TTL ran out, as one commit by this store's author (``mnem expire``).

        Expired items are already hidden from every read; the sweep records
        their removal, so history says when they went and why (the commit
        message names them).

        Returns:
            How many items were removed.
        """
        _, removed = with_retry(lambda: self._store.expire(author=self.author))
        return len(removed)

    async def asweep_ttl(self) -> int:
        """``sweep_ttl``, its waits for ``mnem`` awaited on the event loop."""
        return await mnem_bridge.run_inline(self.sweep_ttl)

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> concurrent.futures.Future[None]:
        """Sweep in a background thread every ``sweep_interval_minutes`` (else the ``TTLConfig``'s, else 5).

        Returns:
            A future that is done when the sweeper stops; cancelling it stops the sweeper.
        """
        minutes = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5
        return self._sweeper.start(float(minutes) * 60)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the background sweeper.

        Args:
            timeout: Seconds to wait for it to finish a sweep in progress.

        Returns:
            Whether it stopped within the timeout (True when none was running).
        """
        return self._sweeper.stop(timeout)

    # ------------------------------------------------------------------ embeddings
    def rebuild_index(self) -> int:
        """Embed every item on the current branch with this store's ``index`` and store the vectors.

        For an index that is new or whose embedder changed: vectors are
        stored under the embedder's name, so a new embedder starts empty.
        Items are embedded with the configured ``fields`` (a per-put
        ``index=`` choice is not recorded in memory, so it is not repeated).
        No commit is made.

        Returns:
            How many items got vectors.

        Raises:
            ValueError: The store has no ``index``.
        """
        if self._index is None:
            raise UsageError("this store has no index to rebuild: pass index=IndexConfig(...) when opening it")
        commit = self._store.head_commit()
        if commit is None:
            return 0
        puts = [PutOp(*place, value_of(timed.node.content)) for nid, timed in self._store.node_times(at=commit).items()
                if (place := parse_node_id(nid)) is not None]
        embedded = self._index.embed(puts)
        vectors = {node_id(*key): spec["fields"] for key, spec in embedded.puts.items()}
        return self._store.embed(self._index.model, vectors, at=commit) if vectors else 0

    # ------------------------------------------------------------------ history
    def branch(self, name: str, start: str | None = None) -> str:
        """Create a branch (at ``start``, a commit-ish, or at HEAD) without switching to it.

        Args:
            name: The new branch.
            start: Where it starts.

        Returns:
            ``name``, to pass to ``switch`` or ``merge``.
        """
        self._store.new_branch(name, start=start)
        return name

    def switch(self, target: str) -> None:
        """Make ``target`` (a branch) the one every later read and write uses.

        The current branch is the store's HEAD, shared by every handle on
        the store, not a property of this object.

        Args:
            target: A branch name (a commit id detaches HEAD; writes then fail).
        """
        self._store.checkout(target)

    def merge(
        self,
        theirs: str,
        resolutions: Mapping[str | tuple[tuple[str, ...], str], Resolution] | None = None,
        strategy: MergeStrategy | None = None,
    ) -> MergeResult:
        """Merge ``theirs`` into the current branch as this store's author.

        A merge with unresolved conflicts writes nothing: the result lists
        them (``ok`` is false; ``keys.parse_node_id`` turns a conflict's id
        back into ``(namespace, key)``), and you call again with fuller
        ``resolutions``.

        Args:
            theirs: A branch name or commit id.
            resolutions: Per item, keyed by ``(namespace, key)`` or node id:
                ``"ours"``, ``"theirs"``, ``"base"``, ``"delete"``, or a new
                value dict (stored without provenance, so it may not carry ``_meta``).
            strategy: ``"ours"`` or ``"theirs"`` for conflicts not in ``resolutions``.

        Returns:
            The bridge's ``MergeResult``.

        Raises:
            ValueError: A resolution value carrying ``_meta``, or a bad strategy.
        """
        return self._store.merge(theirs, resolutions=_chosen(resolutions), strategy=strategy, author=self.author)

    def fetch(self, remote: str = "origin") -> Fetched:
        """Bring a remote store's new commits and move its tracking branches (``origin/main``); docs/remotes.md.

        Raises:
            NotFoundError: No such remote (add one with ``mnem remote add`` or the bridge's ``remote_add``).
        """
        return self._store.fetch(remote)

    def push(self, remote: str = "origin", branch: str | None = None, *,
             force_with_lease: bool | str = False) -> Pushed:
        """Send a branch (default the current one) to a remote; see ``mnem_bridge.Store.push``.

        Raises:
            ConflictError: Not a fast-forward (or the lease no longer holds); nothing changed.
        """
        return self._store.push(remote, branch, force_with_lease=force_with_lease)

    def pull(
        self,
        remote: str = "origin",
        branch: str | None = None,
        resolutions: Mapping[str | tuple[tuple[str, ...], str], Resolution] | None = None,
        strategy: MergeStrategy | None = None,
    ) -> Pulled:
        """Fetch, then merge ``remote/branch`` into the current branch as this store's author.

        ``resolutions`` and ``strategy`` are ``merge``'s; a merge that stops
        on conflicts keeps the fetch and lists them (``pulled.merge.ok`` is false).
        """
        return self._store.pull(remote, branch, resolutions=_chosen(resolutions), strategy=strategy,
                                author=self.author)

    def revert(
        self,
        *,
        source: str | None = None,
        step: str | None = None,
        observation: str | None = None,
        author: str | None = None,
        commit: str | None = None,
        thread: str | None = None,
        dry_run: bool = False,
    ) -> Reverted:
        """Undo, as one commit by this store's author, every item whose value now came from what is named.

        What a ``_meta`` (or a run's provenance) recorded names the versions: ``source``, ``step``,
        ``observation``; or the commit that wrote them: ``author``, ``commit``; ``thread`` is the source a
        LangGraph run's puts without ``_meta`` record (``langgraph thread <id>``): everything one
        conversation wrote.  Every one given must hold.  Each such item goes back to its value before, or
        is deleted where it had none; an item another writer changed since is in ``skipped``, left as it
        is.  ``why`` then names the revert commit.  ``mnem_bridge.Store.revert`` says more.

        Args:
            source: Undo the values whose provenance ``source`` is this.
            step: Undo the values whose provenance step (``agent_step``) is this.
            observation: Undo the values whose provenance ``observation`` is this.
            author: Undo the values written by this author's commits.
            commit: Undo the values this commit wrote.
            thread: Undo what a LangGraph run on this thread put without ``_meta`` (not with ``source``).
            dry_run: Answer what would be done, and write nothing.

        Returns:
            The bridge's ``Reverted``: node ids (``keys.parse_node_id`` gives ``(namespace, key)``).

        Raises:
            ValueError: Nothing named, or both ``source`` and ``thread``.
            NotFoundError: Nothing in the current branch's history matches.
            InvalidRefError: Nothing left to revert (the message names the items changed since).
        """
        if thread is not None:
            if source is not None:
                raise UsageError("revert takes source= or thread= (a thread's source), not both")
            source = thread_source(thread)
        return self._store.revert(source=source, step=step, observation=observation, author=author, commit=commit,
                                  by=self.author, dry_run=dry_run)

    def why(self, namespace: tuple[str, ...], key: str) -> Blame:
        """The commit and provenance behind an item's current value.

        Args:
            namespace: The item's namespace.
            key: The item's key.

        Returns:
            The blame: ``commit``, the node (``provenance`` holds what ``_meta``
            said), and ``time`` (equal to the item's ``updated_at``).

        Raises:
            InvalidRefError: No such item on the current branch.
        """
        return self._store.blame(node_id(namespace, key))

    def history(self, limit: int = 20, *, since: Time | None = None, until: Time | None = None) -> list[Commit]:
        """The current branch's recent commits, newest first.

        Args:
            limit: At most this many.
            since: Only commits made at or after this (an extension): a ``datetime`` (naive: UTC), ISO 8601
                text (no offset: UTC) or Unix ms.
            until: Only commits made at or before this.

        Returns:
            The commits.

        Raises:
            UsageError: ``since`` or ``until`` is not a time.
        """
        return self._store.log(limit=limit, since=since, until=until)

    def at(self, rev: str | datetime) -> MemoryView:
        """A read-only BaseStore of the memory as of ``rev``, pinned to the commit it names now.

        Args:
            rev: A branch name or commit id (prefix), any revision ``mnem`` takes (``"main@{2026-12-01}"``),
                or a ``datetime`` (naive: UTC): the memory as known then, the current branch's newest
                commit made at or before it.

        Returns:
            The view; writes through it raise ``ReadOnlyError``.

        Raises:
            InvalidRefError: ``rev`` names nothing, or the branch has no commit that early.
        """
        spec = times.at_time(None, rev) if isinstance(rev, datetime) else rev
        return MemoryView(self._store, self._store.resolve(spec), self._ranker, self._query_mode)

    def valid_at(self, when: Time, *, at: str | None = None) -> MemoryView:
        """A read-only BaseStore of what was true at ``when`` by the facts' own event times.

        ``at(when)`` answers what the agent *knew* then (commit times);
        this answers what *held* then, by each value's ``event_time``
        (``_meta={"event_time": ...}`` on ``put``), else the time its
        commit was made, from everything the branch knows now (or as of
        ``at``, e.g. ``"main@{2026-04-30}"``).  An item the branch has since
        deleted is there if it still held at ``when``; its ``created_at`` /
        ``updated_at`` are valid times too (docs/time.md).

        Args:
            when: A ``datetime`` (naive: UTC), ISO 8601 text (no offset: UTC) or Unix ms.
            at: The revision whose history is read (default: the current branch's tip, pinned now).

        Returns:
            The view; writes through it raise ``ReadOnlyError``.

        Raises:
            InvalidRefError: ``at`` names nothing.
            UsageError: ``when`` is not a time.
        """
        commit = self._store.resolve(at or "HEAD")
        return MemoryView(self._store, commit, self._ranker, self._query_mode, valid_at=times.to_ms(when))


def _checked(ops: Iterable[Op]) -> list[Op]:
    """The ops as a list, each checked against BaseStore's rules first: a bad op changes nothing."""
    ops = list(ops)
    for op in ops:
        check_op(op)
    return ops


def _run_of(ops: list[Op]) -> Mapping[str, str]:
    """The run's provenance when some put will record it (no ``_meta``); reads never look up the stack."""
    unmarked = any(isinstance(op, PutOp) and isinstance(op.value, Mapping) and META_KEY not in op.value for op in ops)
    return run_provenance() if unmarked else {}


def _listing(ids: list[str]) -> str:
    """Ids for a commit message: the first three (a long one cut, ``in_message``), then how many more."""
    shown = ", ".join(map(in_message, ids[:3]))
    return shown if len(ids) <= 3 else f"{shown} and {len(ids) - 3} more"


def _chosen(resolutions: Mapping[str | tuple[tuple[str, ...], str], Resolution] | None
            ) -> dict[str, MergeSide | MemoryNode]:
    """``merge``'s and ``pull``'s resolutions, keyed by node id, a new value as its node."""
    chosen: dict[str, MergeSide | MemoryNode] = {}
    for target, how in (resolutions or {}).items():
        nid = target if isinstance(target, str) else node_id(*target)
        chosen[nid] = how if isinstance(how, str) else _resolved_node(nid, how)
    return chosen


def _resolved_node(nid: str, value: Mapping[str, Any]) -> MemoryNode:
    """A conflict resolved to a new value; refuses ``_meta``, which a resolution cannot record."""
    content, provenance = split_meta(value)
    if provenance:
        raise ValueError(f"the resolution for {nid!r} carries _meta, but a merge resolution records no provenance")
    return MemoryNode(nid, content)
