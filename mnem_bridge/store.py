"""The ``Store`` facade: upstream's SDK, with every operation one ``mnem`` invocation.

Method names, arguments, defaults and results follow upstream's Python SDK
(``mnem.Store``), so code written against it runs here; the work happens in
the binary.  The argv each method sends is fixed by docs/cli-json.md:

* user values that can start with ``-`` go after ``--`` (positionals) or in
  ``--option=value`` form (options), so a node id like ``-x`` is never a flag;
* content is sent as compact JSON (``--content-json``), never re-typed;
* the author is always explicit, resolved here as upstream's SDK does (an
  empty ``MNEM_AUTHOR`` counts as unset, which the CLI would use verbatim,
  and a worker's environment is fixed when it starts);
* the commit time is passed only when the caller gives one: otherwise the
  binary takes it inside its write transaction, never before the first
  parent.  A time taken here, before waiting for the store's lock, would
  let concurrent writers record commits timed before their parents.  So an
  echoed line replays to the same commit id when the call gave ``time_ms``;
* every result document is read by a ``parse`` function handed to the
  client, so one of the wrong shape (a binary breaking the contract) is a
  ``ProtocolError`` carrying the command, never a ``KeyError`` or
  ``TypeError`` from inside a method.

The values sent (JSON, vectors, a ``write``'s puts) are built and checked
in ``encoding``, the documents read back in ``documents``, and where a
store is (or may be created) is decided in ``location``; this module holds
the ``Store`` and the functions that open one (``init``, ``open``, ``clone``).

Differences from upstream, all forced by the CLI: a store opened here holds
no database handle (each call opens and closes one in its own process), so
``close()`` only releases the runner, and ``format_version`` is read from
the store with one ``mnem status`` (docs/differences.md).
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, TypeVar, get_args, overload

from .address import StoreUrl, is_url, store_address
from .bisect import first_commit_where
from .client import Mnem
from .collected import Collected
from .documents import Memory, read_blame, read_deleted, read_expired, read_found, read_memory, read_timed, read_written
from .encoding import Resolution, encode_json, pack_vector, resolution_flags, resolve_author, write_put
from .errors import (
    InvalidRefError,
    NoStoreError,
    ProtocolError,
    StoreExistsError,
    StoreIoError,
    UsageError,
)
from .features import require
from .location import MNEM_DIR, check_owner, creation_refused, find_root
from .models import (
    PROVENANCE_KEYS,
    Blame,
    ChangeKind,
    Commit,
    ContentKind,
    MemoryNode,
    MemoryPage,
    MergeResult,
    MergeStrategy,
    NodeChange,
    ProposedChange,
    Provenance,
    Pusher,
    SearchHit,
    TimedNode,
    WholeMemory,
)
from .redacted import Redacted, RedactionRecord, read_records
from .remotes import Fetched, Pulled, Pushed, Remote, remote_text
from .reverted import Reverted
from .times import Time, text_of

__all__ = [
    "MNEM_DIR", "Memory", "Predicate", "Resolution", "Store", "clone", "creation_refused", "find_root", "init", "open",
    "pack_vector",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
Predicate = Callable[[Memory], bool]

_CONTENT_KINDS = get_args(ContentKind)
#: A page of memory with nothing on it: what a view's branch that does not exist yet reads as.
_EMPTY_PAGE: Final = MemoryPage(b'{"memory":{},"next_cursor":null}', {"memory": {}, "next_cursor": None})
#: The whole memory of such a branch.
_EMPTY_MEMORY: Final = WholeMemory(b"{}", {})
#: Why a view refuses merge and pull.
_MERGE = "merge: mnem merge records onto HEAD's branch; merge on the store itself with that branch checked out"
#: Why a view refuses staging, and what to do instead.
_STAGING = ("stage or commit: staging belongs to HEAD's branch; write on the view with write(), or stage on the store "
            "itself")


class _Unset:
    """Marks ``bisect(equals=...)`` as not given, since ``None`` (JSON null) is a value."""

    def __repr__(self) -> str:
        return "<unset>"


UNSET: Final = _Unset()


def init(path: str | os.PathLike[str] | StoreUrl = ".", *, client: Mnem | None = None) -> Store:
    """Create a store at ``path`` (``path/.mnem``) and open it.

    Args:
        path: Where to create it: a folder (created if missing), or a PostgreSQL URL
            (``postgresql://user@host/db?store=NAME``).
        client: How to run ``mnem`` (default: a new ``Mnem()``).

    Returns:
        The new store.

    Raises:
        StoreExistsError: A store exists at or above ``path``.
    """
    store = Store(store_address(path), client=client)
    store._call("init")
    return store


def clone(src: str | os.PathLike[str] | StoreUrl, dest: str | os.PathLike[str] | StoreUrl, *,
          client: Mnem | None = None) -> Store:
    """Make a new store at ``dest`` holding ``src``'s history, with remote ``origin`` = ``src``, and open it.

    Every branch of ``src`` becomes a tracking branch (``origin/NAME``) and
    its HEAD's branch a local branch, checked out (docs/remotes.md).

    Args:
        src: The store to copy: a folder or a PostgreSQL store URL (without a password).
        dest: Where to create the new store: a folder or a PostgreSQL store URL.
        client: How to run ``mnem`` (default: a new ``Mnem()``).

    Returns:
        The new store.

    Raises:
        StoreExistsError: A store exists at ``dest``.
        NoStoreError: No store at ``src``.
        CorruptStoreError: An object of ``src`` does not verify; nothing was created.
    """
    target = store_address(dest)
    store = Store(target, client=client)
    shown = target.url if isinstance(target, StoreUrl) else str(Path(target).absolute())
    try:
        store._remote_call(lambda doc: doc, "clone", "--", remote_text(src), shown)
    except BaseException:
        store.close()
        raise
    return store


def open(
    path: str | os.PathLike[str] | StoreUrl | None = None,
    *,
    client: Mnem | None = None,
    create: bool = False,
    exact: bool = False,
) -> Store:
    """Open the nearest store at or above ``path`` (default: the current folder), as upstream's ``mnem.open`` does.

    This is discovery, like git's: a path inside a store's folder opens
    that store.  A store found by walking up that belongs to another user
    is refused (git's ``safe.directory`` rule; the message names the call
    that opens it by its exact path, for a store you trust).  ``path`` may
    also be the store's ``.mnem`` folder itself.

    With ``exact=True`` (what ``mnem-mcp --store`` uses for every call) the
    path is the store's root, never walked up from, so a typo cannot land in
    a store further up; ``create=True`` (``MnemosyneStore(path)``, ``mnem-mcp``
    start-up) is exact too, and creates a store that does not exist there
    yet on first use, logged at INFO, but only where nothing else is: see
    ``creation_refused`` for the paths that are refused instead.

    Args:
        path: A folder at or below the store's root (or its ``.mnem`` folder), or a
            PostgreSQL URL; ``None`` for the current folder.
        client: How to run ``mnem`` (default: a new ``Mnem()``).
        create: Use ``path`` exactly, and create the store there if it is a new
            folder (its parent exists) or an empty one of yours.  Ignored without ``path``.
        exact: Use ``path`` exactly: no store there is ``NoStoreError``, even
            inside another store.  Ignored without ``path``.

    Returns:
        The store.

    Raises:
        NoStoreError: No store at or above ``path`` (the binary's own error, with a
            command to rerun), one that belongs to another user, or with ``create``
            a path where no store is created (the message says why and what to do).
    """
    if isinstance(path, str) and is_url(path):
        path = StoreUrl.parse(path)
    if isinstance(path, StoreUrl):
        return _open_url(path, client, create)
    start = Path.cwd() if path is None else Path(path).absolute()
    if start.name == MNEM_DIR and start.is_dir():
        start = start.parent
    if (create or exact) and path is not None:
        root = start if (start / MNEM_DIR).is_dir() else None
    else:
        root = find_root(start)
        check_owner(root, start, named=path is not None)
    if root is None and create and path is not None:
        return _create(start, client)
    store = Store(root or start, client=client)
    if root is None:
        store._call("status")  # raises the binary's own NoStoreError, with a command to rerun
        raise ProtocolError(f"mnem found a store at {start}, but there is no {MNEM_DIR} directory")
    return store


def _open_url(url: StoreUrl, client: Mnem | None, create: bool) -> Store:
    """A store in PostgreSQL.

    Without ``create`` nothing runs: checking would cost a ``mnem`` call,
    and the first real call reports a missing store anyway (``no_store``,
    naming ``mnem init``).  With ``create``, one ``status`` call finds out
    and the store is made if the database has none of that name yet.
    """
    store = Store(url, client=client)
    if not create:
        return store
    try:
        try:
            store._call("status")
        except NoStoreError:
            store._call("init")
            logger.info("created a new store at %s (it did not exist yet)", url)
    except StoreExistsError:  # another process created it first: use that one
        pass
    except BaseException:
        store.close()
        raise
    return store


def _create(path: Path, client: Mnem | None) -> Store:
    """``open(path, create=True)`` where no store is: create one if ``creation_refused`` allows it.

    A folder that may hold one but cannot be written (its parent is not
    this user's to write, or is on a read-only file system) fails as the
    binary's ``store_io``, to which the fix is added.
    """
    refused = creation_refused(path)
    if refused is not None:
        raise NoStoreError(f"no mnemosyne store at {path}: {refused}")
    try:
        store = init(path, client=client)
    except StoreExistsError:  # another process created it first: use that one
        return open(path, client=client)
    except StoreIoError as exc:
        if type(exc) is not StoreIoError:  # busy, or the process failed (no binary): not about the folder
            raise
        fix = (f"; no store could be created at {path}: pass a folder you can write to, or have someone who can "
               f"write there run `mnem init {path}`")
        raise StoreIoError(exc.message + fix, detail=exc.detail + fix, command=exc.command, stderr=exc.stderr,
                           exit_status=exc.exit_status) from exc
    logger.info("created a new store at %s (it did not exist yet)", path)
    return store


class Store:
    """An open store: upstream's SDK methods, each one ``mnem`` invocation.

    Prefer ``init``/``open``; constructing directly takes ``root`` as is.

    ``on(branch)`` gives a view of the same store on one branch, for a
    writer that keeps its commits apart without moving anyone's HEAD (a
    LangGraph run replayed from a past checkpoint).  Every method of a view
    either honours its branch or refuses with a ``UsageError`` that says why;
    none falls back to HEAD's branch.  Each method's docstring says which,
    under "On a view"; in short:

    * reads default to the branch where a store reads HEAD (a revision given
      as ``at`` is read as given), and writes land on it;
    * a branch that does not exist yet reads as empty, as an unborn branch
      does, and its first ``write`` creates it;
    * what only HEAD's branch has is refused: staging and ``commit``,
      ``checkout``, ``merge``/``pull`` (they record onto HEAD's branch), TTL
      leases (``live=True``, ``touch``, ``expire``: ``mnem`` applies them to
      HEAD's branch only);
    * what concerns the whole store (branches, remotes, serving a remote,
      ``export``, a revision the caller names) is the same as on the store.

    Args:
        root: The directory holding ``.mnem``.
        client: How to run ``mnem`` (default: a new ``Mnem()``, closed with the store).
    """

    def __init__(self, root: str | os.PathLike[str] | StoreUrl, *, client: Mnem | None = None) -> None:
        #: The folder holding ``.mnem``, or a PostgreSQL store's URL (without its password).
        self.root: Path | StoreUrl = root if isinstance(root, StoreUrl) else store_address(root)
        self._client = client if client is not None else Mnem()
        self._owns_client = client is None
        self._branch: str | None = None

    def on(self, branch: str) -> Store:
        """A view of this store on ``branch``: its reads pass that branch as their revision, its writes land on it.

        HEAD does not move, and nothing runs until a method is called: the
        view shares this store's client (closing it leaves the client open).
        See the class docstring for what a view does and refuses.

        Args:
            branch: The branch (created by the view's first ``write`` if it does not exist yet).

        Returns:
            The view.

        Raises:
            UsageError: ``branch`` is empty.
        """
        if not branch:
            raise UsageError("Store.on needs a branch name")
        view = Store(self.root, client=self._client)
        view._branch = branch
        return view

    @property
    def view_branch(self) -> str | None:
        """The branch this view reads and writes (``on``), or ``None`` for the store itself (HEAD's branch)."""
        return self._branch

    def _at(self, at: str | None) -> str | None:
        """The revision a read passes: ``at`` as the caller gave it, else the view's branch (``None``: HEAD's)."""
        return self._branch if at is None else at

    def _not_on_view(self, why: str) -> None:
        """Refuse a call that only HEAD's branch can answer, on a view: ``why`` says what and how to do it instead."""
        if self._branch is not None:
            raise UsageError(f"a view on branch {self._branch!r} (Store.on) cannot {why}")

    def _leases(self, live: bool) -> list[str]:
        """``--live`` when ``live``; refused on a view, since ``mnem`` applies leases to HEAD's branch only."""
        if not live:
            return []
        self._not_on_view("read live (live=True): mnem applies TTL leases only to reads of HEAD's branch; pass "
                          "live=False to read the branch as committed")
        return ["--live"]

    def _unless_missing(self, read: Callable[[], T], empty: T, at: str | None = None) -> T:
        """``read()``; on a view whose branch does not exist yet (read at it), ``empty``, as an unborn branch reads."""
        try:
            return read()
        except InvalidRefError:
            if self._branch is None or at is not None or any(name == self._branch for name, _ in self.branches()):
                raise
            return empty

    # ------------------------------------------------------------ plumbing
    @property
    def client(self) -> Mnem:
        """The ``Mnem`` this store runs the binary with."""
        return self._client

    @property
    def last_command(self) -> str | None:
        """The shell line of this store's client's most recent invocation."""
        return self._client.last_command

    def _call(self, *args: str, payload: str | None = None) -> Any:
        return self._client.call(self.root, *args, payload=payload)

    def _read(self, parse: Callable[[Any], T], *args: str, payload: str | None = None) -> T:
        """One invocation whose result ``parse`` reads; a misshapen result is a ``ProtocolError``."""
        return self._client.call(self.root, *args, payload=payload, parse=parse)

    def close(self) -> None:
        """Release the client if this store created it; no process is left running either way.

        On a view: nothing to release (a view never owns its client).
        """
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._branch is not None:
            return f"<mnem.Store root={str(self.root)!r} on={self._branch!r}>"
        return f"<mnem.Store root={str(self.root)!r}>"  # upstream's repr: code and logs written for it match

    # ------------------------------------------------------------ HEAD and staging
    def _status(self, pick: Callable[[Mapping[str, Any]], T]) -> T:
        """``pick`` applied to ``mnem status``'s document."""
        return self._read(pick, "status")

    @property
    def format_version(self) -> int:
        """The store's format version (upstream's ``Store.format_version``; 1 for every store today).

        Read from the store's config with one ``mnem status``, so a store
        that cannot be opened raises here as any other read would.  On a
        view: the same (the whole store's).
        """
        return int(self._status(lambda status: status["format_version"]))

    def head(self) -> str:
        """HEAD as stored: ``"ref: <branch>"``, or a commit hex when detached.

        On a view: ``"ref: <its branch>"``, the HEAD its reads and writes act as if checked out (nothing is run).
        """
        if self._branch is not None:
            return f"ref: {self._branch}"
        return str(self._status(lambda status: status["head"]))

    def head_commit(self) -> str | None:
        """The commit HEAD points at, or ``None`` on an unborn branch.

        On a view: its branch's tip, or ``None`` when the branch does not exist yet.
        """
        if self._branch is not None:
            branch = self._branch
            return self._unless_missing(lambda: self.resolve(branch), None)
        commit = self._status(lambda status: status["commit"])
        return None if commit is None else str(commit)

    def add(
        self,
        id: str,
        content: Any,
        *,
        content_kind: ContentKind = "note",
        provenance: Provenance | None = None,
        event_time: int | None = None,
    ) -> str:
        """Stage a node for the next commit.

        Args:
            id: The node's stable id; staging it again replaces the staged version.
            content: Any JSON value.
            content_kind: ``"note"`` or ``"claim"``.
            provenance: Where the belief came from (default: empty).
            event_time: When the agent formed it, Unix ms.

        Returns:
            The staged node's object id (64 hex).

        Raises:
            UsageError (a ValueError): Bad ``content_kind`` or content that is not JSON; on a view, always.

        On a view: refused (staging belongs to HEAD's branch; ``write`` lands on the view's).
        """
        self._not_on_view(_STAGING)
        if content_kind not in _CONTENT_KINDS:
            raise UsageError(f'content_kind must be "note" or "claim", got {content_kind!r}')
        args = ["add", f"--content-json={encode_json(content)}"]
        if content_kind != "note":
            args.append(f"--content-kind={content_kind}")
        given = provenance or Provenance()
        for key, name in PROVENANCE_KEYS.items():
            value = getattr(given, name)
            if value is not None:
                args.append(f"--{key.replace('_', '-')}={value}")  # each key is a flag of ``mnem add``
        if event_time is not None:
            args.append(f"--event-time={event_time}")
        return str(self._read(lambda doc: doc["object"], *args, "--", id))

    def add_node(self, node: MemoryNode) -> str:
        """Stage ``node`` (``add`` with its fields).

        Args:
            node: The node to stage.

        Returns:
            Its object id.

        On a view: refused, as ``add``.
        """
        return self.add(
            node.id,
            node.content,
            content_kind=node.content_kind,
            provenance=node.provenance,
            event_time=node.event_time,
        )

    def rm(self, id: str) -> None:
        """Stage the deletion of a node (a tombstone; a pending add is simply dropped).

        Args:
            id: The node id.

        Raises:
            InvalidRefError: The node is neither committed nor staged.
            UsageError: On a view, always (staging belongs to HEAD's branch).
        """
        self._not_on_view(_STAGING)
        self._call("rm", "--", id)

    def staged(self) -> list[tuple[str, str]]:
        """Staged nodes as ``(node id, object id)``, sorted by node id.  On a view: refused, as ``add``."""
        self._not_on_view(_STAGING)
        return self._status(lambda status: [(entry["id"], entry["object"]) for entry in status["staged"]])

    def staged_deletions(self) -> list[str]:
        """Node ids staged for deletion, sorted.  On a view: refused, as ``add``."""
        self._not_on_view(_STAGING)
        return self._status(lambda status: list(status["staged_deletions"]))

    def unstage(self, id: str) -> bool:
        """Drop a staged add or deletion.

        Args:
            id: The node id.

        Returns:
            Whether anything was staged for it.

        On a view: refused, as ``add``.
        """
        self._not_on_view(_STAGING)
        return bool(self._read(lambda doc: doc["unstaged"], "unstage", "--", id))

    def commit(self, message: str, *, author: str | None = None, time_ms: int | None = None) -> str:
        """Record what is staged as a commit on the current branch.

        Args:
            message: The commit message.
            author: Who; default ``$MNEM_AUTHOR`` if non-empty, else ``"unknown"``.
            time_ms: Commit time in Unix ms (default: the binary's clock when it records the
                commit, never before its parent's time).

        Returns:
            The commit id.

        Raises:
            InvalidRefError: Nothing staged, or HEAD is detached.
            ConflictError: The branch moved during the commit.
            UsageError: On a view, always (it commits HEAD's staging; ``write`` lands on the view's branch).
        """
        self._not_on_view(_STAGING)
        return str(self._read(lambda doc: doc["id"], "commit", *self._record_flags(message, author, time_ms)))

    def _record_flags(self, message: str | None, author: str | None, time_ms: int | None) -> list[str]:
        """``--message``/``--author``/``--time`` as commit, merge and write take them.

        ``--time`` only when the caller chose the time: the binary's own
        default is taken inside its write transaction, after any wait for the
        lock, so a commit is never timed before its parent.
        """
        flags = [] if message is None else [f"--message={message}"]
        flags.append(f"--author={resolve_author(author)}")
        return flags if time_ms is None else [*flags, f"--time={time_ms}"]

    # ------------------------------------------------------------ history and refs
    def log(self, *, first_parent: bool = False, limit: int | None = None,
            touching: Iterable[str] = (), threads: Iterable[str] = (), since: Time | None = None,
            until: Time | None = None) -> list[Commit]:
        """History from HEAD, in the binary's order, which is kept as it is (never re-sorted here).

        That order is the graph's: no commit comes before one of its
        descendants, and otherwise newest first.  Sorting by ``time`` would
        break it wherever clocks disagree (a commit may carry an explicit,
        older ``time_ms`` than its parent).

        ``touching`` and ``threads`` (``mnem log --touching/--thread``) keep
        only some commits, so one LangGraph thread's run can be read beside
        what the agent learnt without the other threads' checkpoints; the
        binary decides from its change index, so no memory is read.
        ``since`` and ``until`` (``mnem log --since/--until``) keep the
        commits dated in that range, both ends included.

        Args:
            first_parent: Follow only each commit's first parent.
            limit: At most this many commits (of those listed).
            touching: Only commits that changed a node whose id starts with one of these.
            threads: Also (or only, without ``touching``) the commits that changed one of these LangGraph
                threads' checkpoints, and every commit that changed no checkpoint (a memory commit).
            since: Only commits dated at or after this: Unix ms, ISO 8601 text (no offset: UTC) or a ``datetime``.
            until: Only commits dated at or before this.

        Returns:
            The commits (empty on an unborn branch).

        On a view: history from its branch's tip (empty while the branch does not exist).

        Raises:
            ContractError: ``touching`` or ``threads`` with a ``mnem`` that does not list the ``log-filter`` feature,
                or ``since`` / ``until`` without ``log-time``.
            UsageError: ``since`` or ``until`` is not a time (nothing is run).
        """
        args = self._log_args(first_parent, limit, touching, threads, since, until)
        return self._unless_missing(lambda: self._read(lambda doc: [Commit.from_dict(c) for c in doc], *args), [])

    def log_attributed(self, *, first_parent: bool = False, limit: int | None = None,
                       touching: Iterable[str] = (), threads: Iterable[str] = (), since: Time | None = None,
                       until: Time | None = None) -> list[tuple[Commit, Pusher | None]]:
        """``log``, each commit with who pushed it into the store where that was not its author.

        Same arguments and order as ``log``, from the same one ``mnem log``; on a view, from its branch as ``log``.

        Returns:
            ``(commit, pusher)`` pairs; the pusher is ``None`` for a commit no one but its author brought here
            (and always with a ``mnem`` that records no pushes).

        Raises:
            ContractError: As ``log``.
            UsageError: As ``log``.
        """
        args = self._log_args(first_parent, limit, touching, threads, since, until)
        return self._unless_missing(
            lambda: self._read(lambda doc: [(Commit.from_dict(c), Pusher.of(c)) for c in doc], *args), [])

    def _log_args(self, first_parent: bool, limit: int | None, touching: Iterable[str], threads: Iterable[str],
                  since: Time | None, until: Time | None) -> list[str]:
        """``mnem log``'s arguments for ``log``'s options (from a view's branch), each needed feature checked first."""
        args = ["log"]
        if first_parent:
            args.append("--first-parent")
        if limit is not None:
            args.append(f"--max-count={limit}")
        filters = [f"--touching={prefix}" for prefix in touching] + [f"--thread={thread}" for thread in threads]
        if filters:
            self._require("log-filter")
        window = [f"--{name}={text_of(when)}" for name, when in (("since", since), ("until", until))
                  if when is not None]
        if window:
            self._require("log-time")
        return [*args, *filters, *window, *([] if self._branch is None else ["--", self._branch])]

    def _require(self, feature: str) -> None:
        """Raise ``ContractError`` unless the binary lists ``feature`` (``features.NEEDS`` says what it is for)."""
        require(self._client.binary, feature)

    def resolve(self, spec: str) -> str:
        """The commit a branch name or a 4-64 hex prefix names.

        Args:
            spec: A commit-ish.

        Returns:
            The full commit id.

        Raises:
            InvalidRefError: No such branch or commit, or an ambiguous prefix.

        On a view: the same (``spec`` names what it names in the whole store).
        """
        return str(self._read(lambda doc: doc["commit"], "resolve", "--", spec))

    def new_branch(self, name: str, *, start: str | None = None) -> None:
        """Create a branch at ``start`` (a commit-ish) or at HEAD, without switching to it.

        On a view: ``start`` defaults to the view's branch instead of HEAD.

        Args:
            name: The branch name.
            start: Where it starts.

        Raises:
            InvalidRefError: Bad or existing name, or HEAD (a view's branch) has no commit yet.
        """
        start = self._at(start)
        self._call("branch", "--", name, *([] if start is None else [start]))

    def branches(self) -> list[tuple[str, str]]:
        """Every branch as ``(name, tip commit id)``, sorted by name.  On a view: the same (the whole store's)."""
        return self._read(lambda doc: [(entry["name"], entry["commit"]) for entry in doc], "branch")

    def delete_branch(self, name: str) -> bool:
        """Delete a branch (its commits stay reachable by id).

        Args:
            name: The branch name.

        Returns:
            Whether the branch existed.

        Raises:
            InvalidRefError: ``name`` is the current branch.

        On a view: the same (the view's own branch may be deleted: it then reads as empty again).
        """
        return self._read(read_deleted, "branch", f"--delete={name}")

    def checkout(self, target: str | None = None, *, create: str | None = None, discard: bool = False) -> None:
        """Move HEAD to a branch (attached) or a commit (detached).

        Args:
            target: A branch or commit-ish; with ``create``, the new branch's start.
            create: Create this branch first and switch to it.
            discard: Drop staged changes instead of refusing to switch.

        Raises:
            UsageError (a ValueError): Neither ``target`` nor ``create`` given; on a view, always.
            InvalidRefError: Unknown target, or staged changes without ``discard``.

        On a view: refused (a view never moves HEAD; check out on the store itself).
        """
        self._not_on_view("check out: a view never moves HEAD; call checkout on the store itself")
        if target is None and create is None:
            raise UsageError("checkout needs a target, or create= to make a new branch")
        args = ["checkout"]
        if create is not None:
            args.append(f"--create={create}")
        if discard:
            args.append("--discard")
        self._call(*args, "--", *([] if target is None else [target]))

    def branch(self, name: str, *, start: str | None = None) -> contextlib.AbstractContextManager[Store]:
        """Create a branch now; the returned context manager works on it, then returns.

        Entering checks the branch out; leaving (also on an exception) checks
        the previous branch (or detached commit) back out with
        ``discard=True``, so uncommitted staged work inside the block is lost,
        as upstream.  The branch itself stays.

        Args:
            name: The new branch.
            start: Where it starts (default HEAD).

        Returns:
            A context manager yielding this store.

        Raises:
            UsageError: On a view, always (it moves HEAD; ``on(name)`` works on a branch without moving it).
        """
        self._not_on_view("switch branches with branch(): it moves HEAD; use on(name) for a view of that branch, "
                          "or call branch() on the store itself")
        self.new_branch(name, start=start)
        return self._on(name)

    @contextlib.contextmanager
    def _on(self, target: str) -> Iterator[Store]:
        previous = self._status(lambda status: status["commit"] if status["branch"] is None else status["branch"])
        self.checkout(target)
        try:
            yield self
        finally:
            self.checkout(previous, discard=True)

    # ------------------------------------------------------------ reading memory
    def working_memory(self) -> Memory:
        """The HEAD state with staging applied, in node-id order.

        On a view: its branch's tip (a view stages nothing); empty while the branch does not exist.
        """
        at = self._branch
        return self._unless_missing(lambda: self._read(read_memory, "show", *([] if at is None else ["--", at])), {})

    def whole_memory(self, *, at: str | None = None) -> WholeMemory:
        """All of working memory (or of the commit ``at``) as the binary printed it, in id order (``mnem show``).

        ``working_memory`` (or ``state_at(at)``) for a caller that passes the
        memory on as JSON: ``json`` is the binary's bytes and ``document``
        their one decoding, and no ``MemoryNode`` is built unless ``memory``
        is asked for.

        Args:
            at: A commit-ish to read instead of working memory.

        Returns:
            The memory, ``{id: node}``.

        On a view: ``at`` defaults to its branch (empty while the branch does not exist).
        """
        given, at = at, self._at(at)
        return self._unless_missing(lambda: self._whole(at), _EMPTY_MEMORY, given)

    def _whole(self, at: str | None) -> WholeMemory:
        """``whole_memory`` at the revision ``at`` (None: working memory)."""
        document, data = self._client.call_json(self.root, "show", "--", *([] if at is None else [at]))
        if not isinstance(document, dict):
            raise ProtocolError(f"mnem show answered with JSON of the wrong shape: {data[:200]!r}",
                                command=self._client.last_command)
        return WholeMemory(data, document)

    def memory_page(
        self, *, limit: int, cursor: str | None = None, prefixes: Iterable[str] | None = None, at: str | None = None,
    ) -> MemoryPage:
        """One page of working memory (or of the commit ``at``), in id order (``mnem show --limit``).

        Args:
            limit: At most this many nodes (1 or more).
            cursor: Start after this id: the ``next_cursor`` of the page before.
            prefixes: Only ids starting with one of these; ``None`` for all.
            at: A commit-ish to read instead of working memory.

        Returns:
            The page, with the binary's JSON kept for callers that pass it on.

        On a view: ``at`` defaults to its branch (empty while the branch does not exist).
        """
        given, at = at, self._at(at)
        return self._unless_missing(lambda: self._page(limit, cursor, prefixes, at), _EMPTY_PAGE, given)

    def _page(self, limit: int, cursor: str | None, prefixes: Iterable[str] | None, at: str | None) -> MemoryPage:
        """``memory_page`` at the revision ``at`` (None: working memory)."""
        args = ["show", f"--limit={limit}", *([] if cursor is None else [f"--cursor={cursor}"]),
                *(f"--prefix={start}" for start in prefixes or ()), "--", *([] if at is None else [at])]
        document, data = self._client.call_json(self.root, *args)
        shaped = isinstance(document, dict) and isinstance(document.get("memory"), dict) and (
            "next_cursor" in document and isinstance(document["next_cursor"], str | None))
        if not shaped:
            raise ProtocolError(f"mnem show --limit answered with JSON of the wrong shape: {data[:200]!r}",
                                command=self._client.last_command)
        return MemoryPage(data, document)

    def working_node(self, id: str, *, at: str | None = None) -> MemoryNode | None:
        """One node of working memory (a staged version wins over HEAD), or of the commit ``at``.

        Args:
            id: The node id.
            at: A commit-ish to read instead of working memory.

        Returns:
            The node, or ``None`` if absent or staged for deletion.

        On a view: ``at`` defaults to its branch.
        """
        given, at = at, self._at(at)
        return self._unless_missing(lambda: self._read(
            lambda data: None if data is None else MemoryNode.from_dict(data), "show", f"--node={id}",
            *([] if at is None else ["--", at])), None, given)

    def state_at(self, commit: str) -> Memory:
        """The memory recorded by a commit (HEAD does not move).

        Args:
            commit: A commit-ish.

        Returns:
            ``{node id: MemoryNode}`` in node-id order.

        On a view: the same (``commit`` is read as given).
        """
        return self._read(read_memory, "show", "--", commit)

    def node_ids(
        self, *, prefixes: Iterable[str] | None = None, at: str | None = None, live: bool = False,
        last: int | None = None,
    ) -> list[str]:
        """The ids in committed memory, without reading a node (``mnem ls``): what a listing needs.

        Args:
            prefixes: Only ids starting with one of these; ``None`` for all.
            at: A commit-ish (default: HEAD's commit; an unborn branch gives ``[]``).
            live: Leave out nodes whose TTL lease on HEAD's branch has run out (not with ``at``).
            last: Only the last this many ids in id order (``ls --last``): where ids sort by time, the
                newest, without the others crossing the process boundary.

        Returns:
            The ids, in id order.

        Raises:
            ContractError: ``last`` with a ``mnem`` that does not list the ``ls-last`` feature.
            UsageError: ``live`` on a view.

        On a view: ``at`` defaults to its branch (empty while it does not exist); ``live`` is refused.
        """
        starts = None if prefixes is None else list(prefixes)
        flags = self._leases(live)
        if starts == []:
            return []
        if last is not None:
            self._require("ls-last")
        given, at = at, self._at(at)
        args = ["ls", *flags, *(f"--prefix={start}" for start in starts or ()),
                *([] if last is None else [f"--last={last}"]), "--", *([] if at is None else [at])]
        return self._unless_missing(lambda: self._read(lambda doc: [str(node_id) for node_id in doc], *args), [],
                                    given)

    def node_objects(
        self, *, prefixes: Iterable[str] | None = None, live: bool = False, unless: str | None = None,
    ) -> tuple[str | None, dict[str, str] | None, list[str]]:
        """HEAD's commit, its node ids with their values' object ids, and the expired ones (``mnem ls --objects``).

        A value's object id names it for good, and a commit's nodes never
        change: a caller that keeps what it learnt by object id, or by
        commit, reads only the values it has not seen, at the commit
        returned (``node_times(ids, at=commit)``, so what it learns belongs
        to those objects even if HEAD has moved on), and asks again with
        ``unless`` set to the commit it holds: while HEAD is still there, no
        node is sent, only what has expired since.

        Args:
            prefixes: Only ids starting with one of these; ``None`` for all.
            live: Also list the nodes whose TTL lease on HEAD's branch has run out.
            unless: A commit id: when HEAD's commit is this one, the nodes are not sent (None).

        Returns:
            ``(commit id or None on an unborn branch, {node id: object id} in id order or None,
            [expired node id])``; the nodes include the expired ones.

        Raises:
            ContractError: A ``mnem`` that does not list the ``ls-objects`` feature.
            UsageError: ``live`` on a view.

        On a view: its branch's tip instead of HEAD's commit (``(None, {}, [])`` while the branch does not
        exist); ``live`` is refused.
        """
        starts = None if prefixes is None else list(prefixes)
        flags = self._leases(live)
        if starts == []:
            return None, {}, []
        self._require("ls-objects")
        args = ["ls", "--objects", *flags, *(f"--prefix={start}" for start in starts or ()),
                *([] if unless is None else [f"--unless={unless}"]), "--",
                *([] if self._branch is None else [self._branch])]

        def parse(doc: Any) -> tuple[str | None, dict[str, str] | None, list[str]]:
            nodes = doc["nodes"]
            return doc["commit"], None if nodes is None else dict(nodes), list(doc["expired"])

        unborn: tuple[str | None, dict[str, str] | None, list[str]] = (None, {}, [])
        return self._unless_missing(lambda: self._read(parse, *args), unborn)

    def node_times(
        self, ids: Iterable[str] | None = None, *, prefixes: Iterable[str] | None = None, at: str | None = None,
        live: bool = False,
    ) -> dict[str, TimedNode]:
        """Committed nodes with when each was created and last updated, in one invocation.

        One ``mnem stamps`` answers for every node, where ``blame`` would
        take one process per node.  Staged changes are not included.

        Args:
            ids: These node ids (absent ones are left out).
            prefixes: Every node whose id starts with one of these (a
                namespace): the cost follows those nodes, not the store.
                With ``ids``, both sets; with neither, every node.
            at: A commit-ish (default: HEAD's commit; an unborn branch gives ``{}``).
            live: Leave out nodes whose TTL lease on HEAD's branch has run
                out, and give the others their ``expires`` (not with ``at``).

        Returns:
            ``{node id: TimedNode}`` in node-id order.

        Raises:
            UsageError: ``live`` on a view.

        On a view: ``at`` defaults to its branch (empty while it does not exist); ``live`` is refused.
        """
        wanted = None if ids is None else list(ids)
        starts = None if prefixes is None else list(prefixes)
        flags = self._leases(live)
        if (wanted == [] and not starts) or (starts == [] and not wanted):
            return {}
        given, at = at, self._at(at)
        args = ["stamps", *flags, *(f"--node={node_id}" for node_id in wanted or ()),
                *(f"--prefix={start}" for start in starts or ()), "--", *([] if at is None else [at])]
        return self._unless_missing(lambda: self._read(read_timed, *args), {}, given)

    def memory_valid_at(self, when: Time, *, at: str | None = None) -> Memory:
        """What was true at ``when`` by the facts' own event times, not what was known then (``show --valid-at``).

        For each node, of every version on the first-parent line of ``at``
        (default HEAD's commit; staged changes are not included), the one
        whose ``event_time`` (else the time blame gives its commit) is the
        latest at or before ``when``; a removal, dated by its commit, ends a
        node's validity.  ``state_at(f"main@{{{when}}}")`` is the other
        question: what was known then.  Both together: ``at="main@{T}"``.

        Args:
            when: Unix ms, ISO 8601 text (no offset: UTC) or a ``datetime`` (naive: UTC).
            at: A commit-ish whose history is read.

        Returns:
            ``{node id: MemoryNode}`` in node-id order (an unborn branch gives ``{}``).

        Raises:
            InvalidRefError: ``at`` names nothing.
            UsageError: ``when`` is not a time.
            ContractError: A ``mnem`` that does not list the ``valid-at`` feature.

        On a view: ``at`` defaults to its branch (empty while it does not exist).
        """
        flags, given, at = self._valid_flag(when), at, self._at(at)
        return self._unless_missing(
            lambda: self._read(read_memory, "show", *flags, "--", *([] if at is None else [at])), {}, given)

    def node_valid_at(self, id: str, when: Time, *, at: str | None = None) -> MemoryNode | None:
        """One node as ``memory_valid_at`` would hold it, found by the change index's probes alone.

        Args:
            id: The node id.
            when: Unix ms, ISO 8601 text (no offset: UTC) or a ``datetime`` (naive: UTC).
            at: A commit-ish whose history is read.

        Returns:
            The node valid then, or ``None`` (not yet true, or removed by then).

        Raises:
            InvalidRefError: ``at`` names nothing.
            UsageError: ``when`` is not a time.
            ContractError: A ``mnem`` that does not list the ``valid-at`` feature.

        On a view: ``at`` defaults to its branch (``None`` while it does not exist).
        """
        flags, given, at = self._valid_flag(when), at, self._at(at)
        return self._unless_missing(lambda: self._read(
            lambda data: None if data is None else MemoryNode.from_dict(data), "show", f"--node={id}", *flags, "--",
            *([] if at is None else [at])), None, given)

    def valid_times(
        self, when: Time, ids: Iterable[str] | None = None, *, prefixes: Iterable[str] | None = None,
        at: str | None = None,
    ) -> dict[str, TimedNode]:
        """``node_times`` in valid time: the nodes ``memory_valid_at`` holds, with their times then.

        ``updated`` is the time the valid version became true (its
        ``event_time``, else its commit's), ``created`` the first of its
        unbroken run of versions (``mnem stamps --valid-at``).

        Args:
            when: Unix ms, ISO 8601 text (no offset: UTC) or a ``datetime`` (naive: UTC).
            ids: These node ids (absent ones are left out).
            prefixes: Every node whose id starts with one of these; with ``ids``, both sets; neither, every node.
            at: A commit-ish whose history is read (default: HEAD's commit).

        Returns:
            ``{node id: TimedNode}`` in node-id order.

        Raises:
            InvalidRefError: ``at`` names nothing.
            UsageError: ``when`` is not a time.
            ContractError: A ``mnem`` that does not list the ``valid-at`` feature.

        On a view: ``at`` defaults to its branch (empty while it does not exist).
        """
        wanted = None if ids is None else list(ids)
        starts = None if prefixes is None else list(prefixes)
        if (wanted == [] and not starts) or (starts == [] and not wanted):
            return {}
        given, at = at, self._at(at)
        args = ["stamps", *self._valid_flag(when), *(f"--node={node_id}" for node_id in wanted or ()),
                *(f"--prefix={start}" for start in starts or ()), "--", *([] if at is None else [at])]
        return self._unless_missing(lambda: self._read(read_timed, *args), {}, given)

    def _search_valid_flag(self, when: Time | None) -> list[str]:
        """``search``'s and ``namespaces``' ``--valid-at=TIME`` when a time is given, else nothing."""
        if when is None:
            return []
        self._require("search-valid-at")
        return [f"--valid-at={text_of(when)}"]

    def _valid_flag(self, when: Time | None) -> list[str]:
        """``--valid-at=TIME`` when a time is given (checking the binary can answer it), else nothing."""
        if when is None:
            return []
        self._require("valid-at")
        return [f"--valid-at={text_of(when)}"]

    # ------------------------------------------------------------ beside history: leases and vectors
    def touch(self, ids: Iterable[str]) -> dict[str, int]:
        """Restart the unexpired TTL leases of these nodes on HEAD's branch from now (``mnem touch``).

        Args:
            ids: Node ids; those without a lease, or whose lease ran out, are left alone.

        Returns:
            ``{node id: new expiry in Unix ms}`` for the leases restarted.

        Raises:
            UsageError: On a view, always (``mnem touch`` restarts leases on HEAD's branch only).
        """
        self._not_on_view("restart leases (touch): mnem touch restarts them on HEAD's branch only")
        wanted = list(ids)
        if not wanted:
            return {}
        return self._read(lambda doc: {str(node_id): int(ms) for node_id, ms in doc.items()}, "touch", "--", *wanted)

    def expire(self, *, author: str | None = None) -> tuple[Commit | None, list[str]]:
        """Remove every node whose TTL lease has run out as one commit (``mnem expire``).

        Args:
            author: As for ``commit``.

        Returns:
            ``(commit, removed ids)``; ``(None, [])`` when nothing had expired.

        Raises:
            UsageError: On a view, always (``mnem expire`` sweeps HEAD's branch only).
        """
        self._not_on_view("expire: mnem expire sweeps HEAD's branch only; call expire on the store itself")
        return self._read(read_expired, "expire", f"--author={resolve_author(author)}")

    def embed(self, model: str, vectors: Mapping[str, Mapping[str, str]], *, at: str | None = None) -> int:
        """Store vectors for the values nodes hold at ``at``, without a commit (``mnem embed``).

        Args:
            model: The name to store them under.
            vectors: ``{node id: {field: vector}}``, each vector as ``pack_vector`` makes it.
            at: A commit-ish (default: HEAD's commit); ids absent there are skipped.

        Returns:
            How many nodes got vectors.

        On a view: ``at`` defaults to its branch (0 while it does not exist).
        """
        given, at = at, self._at(at)
        args = ["embed", f"--model={model}", "--", *([] if at is None else [at])]
        return self._unless_missing(
            lambda: self._read(lambda doc: int(doc["embedded"]), *args, payload=encode_json(dict(vectors))), 0, given)

    def similar(
        self, model: str, vector: Iterable[float], *, ids: Iterable[str] | None = None,
        prefixes: Iterable[str] | None = None, at: str | None = None, live: bool = False, limit: int | None = None,
        distance: str = "cosine",
    ) -> dict[str, float]:
        """Nodes ranked by the similarity of their stored embeddings to ``vector`` (``mnem similar``).

        Vectors are stored by ``write`` puts carrying ``vectors``; a node's
        score is its closest embedded field.

        Args:
            model: The name the vectors were stored under.
            vector: The query embedding.
            ids: Only these nodes (with ``prefixes``, both sets).
            prefixes: Only nodes under these prefixes.
            at: A commit-ish (default: HEAD's commit).
            live: Leave out expired nodes (not with ``at``).
            limit: Only the best this many.
            distance: LangGraph's ``distance_type``, scored as PostgresStore scores it (higher is closer):
                ``"cosine"`` (cosine similarity), ``"l2"`` (minus the Euclidean distance) or
                ``"inner_product"`` (the dot product).  Sent as ``--distance`` only when not the
                default, so a ``mnem`` that predates the option still serves cosine searches.

        Returns:
            ``{node id: score}`` best first (ties by node id); nodes without a vector are left out.

        Raises:
            UsageError: An unknown ``distance`` (``mnem`` refuses it, naming the accepted ones); ``live`` on a view.

        On a view: ``at`` defaults to its branch (empty while it does not exist); ``live`` is refused.
        """
        wanted = None if ids is None else list(ids)
        starts = None if prefixes is None else list(prefixes)
        flags = self._leases(live)
        if (wanted == [] and not starts) or (starts == [] and not wanted):
            return {}
        given, at = at, self._at(at)
        args = ["similar", f"--model={model}", f"--vector={pack_vector(vector)}", *flags,
                *([] if limit is None else [f"--limit={limit}"]),
                *([] if distance == "cosine" else [f"--distance={distance}"]),
                *(f"--node={node_id}" for node_id in wanted or ()), *(f"--prefix={start}" for start in starts or ()),
                "--", *([] if at is None else [at])]
        return self._unless_missing(
            lambda: self._read(lambda doc: dict(zip(map(str, doc), map(float, doc.values()), strict=True)), *args), {},
            given)

    def search(
        self, namespace: Sequence[str] = (), *, query: str | None = None, mode: str = "substring",
        filter: Mapping[str, Any] | None = None, limit: int = 10, offset: int = 0,
        fields: Sequence[str] | None = None, model: str | None = None, vector: Iterable[float] | None = None,
        distance: str = "cosine", at: str | None = None, live: bool = False, valid_at: Time | None = None,
    ) -> list[SearchHit]:
        """A page of LangGraph items under ``namespace``, filtered and ranked in one read (``mnem search``).

        Only the page's items cross the process boundary.  The rules (which
        ids are items, the filter's operators, each mode's order) are
        docs/cli-json.md's ``mnem search``.

        Args:
            namespace: The namespace prefix, its labels (``()``: every item).
            query: What to look for; None or empty lists the items in order.
            mode: ``"substring"``, ``"bm25"``, ``"vector"`` or ``"hybrid"``.
            filter: LangGraph's filter (``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``).
            limit: At most this many items.
            offset: Skip this many first.
            fields: ``"hybrid"``: the index fields BM25 reads (default: the whole value, ``"$"``).
            model: ``"vector"`` and ``"hybrid"``: the name the vectors were stored under.
            vector: ``"vector"`` and ``"hybrid"``: the query's embedding.
            distance: How a vector is scored, as ``similar``'s ``distance``.
            at: A commit-ish (default: HEAD's commit).
            live: Leave out items whose TTL lease on HEAD's branch has run out (not with ``at``).
            valid_at: Search the items valid at this time by their event times, along ``at``'s history
                (``valid_times``), their times in valid time; vectors still score the values ``at`` holds.

        Returns:
            The page, best first where the mode ranks.

        Raises:
            UsageError: A bad argument (an unknown filter operator, a vector mode without ``model`` and
                ``vector``, an argument larger than one value may be); nothing is read.
            ContractError: A ``mnem`` that does not list the ``search`` feature (``search-valid-at`` with
                ``valid_at``).

        On a view: ``at`` defaults to its branch (empty while it does not exist); ``live`` is refused.
        """
        self._require("search")
        valid = self._search_valid_flag(valid_at)
        flags, given, at = self._leases(live), at, self._at(at)
        ranked = mode in ("vector", "hybrid") and bool(query)
        args = ["search", f"--namespace={encode_json(list(namespace))}", f"--limit={limit}", f"--offset={offset}",
                *([] if mode == "substring" else [f"--mode={mode}"]), *flags, *valid,
                *([f"--query={query}"] if query else []),
                *([] if filter is None else [f"--filter={encode_json(dict(filter))}"]),
                *(f"--field={path}" for path in (fields or ()) if mode == "hybrid"),
                *([f"--model={model}"] if ranked and model is not None else []),
                *([f"--vector={pack_vector(vector)}"] if ranked and vector is not None else []),
                *([f"--distance={distance}"] if ranked and distance != "cosine" else []),
                "--", *([] if at is None else [at])]
        return self._unless_missing(
            lambda: self._read(lambda doc: [SearchHit.from_dict(item) for item in doc["items"]], *args), [], given)

    def namespaces(
        self, *, prefix: Sequence[str] | None = None, suffix: Sequence[str] | None = None,
        max_depth: int | None = None, limit: int = 100, offset: int = 0, at: str | None = None, live: bool = False,
        conditions: Sequence[tuple[Literal["prefix", "suffix"], Sequence[str]]] = (), valid_at: Time | None = None,
    ) -> list[tuple[str, ...]]:
        """LangGraph's ``list_namespaces``, answered from node ids alone in one read (``mnem namespaces``).

        Args:
            prefix: Only namespaces starting with these labels (``"*"``: any one label).
            suffix: Only namespaces ending with these labels (``"*"``: any one label).
            max_depth: Cut each namespace to its first this many labels.
            limit: At most this many.
            offset: Skip this many first.
            at: A commit-ish (default: HEAD's commit).
            live: Leave out items whose TTL lease on HEAD's branch has run out (not with ``at``).
            conditions: More match conditions, ``(kind, labels)`` pairs, every one of which must hold too:
                a ``ListNamespacesOp`` may carry several of a kind.
            valid_at: List the namespaces of the items valid at this time, along ``at``'s history (as ``search``).

        Returns:
            The namespaces, sorted.

        Raises:
            ContractError: A ``mnem`` that does not list the ``namespaces`` feature (``search-valid-at`` with
                ``valid_at``).

        On a view: ``at`` defaults to its branch (empty while it does not exist); ``live`` is refused.
        """
        self._require("namespaces")
        valid = self._search_valid_flag(valid_at)
        flags, given, at = self._leases(live), at, self._at(at)
        args = ["namespaces", f"--limit={limit}", f"--offset={offset}", *flags, *valid,
                *([] if prefix is None else [f"--prefix={encode_json(list(prefix))}"]),
                *([] if suffix is None else [f"--suffix={encode_json(list(suffix))}"]),
                *(f"--{kind}={encode_json(list(labels))}" for kind, labels in conditions),
                *([] if max_depth is None else [f"--max-depth={max_depth}"]), "--", *([] if at is None else [at])]
        return self._unless_missing(
            lambda: self._read(lambda doc: [tuple(map(str, labels)) for labels in doc["namespaces"]], *args), [], given)

    @overload
    def diff(self, frm: str | None = None, to: str | None = None, *,
             merge_base: Literal[False] = False) -> list[NodeChange]: ...

    @overload
    def diff(self, frm: str | None = None, to: str | None = None, *,
             merge_base: Literal[True]) -> list[ProposedChange]: ...

    def diff(self, frm: str | None = None, to: str | None = None, *,
             merge_base: bool = False) -> list[NodeChange] | list[ProposedChange]:
        """What changed between two memories, in node-id order; or what merging ``to`` into ``frm`` would propose.

        With ``merge_base``, this is ``mnem diff FRM...TO`` (git's three dots): ``to`` against its merge base
        with ``frm``, so what ``frm`` did since they parted is left out, each change with the commit on
        ``to`` that made it (``ProposedChange.by``: commit, author, message, time), for reviewing a branch
        (say ``"origin/agent/hypothesis"`` after a ``fetch``) before merging it.

        Args:
            frm: A commit-ish (default: the HEAD commit, or empty when unborn; ``HEAD`` with ``merge_base``).
            to: A commit-ish (default: working memory; ``HEAD`` with ``merge_base``).
            merge_base: Compare ``to`` with the merge base instead of with ``frm``.

        Returns:
            One change per node whose object differs (``ProposedChange`` with ``merge_base``).

        Raises:
            UsageError: With ``merge_base``, a revision that holds ``..`` (give the two sides, not a range).
            InvalidRefError: A revision names no commit; with ``merge_base``, the two have no common ancestor or
                several (criss-cross).
            ContractError: ``merge_base`` with a ``mnem`` that does not list the ``diff-range`` feature.

        On a view: HEAD and working memory are its branch (a view stages nothing), so ``frm`` and ``to``
        default to it.
        """
        if self._branch is not None:
            frm, to = frm or self._branch, to or self._branch
        if merge_base:
            return self._proposed(frm or "HEAD", to or "HEAD")
        if frm is None and to is not None:  # the CLI takes TO only after FROM
            frm = self.head_commit()
            if frm is None:
                return [NodeChange(node_id, "added", None, node) for node_id, node in self.state_at(to).items()]
        revs = [rev for rev in (frm, to) if rev is not None]
        return self._read(lambda doc: [NodeChange.from_dict(c) for c in doc], "diff", "--", *revs)

    def _proposed(self, into: str, branch: str) -> list[ProposedChange]:
        """``mnem diff INTO...BRANCH``: one argument, so a side holding dots would read as another range."""
        if ".." in into or ".." in branch:
            raise UsageError(f"diff(merge_base=True) takes two revisions, not a range: got {into!r} and {branch!r}")
        self._require("diff-range")
        return self._read(lambda doc: [ProposedChange.from_dict(c) for c in doc], "diff", "--", f"{into}...{branch}")

    def changed_by(self, commit: str) -> dict[str, ChangeKind]:
        """What a commit changed against its first parent.

        Args:
            commit: A commit-ish.

        Returns:
            ``{node id: "added" | "modified" | "removed"}``.

        On a view: the same (``commit`` is read as given).
        """
        changed: dict[str, ChangeKind] = self._read(dict, "show", "--stat", "--", commit)
        return changed

    # ------------------------------------------------------------ merge, blame, bisect
    def merge(
        self,
        theirs: str,
        *,
        resolutions: Mapping[str, Resolution] | None = None,
        strategy: MergeStrategy | None = None,
        message: str | None = None,
        author: str | None = None,
        time_ms: int | None = None,
    ) -> MergeResult:
        """Three-way merge ``theirs`` into the current branch.

        A merge that stops on conflicts writes nothing and returns them
        (``ok`` is false); call again with fuller ``resolutions``.

        Args:
            theirs: A commit-ish.
            resolutions: Node id -> ``"ours"``/``"theirs"``/``"base"``/``"delete"``,
                or a ``MemoryNode`` whose content becomes the node (no provenance).
            strategy: ``"ours"`` or ``"theirs"`` for conflicts not in ``resolutions``.
            message: Default ``merge <theirs> into <branch>`` (made by the binary).
            author: As for ``commit``.
            time_ms: As for ``commit``.

        Returns:
            The outcome.

        Raises:
            UsageError (a ValueError): A bad strategy or resolution value, or a resolved id containing ``=``; on a
                view, always (``mnem merge`` records onto HEAD's branch).
            InvalidRefError: Detached HEAD, staged changes, or a bad resolution.
        """
        self._not_on_view(_MERGE)
        args = ["merge", *resolution_flags(resolutions, strategy), *self._record_flags(message, author, time_ms)]
        return self._read(MergeResult.from_dict, *args, "--", theirs)

    def revert(
        self,
        *,
        source: str | None = None,
        step: str | None = None,
        observation: str | None = None,
        author: str | None = None,
        commit: str | None = None,
        by: str | None = None,
        time_ms: int | None = None,
        dry_run: bool = False,
    ) -> Reverted:
        """Undo, as one commit on HEAD's branch, every fact whose value now came from the versions named.

        A version is named by its node's provenance (``source``, ``step``: ``agent_step``, ``observation``)
        and by the commit that wrote it (``author``, ``commit``); every one given must hold.  Each such
        fact goes back to the value it had before (before the first of several matching versions in a
        row), or is removed where it had none; a fact another version changed since is in ``skipped`` and
        left as it is.  The commit's message says what was reverted, so ``blame`` of a restored fact names
        it.  ``mnem revert`` (docs/cli-json.md).

        Args:
            source: Undo the values whose provenance ``source`` is this.
            step: Undo the values whose provenance ``agent_step`` is this.
            observation: Undo the values whose provenance ``observation`` is this.
            author: Undo the values written by commits of this author (not who reverts: that is ``by``).
            commit: Undo the values this commit-ish wrote.
            by: Who makes the revert commit; as ``author`` is for ``commit``.
            time_ms: As for ``commit``.
            dry_run: Answer the same facts and write nothing (``commit`` is then None).

        Returns:
            The commit (None on a dry run), the facts reverted and the facts skipped, by node id.

        Raises:
            UsageError (a ValueError): None of the five given; on a view, always (``mnem revert`` records
                onto HEAD's branch).
            NotFoundError: No version in the branch's history matches (the message says what was searched).
            InvalidRefError: Nothing to revert (every matching fact is restored already, or was changed
                later: the message names those), a detached HEAD, or ``commit`` names no commit.
            ContractError: A ``mnem`` that does not list the ``revert`` feature.
        """
        self._not_on_view("revert: mnem revert records onto HEAD's branch; revert on the store itself")
        wanted = {"source": source, "step": step, "observation": observation, "author": author, "commit": commit}
        flags = [f"--{name}={value}" for name, value in wanted.items() if value is not None]
        if not flags:
            raise UsageError("revert needs at least one of source=, step=, observation=, author= or commit= to say "
                             "what to undo")
        self._require("revert")
        flags.append(f"--by={resolve_author(by)}")
        if time_ms is not None:
            flags.append(f"--time={time_ms}")
        if dry_run:
            flags.append("--dry-run")
        return self._read(Reverted.from_dict, "revert", *flags)

    def redact(
        self,
        *,
        reason: str,
        nodes: Iterable[str] = (),
        objects: Iterable[str] = (),
        prefix: str | None = None,
        source: str | None = None,
        step: str | None = None,
        observation: str | None = None,
        author: str | None = None,
        by: str | None = None,
        dry_run: bool = False,
    ) -> Redacted:
        """Remove the bytes of the node versions named from the whole history, ids and commits unchanged.

        A version is named by where it is (``nodes``: every version each id ever had; ``prefix``; ``objects``:
        object ids) and by a provenance match (``source``, ``step``: ``agent_step``, ``observation``, and
        ``author``: of a commit that wrote it); every match given must hold.  Each version keeps a record
        (``by``, now, ``reason``); reads of it answer a ``RedactedNode`` from then on, and ``verify`` still
        passes.  After the call no file of the store holds the bytes unless ``complete`` is False, when
        ``residue`` says what still does and the fix.  ``mnem redact`` (docs/cli-json.md).

        Args:
            reason: Why (required; kept with the record and shown on every read).
            nodes: Node ids: every version each ever had.
            objects: Object ids (64 hex digits) of single versions.
            prefix: Every version of every node whose id starts with this.
            source: Only versions whose provenance ``source`` is this.
            step: Only versions whose provenance ``agent_step`` is this.
            observation: Only versions whose provenance ``observation`` is this.
            author: Only versions a commit of this author wrote (not who redacts: that is ``by``).
            by: Who redacts; default ``$MNEM_AUTHOR`` if non-empty, else ``"unknown"``.
            dry_run: Answer the versions that would go and change nothing.

        Returns:
            The versions named (with their earlier record, if any), the records new to the store, and whether
            the bytes are out of every file.

        Raises:
            UsageError (a ValueError): Nothing named, an empty reason, or an object that is no node version.
            NotFoundError: A node or object the store does not hold, or nothing matches.
            ContractError: A ``mnem`` that does not list the ``redact`` feature.
        """
        flags = [*(f"--node={node}" for node in nodes), *(f"--object={raw}" for raw in objects)]
        wanted = {"prefix": prefix, "source": source, "step": step, "observation": observation, "author": author}
        flags += [f"--{name}={value}" for name, value in wanted.items() if value is not None]
        self._require("redact")
        flags += [f"--reason={reason}", f"--by={resolve_author(by)}"]
        if dry_run:
            flags.append("--dry-run")
        return self._read(Redacted.from_dict, "redact", *flags)

    def redactions(self) -> list[RedactionRecord]:
        """Every redaction the store keeps, oldest first: which version, who, when, why (``mnem redactions``).

        Raises:
            ContractError: A ``mnem`` that does not list the ``redact`` feature.
        """
        self._require("redact")
        return self._read(read_records, "redactions")

    # ------------------------------------------------------------ remotes (docs/remotes.md)
    def _remote_call(self, parse: Callable[[Any], T], *args: str) -> T:
        """One remote verb; a binary without the ``remotes`` feature is a ``ContractError`` naming the fix.

        On a view, the remote verbs act on the whole store, as on the store (``push`` and ``pull`` say more).
        """
        self._require("remotes")
        return self._read(parse, *args)

    def remote_add(self, name: str, url: str | os.PathLike[str] | StoreUrl) -> Remote:
        """Name another store (a folder or a PostgreSQL store URL without a password) as a remote.

        Raises:
            UsageError: A URL with a password, or a malformed one.
            InvalidRefError: A bad name, or a remote of that name exists.
        """
        return self._remote_call(Remote.from_dict, "remote", "add", "--", name, remote_text(url))

    def remote_remove(self, name: str) -> Remote:
        """Forget a remote and its tracking branches; returns it.

        Raises:
            NotFoundError: No such remote.
        """
        return self._remote_call(Remote.from_dict, "remote", "remove", "--", name)

    def remotes(self) -> list[Remote]:
        """Every remote, by name, with its tracking branches (``origin/main`` -> commit)."""
        return self._remote_call(lambda doc: [Remote.from_dict(row) for row in doc], "remote", "list")

    def fetch(self, remote: str = "origin") -> Fetched:
        """Bring the remote's new commits and move its tracking branches; no local branch moves.

        Raises:
            NotFoundError: No such remote.
            CorruptStoreError: The remote sent an object that does not verify; nothing was written.
        """
        return self._remote_call(Fetched.from_dict, "fetch", "--", remote)

    def push(self, remote: str = "origin", branch: str | None = None, *,
             force_with_lease: bool | str = False) -> Pushed:
        """Send a branch (default the current one) and move the remote's branch to it.

        Args:
            remote: The remote's name.
            branch: The branch to push.
            force_with_lease: ``True`` overwrites a branch that is not a fast-forward only while the
                remote's is still where this store last saw it; a commit id, only while it is there.

        Raises:
            ConflictError: Not a fast-forward (without a lease), or the lease no longer holds; nothing changed.

        On a view: ``branch`` defaults to the view's.
        """
        branch = branch or self._branch
        lease = [] if force_with_lease is False else (
            ["--force-with-lease"] if force_with_lease is True else [f"--force-with-lease={force_with_lease}"])
        return self._remote_call(Pushed.from_dict, "push", *lease, "--", remote, *([branch] if branch else []))

    def pull(
        self,
        remote: str = "origin",
        branch: str | None = None,
        *,
        resolutions: Mapping[str, Resolution] | None = None,
        strategy: MergeStrategy | None = None,
        message: str | None = None,
        author: str | None = None,
        time_ms: int | None = None,
    ) -> Pulled:
        """Fetch, then merge ``remote/branch`` (default the current branch's name) as ``merge`` does.

        A merge that stops on conflicts keeps the fetch and returns them (``pulled.merge.ok`` is false).

        Raises:
            UsageError: On a view, always (the merge records onto HEAD's branch); nothing is fetched.
        """
        self._not_on_view(_MERGE)
        args = [*resolution_flags(resolutions, strategy), *self._record_flags(message, author, time_ms)]
        return self._remote_call(Pulled.from_dict, "pull", *args, "--", remote, *([branch] if branch else []))

    # ------------------------------------------------------------ serving a remote (mnem-mcp's HTTP sync routes)
    def _serving_call(self, parse: Callable[[Any], T], *args: str, payload: str | None = None) -> T:
        """One serving verb; a binary without the ``remotes-http`` feature is a ``ContractError`` naming the fix.

        On a view, serving a remote acts on the whole store, as on the store (its branches are named explicitly).
        """
        self._require("remotes-http")
        return self._read(parse, *args, payload=payload)

    def advertise(self, *, summed: bool = False) -> dict[str, Any]:
        """What this store shows a fetching or pushing peer: ``{"format", "head", "branches": {name: id}}``.

        The document ``mnem upload-pack --advertise --json`` prints, passed on as
        it is: an HTTP server hands it to the peer, which checks it.  With
        ``summed`` (feature ``redaction-ranges``) the redaction records are
        summed up (``"redaction_summary"``) instead of listed, for a peer that
        compares ranges of them (``redaction_ranges``).

        Raises:
            ContractError: ``summed`` with a ``mnem`` that cannot sum them up (no ``redaction-ranges``).
        """
        if summed:
            self._require("redaction-ranges")
            return self._serving_call(dict, "upload-pack", "--advertise", "--redaction-summary")
        return self._serving_call(dict, "upload-pack", "--advertise")

    def redaction_ranges(self, prefixes: Sequence[str]) -> dict[str, Any]:
        """The summary, or the ids, of this store's redaction records in each range (hex prefixes of their ids).

        ``{"spans": [{"count", "digest"} or {"count", "digest", "ids"}]}``, one per prefix, as ``mnem upload-pack
        --redaction-ranges --json`` prints it (feature ``redaction-ranges``): an HTTP server hands it to the peer.

        Raises:
            UsageError: More than 256 prefixes, or one that is not a lower-case hex prefix of at most 64 digits.
            ContractError: A ``mnem`` that cannot answer it (no ``redaction-ranges``).
        """
        self._require("redaction-ranges")
        return self._serving_call(dict, "upload-pack", "--redaction-ranges",
                                  payload=encode_json({"prefixes": list(prefixes)}))

    def receive_redactions(self, pack: os.PathLike[str]) -> dict[str, Any]:
        """Take a page of redaction records, the pack in the file ``pack`` carrying nothing else, in one write.

        Each record is checked as a pushed pack's are before any is applied
        (feature ``redaction-ranges``; ``mnem receive-pack``'s
        ``records_only``); no branch moves.

        Returns:
            ``{"redactions": N}``: the records new to the store.

        Raises:
            CorruptStoreError: The file is not such a page, or a record is refused; nothing was written.
            ContractError: A ``mnem`` that cannot take one (no ``redaction-ranges``).
        """
        self._require("redaction-ranges")
        return self._serving_call(dict, "receive-pack", f"--pack-file={os.fspath(pack)}",
                                  payload=encode_json({"records_only": True}))

    def upload_pack(self, want: Sequence[str], have: Sequence[str]) -> bytes:
        """The pack of the commits reachable from ``want`` and not from ``have`` (full commit ids).

        Raises:
            UsageError: An id that is not a full commit id.
            NotFoundError: A wanted commit is not in this store.
        """
        doc = self._serving_call(dict, "upload-pack", payload=encode_json({"want": list(want), "have": list(have)}))
        return base64.b64decode(doc["pack"])

    def upload_pack_to(self, path: str | os.PathLike[str], want: Sequence[str], have: Sequence[str], *,
                       redactions: Sequence[str] = (), held: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``upload_pack``, written by ``mnem`` to the file ``path`` (created or emptied) as it is made.

        Neither ``mnem`` nor this process holds the pack in memory, so an HTTP
        server can stream a clone of any size from the file (feature ``pack-file``).
        ``redactions`` names objects (from ``advertise``'s ``"redactions"``)
        whose redaction records the pack is to carry (feature ``pack-redactions``).
        ``held`` (``{"count", "digest"}``, feature ``redaction-ranges``): the
        asker holds every record that sums up to it, so the pack leaves out
        the records of its commits' redacted versions while this store's
        records still sum up to it.

        Returns:
            ``{"commits": N, "bytes": N}``.

        Raises:
            UsageError: An id that is not a full commit id, or ``redactions`` not full object ids.
            NotFoundError: A wanted commit is not in this store.
            ContractError: ``redactions`` with a ``mnem`` that cannot carry records (no ``pack-redactions``), or
                ``held`` with one that cannot leave them out (no ``redaction-ranges``).
        """
        self._require("pack-file")
        request: dict[str, Any] = {"want": list(want), "have": list(have)}
        if redactions:
            self._require("pack-redactions")
            request["redactions"] = list(redactions)
        if held is not None:
            self._require("redaction-ranges")
            request["held"] = dict(held)
        return self._serving_call(dict, "upload-pack", f"--pack-file={os.fspath(path)}", payload=encode_json(request))

    def receive_pack(self, pack: bytes | os.PathLike[str], branch: str, old: str | None, new: str, *,
                     force: bool = False, pusher: str | None = None, own_commits_only: bool = False,
                     redactions: bool = True) -> dict[str, Any]:
        """Take a pack and move ``branch`` from ``old`` (None: it must not exist) to ``new``, by compare-and-swap.

        ``pack`` is the pack's bytes, or the path of a file holding it (feature
        ``pack-file``): ``mnem`` then reads it from there value by value, so
        neither process holds it in memory.  ``pusher`` (feature
        ``receive-pusher``) names who sent the push: the store records it with
        the move and the commits it brought, and ``log`` / ``blame`` show it
        beside an author it differs from (``log_attributed``); with
        ``own_commits_only`` a commit ``pusher`` did not author is refused.
        The redaction records a pack carries are applied in the same write;
        ``redactions=False`` (feature ``pack-redactions``: a pusher without
        the right to redact here) refuses a pack bringing any the store lacks.

        Returns:
            ``{"branch", "old", "new", "status", "commits", "objects", "redactions"}`` as ``mnem receive-pack
            --json`` prints it (``"redactions"``: the records new to the store).

        Raises:
            ConflictError: The branch is no longer at ``old``, or the move is not a fast-forward and not forced.
            CorruptStoreError: The pack did not verify; nothing was written.
            InvalidRefError: With ``own_commits_only``, the pack brings a commit ``pusher`` did not author (the
                message names it and its author); nothing was written.
            ContractError: ``pusher`` with a ``mnem`` that cannot record it (no ``receive-pusher`` feature), or
                ``redactions=False`` with one that cannot refuse records (no ``pack-redactions``): nothing is
                run, so no push goes in unrecorded or unchecked.
            UsageError: ``own_commits_only`` without ``pusher``; or, with ``redactions=False``, the pack
                brings a redaction record the store lacks (nothing was written).
        """
        request: dict[str, Any] = {"branch": branch, "old": old, "new": new, "force": force}
        if own_commits_only and pusher is None:
            raise UsageError("own_commits_only compares each commit's author with the pusher: give pusher")
        if not redactions:
            self._require("pack-redactions")
            request["redactions"] = False
        if pusher is not None:
            self._require("receive-pusher")
            request.update(pusher=pusher, own_commits_only=own_commits_only)
        if isinstance(pack, bytes):
            request["pack"] = base64.b64encode(pack).decode("ascii")
            return self._serving_call(dict, "receive-pack", payload=encode_json(request))
        self._require("pack-file")
        return self._serving_call(dict, "receive-pack", f"--pack-file={os.fspath(pack)}", payload=encode_json(request))

    def blame(self, node_id: str, at: str | None = None) -> Blame:
        """The commit that introduced the node's value at ``at`` (default HEAD).

        Args:
            node_id: The node id.
            at: A commit-ish.

        Returns:
            The blame; ``time`` is the node's event time if set, else the commit's.

        Raises:
            InvalidRefError: The node is absent there, or there is no commit.

        On a view: ``at`` defaults to its branch.
        """
        return self.blame_with_author(node_id, at)[0]

    def blame_with_author(self, node_id: str, at: str | None = None) -> tuple[Blame, str | None]:
        """``blame``, and the author of the commit it names, from the same one ``mnem blame``.

        The author is beside the ``Blame`` rather than in it, so ``Blame`` and
        its ``to_dict()`` stay upstream's ``{commit, node, time}``.

        Args:
            node_id: The node id.
            at: A commit-ish.

        Returns:
            The blame, and that commit's author (``None`` from a ``mnem`` that does not report one).

        Raises:
            InvalidRefError: The node is absent there, or there is no commit.

        On a view: ``at`` defaults to its branch.
        """
        blame, author, _ = self.blame_attributed(node_id, at)
        return blame, author

    def blame_attributed(self, node_id: str, at: str | None = None) -> tuple[Blame, str | None, Pusher | None]:
        """``blame_with_author``, and who pushed that commit into the store where that was not its author.

        Args:
            node_id: The node id.
            at: A commit-ish.

        Returns:
            The blame, that commit's author (``None`` from a ``mnem`` that does not report one), and its pusher
            (``None`` when no one but its author brought it here).

        Raises:
            InvalidRefError: The node is absent there, or there is no commit.

        On a view: ``at`` defaults to its branch.
        """
        at = self._at(at)
        return self._read(read_blame, "blame", "--", node_id, *([] if at is None else [at]))

    def bisect(
        self,
        predicate: Predicate | None = None,
        *,
        node: str | None = None,
        equals: Any = UNSET,
        absent: bool = False,
        present: bool = False,
        good: str | None = None,
        bad: str | None = None,
    ) -> str:
        """The first commit on ``bad``'s first-parent history where a condition holds.

        Two forms.  ``node=`` with exactly one of ``equals=`` (any JSON value,
        ``None`` meaning null), ``absent=True`` or ``present=True`` is one
        ``mnem bisect`` invocation.  A ``predicate`` over ``{id: MemoryNode}``
        runs here: one ``log --first-parent`` plus O(log n) ``show`` reads.

        Args:
            predicate: False at ``good``, true at ``bad`` (assumed monotonic).
            node: The node the helper form tests.
            equals: The content the node must have.
            absent: The node must be absent.
            present: The node must be present.
            good: Where the condition is false (default: the root of the chain).
            bad: Where it is true (default HEAD; on a view, its branch).

        Returns:
            The first commit where the condition holds.

        Raises:
            UsageError (a ValueError): Not exactly one form, or not exactly one helper condition.
            InvalidRefError: Upstream's preconditions (see ``mnem bisect``).
        """
        if (predicate is None) == (node is None):
            raise UsageError("bisect needs exactly one of a predicate or node=")
        bad = self._at(bad)
        if predicate is not None:
            if equals is not UNSET or absent or present:
                raise UsageError("equals=, absent= and present= go with node=, not with a predicate")
            return self._bisect_locally(predicate, good, bad)
        return self.bisect_explain(str(node), equals=equals, absent=absent, present=present, good=good, bad=bad)[0]

    def bisect_explain(
        self,
        node: str,
        *,
        equals: Any = UNSET,
        absent: bool = False,
        present: bool = False,
        good: str | None = None,
        bad: str | None = None,
        include_root: bool = False,
    ) -> tuple[str, Blame | None]:
        """``bisect``'s helper form, also returning the blame at the commit found.

        Args:
            node: The node to test.
            equals: The content it must have (``None`` is JSON null).
            absent: It must be absent.
            present: It must be present.
            good: Where the condition is false (default: the root of the chain).
            bad: Where it is true (default HEAD; on a view, its branch).
            include_root: With no ``good``, the root of the chain is a candidate
                too: when the condition already holds there, the root is the
                answer instead of an ``InvalidRefError`` (the engine's
                ``mnem bisect --include-root`` extension).

        Returns:
            ``(commit, blame of node there)``; the blame is ``None`` when the node is absent.

        Raises:
            UsageError (a ValueError): Not exactly one of ``equals``/``absent``/``present``,
                or ``include_root`` with ``good``.
            InvalidRefError: Upstream's preconditions.
        """
        if (equals is not UNSET) + absent + present != 1:
            raise UsageError("bisect by node needs exactly one of equals=, absent=True or present=True")
        if include_root and good is not None:
            raise UsageError("include_root= goes without good= (it makes the root itself a candidate)")
        bad = self._at(bad)
        args = ["bisect", f"--node={node}"]
        if equals is not UNSET:
            args.append(f"--equals={encode_json(equals)}")
        else:
            args.append("--absent" if absent else "--present")
        if good is not None:
            args.append(f"--good={good}")
        if include_root:
            args.append("--include-root")
        return self._read(read_found, *args, "--", *([] if bad is None else [bad]))

    def _bisect_locally(self, predicate: Predicate, good: str | None, bad: str | None) -> str:
        chain = self._first_parent_chain(bad)
        good_id = chain[0] if good is None else self.resolve(good)
        return first_commit_where(chain, good_id, lambda commit: predicate(self.state_at(commit)))

    def _first_parent_chain(self, bad: str | None) -> list[str]:
        """``bad`` (default HEAD) and its first-parent ancestors, oldest first.

        One ``log --first-parent`` from HEAD covers the usual case; a ``bad``
        off that chain (another branch) is walked from an export, the only
        other document that carries parents.
        """
        history = [c.id for c in self.log(first_parent=True)]
        if bad is None:
            if not history:
                raise InvalidRefError("invalid ref: cannot bisect: HEAD has no commit")
            return history[::-1]
        bad_id = self.resolve(bad)
        if bad_id in history:
            return history[history.index(bad_id) :][::-1]
        objects = self.export()["objects"]
        chain = [bad_id]
        while objects[chain[-1]]["parents"]:
            chain.append(objects[chain[-1]]["parents"][0])
        return chain[::-1]

    # ------------------------------------------------------------ writes without staging
    def write(
        self,
        puts: Iterable[Mapping[str, Any]] = (),
        deletes: Iterable[str] = (),
        *,
        message: str,
        author: str | None = None,
        time_ms: int | None = None,
        skip_missing: bool = False,
        branch: str | None = None,
        allow_reserved: bool = False,
        erase_deleted: str | None = None,
        erase_prefix: str | None = None,
        plain_vacuum: bool = False,
        orphan: bool = False,
    ) -> tuple[Commit | None, dict[str, str]]:
        """Apply puts then deletes to the branch tip as exactly one commit (``mnem write``).

        Staged changes are neither included nor disturbed, and concurrent
        writers cannot lose each other's work (the write is one transaction
        on the tip, not on what was read before).  ``branch`` writes on that
        branch (created as a root if absent) and leaves HEAD where it is, so
        a writer can keep its commits apart without switching anyone else's
        branch.

        Args:
            puts: Mappings with ``id`` and ``content``, and optionally
                ``content_kind``, ``source``, ``step``, ``observation``,
                ``tool_call``, ``note``, ``event_time`` (``None`` values are dropped),
                and ``if_absent=True`` to apply the put only if the tip has no node of
                that id (decided in the write's transaction: no read first).
            deletes: Node ids to delete.
            message: The commit message.
            author: As for ``commit``.
            time_ms: As for ``commit``.
            skip_missing: Ignore deletions of ids not in memory.
            branch: The branch to write (default: HEAD's); sent as ``--branch`` only when given.
            allow_reserved: Write reserved ids (``reserved``: a LangGraph checkpoint's nodes), which ``mnem
                write`` refuses otherwise; ``MnemosyneSaver`` passes it, nothing an agent drives should.  Sent
                as ``--allow-reserved`` to a binary that lists ``write-reserved``; one that does not refuses
                no id, so it gets no flag.
            erase_deleted: A reason: in the write's own transaction, also redact every version in history of
                each id of ``deletes`` (as ``redact(nodes=...)``), recorded as removed by the write's author
                for this reason (``mnem write --erase-deleted``).  A crash leaves the write and the erasure
                both, or neither.  An erasure another process's read held up is logged as a warning (the
                write stands and no read answers the bytes; docs/cli-json.md says what to run).
            erase_prefix: With ``erase_deleted``: also every version of every node whose id starts with this.
            plain_vacuum: With ``erase_deleted``, on PostgreSQL: a plain ``VACUUM`` after the commit rather than a
                rewrite of the tables, so the old row versions keep the bytes until later rows overwrite them
                (for keeping a store small, not for an erasure request: docs/postgres.md).
            orphan: Make the commit a root (no parent) holding the same state, so the branch lets go of its
                history and ``gc`` can drop it once nothing else reaches it (``mnem write --orphan``).  The
                change kinds are then the root's: every node of the state ``added``.

        Returns:
            ``(commit, {node id: change kind})``; ``(None, {})`` when nothing was left to do.

        Raises:
            UsageError: A reserved id without ``allow_reserved`` (a binary with ``write-reserved``); on a view, a
                ``branch`` other than the view's.
            InvalidRefError: A delete of an absent id (without ``skip_missing``), or a bad ``branch`` name.
            BusyError: Another writer held the store too long.
            ContractError: ``branch`` with a ``mnem`` that does not list the ``write-branch`` feature,
                or an ``if_absent`` put with one that does not list ``write-if-absent``, or ``erase_deleted``
                with one that does not list ``write-erase``, or ``orphan`` with one that does not list
                ``write-orphan``.

        On a view: the write lands on the view's branch (``branch`` defaults to it; another is refused).
        """
        if self._branch is not None and branch not in (None, self._branch):
            raise UsageError(f"a view on branch {self._branch!r} (Store.on) writes on that branch, not on {branch!r}; "
                             f"use on({branch!r}) or the store itself")
        branch = self._at(branch)
        sent = [write_put(index, item) for index, item in enumerate(puts)]
        if any(put.get("if_absent") for put in sent):
            self._require("write-if-absent")
        payload = {"put": sent, "delete": list(deletes)}
        args = ["write", *self._record_flags(message, author, time_ms)]
        if skip_missing:
            args.append("--skip-missing")
        if allow_reserved and "write-reserved" in self._client.binary.features:
            args.append("--allow-reserved")
        if branch is not None:
            self._require("write-branch")
            args.append(f"--branch={branch}")
        if orphan:
            self._require("write-orphan")
            args.append("--orphan")
        if erase_deleted is None:
            if erase_prefix is not None or plain_vacuum:
                raise UsageError("erase_prefix= and plain_vacuum= go with erase_deleted=REASON")
            return self._read(read_written, *args, payload=encode_json(payload))
        self._require("write-erase")
        args.append(f"--erase-deleted={erase_deleted}")
        if erase_prefix is not None:
            args.append(f"--erase-prefix={erase_prefix}")
        if plain_vacuum:
            args.append("--plain-vacuum")
        doc = self._read(dict, *args, payload=encode_json(payload))
        residue = doc["erased"]["residue"]
        if residue and not plain_vacuum:  # PostgreSQL then always leaves one: the caller asked for it
            logger.warning("write %r (erasing: %s): %s", message, erase_deleted, residue)
        return read_written(doc)

    # ------------------------------------------------------------ garbage collection
    def gc(self, *, dry_run: bool = False, plain_vacuum: bool = False) -> Collected:
        """Drop the commits and objects nothing reaches any more, and give their space back (``mnem gc``).

        A commit is kept while a branch, HEAD or a remote's tracking branch
        reaches it; what kept commits need, staged values and redacted
        versions (with their records) are kept too.  A deleted branch's
        commits (a thrown-away ``replay/...``) are what goes.  It waits for
        writes under way and holds new ones off while it runs (past the busy
        timeout either way: ``BusyError``).  On a view: the same, store-wide.

        Args:
            dry_run: Count what would go, and change nothing.
            plain_vacuum: Leave the files their size, for later writes to reuse the space (SQLite: no
                ``VACUUM``; PostgreSQL: a plain one, which holds no reader up): what a store kept at a steady
                size wants (``mnem gc --plain-vacuum``).

        Returns:
            How many commits and objects went (or would), and the store's size in bytes before and after.

        Raises:
            BusyError: Another writer held the store past the busy timeout; call it again.
            CorruptStoreError: A branch or a parent names a commit the store lacks; nothing was dropped.
            ContractError: A ``mnem`` that does not list the ``gc`` feature (``gc-plain`` with ``plain_vacuum``).
        """
        self._require("gc-plain" if plain_vacuum else "gc")
        return self._read(Collected.from_dict, "gc", *(["--dry-run"] if dry_run else []),
                          *(["--plain-vacuum"] if plain_vacuum else []))

    # ------------------------------------------------------------ export / import
    def export(self) -> dict[str, Any]:
        """The whole store (every object, ref and HEAD) in upstream's export format.  On a view: the same."""
        return self._read(dict, "export")

    @classmethod
    def import_(
        cls, path: str | os.PathLike[str], data: Mapping[str, Any] | str, *, client: Mnem | None = None
    ) -> Store:
        """Create a new store at ``path`` from an export (fed on stdin to ``mnem import -``).

        Args:
            path: Where to create it.
            data: An export, as returned by ``export()`` or as JSON text.
            client: How to run ``mnem`` (default: a new ``Mnem()``).

        Returns:
            The new store (commit ids are preserved).

        Raises:
            StoreExistsError: A store exists there.
            CorruptStoreError: The export does not hash to its ids.
        """
        store = cls(Path(path).absolute(), client=client)
        store._call("import", "-", payload=data if isinstance(data, str) else encode_json(data))
        return store


