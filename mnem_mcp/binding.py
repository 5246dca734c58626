"""Which store a server serves, and a fresh bridge ``Store`` for every call.

ADR-0016 binds one store per server process.  Its location comes from
``--store``, else ``$MNEM_STORE``, else a per-user default store, so that
``mnem-mcp`` with no arguments just works.  A store that does not exist yet
is created on first use (``mnem-mcp`` start-up), by one rule with two
exceptions:

* the default store is created with any missing parent folders (it lives
  in the user's data folder, which may not exist yet);
* an explicit folder (``--store``, ``$MNEM_STORE``) is created only where
  nothing else is: a new folder whose parent exists, or an empty folder of
  yours (``mnem_bridge.open(create=True)``).  A file, a folder already
  holding other files, or a path inside another store is refused with a
  message saying what to do, so a typo cannot start an empty memory inside
  an unrelated project or beside the store that was meant;
* a store in PostgreSQL is created only when asked (``--create``): a typo in
  ``store=`` would otherwise start an empty memory on a server that many
  agents share, and the ``no_store`` answer names the stores there are.

Until the store has been opened once (``StoreBinding.settle``), every call
tries that first use again, so each answers what start-up logged: why the
store cannot be used and the fix, not the engine's generic "no store here"
(whose ``mnem init`` fails inside another store).  Once the fix is made
(``mnem init`` there, the missing folder made, the folder given to the
server's user) the next call opens or creates the store, without a restart.

An MCP client starts the server in a working directory of its choosing
(Claude Desktop: ``/``), so a relative ``--store``/``$MNEM_STORE`` is taken
against the working directory only where that can be what the user meant:
when the working directory is the filesystem root or a folder this user
cannot write to, it is refused (``locate_store``), naming the absolute path
to give instead.  A leading ``~`` is expanded, as a shell would: a client
config is not read by a shell.

The server keeps no store state between calls: each call opens the store
through the bridge (a path walk for a folder, nothing at all for a URL: no process) and runs its ``mnem``
invocations; only the bridge client that runs them is shared.  Branch state
lives in the store's HEAD, so a ``switch`` is seen by the next call, and a
store that was broken at start-up and is later repaired simply starts
working.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Concatenate, Literal, ParamSpec, Protocol, TypeVar
from urllib.parse import parse_qs, urlsplit

import platformdirs

import mnem_bridge

__all__ = [
    "APP_NAME", "Binding", "Origin", "StoreBinding", "StoreLocation", "default_store_path", "locate_store",
    "resolve_store_path", "store_internals",
]

logger = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

#: The platformdirs application name of the per-user data directory.
APP_NAME = "mnemosyne"

#: Which rule chose a store's location (``locate_store``).
Origin = Literal["--store", "MNEM_STORE", "default"]


def default_store_path() -> Path:
    r"""The per-user default store: ``<user data dir>/mnemosyne/default``.

    Returns:
        e.g. ``~/.local/share/mnemosyne/default`` on Linux (``$XDG_DATA_HOME``
        wins), ``~/Library/Application Support/mnemosyne/default`` on macOS,
        ``%LOCALAPPDATA%\mnemosyne\default`` on Windows.
    """
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "default"


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """Where the store is and which rule chose it.

    Attributes:
        path: The store's root, absolute (or its ``.mnem`` folder), or a PostgreSQL store's URL.
        origin: ``"--store"``, ``"MNEM_STORE"`` or ``"default"``.
        refused: Why the path is not used (a relative path where the working directory cannot be what was
            meant), with the fix; ``None`` when it is used.
    """

    path: Path | mnem_bridge.StoreUrl
    origin: Origin
    refused: str | None = None


def locate_store(
    explicit: str | os.PathLike[str] | mnem_bridge.StoreUrl | None, environ: Mapping[str, str] = os.environ,
) -> StoreLocation:
    """Apply the resolution order: ``--store``, then ``$MNEM_STORE``, then the default store.

    Args:
        explicit: The ``--store`` argument (or ``build_server``'s ``store_path``), if any.
        environ: The environment to read ``MNEM_STORE`` from.

    Returns:
        The location and its origin; ``refused`` says why a relative path is
        not used (the working directory is the filesystem root or not yours
        to write), and is reported as ``no_store`` by every call.
    """
    if explicit is not None:
        return _explicit(explicit, "--store")
    if environ.get("MNEM_STORE"):
        return _explicit(environ["MNEM_STORE"], "MNEM_STORE")
    return StoreLocation(default_store_path(), "default")


def resolve_store_path(explicit: str | os.PathLike[str] | None = None) -> str:
    """Upstream's helper: the store ``mnem-mcp`` would serve, as text (``locate_store``'s order).

    Args:
        explicit: The ``--store`` argument, if any.

    Returns:
        ``explicit``, else ``$MNEM_STORE``, else the per-user default store (upstream's last resort is ``.``),
        absolute; a PostgreSQL store's URL as given, without its password.

    Raises:
        mnem_bridge.NoStoreError: A relative path where the working directory cannot be what was meant.
    """
    location = locate_store(explicit)
    if location.refused is not None:
        raise mnem_bridge.NoStoreError(location.refused)
    return str(location.path)


def _explicit(
    given: str | os.PathLike[str] | mnem_bridge.StoreUrl, origin: Literal["--store", "MNEM_STORE"],
) -> StoreLocation:
    """An explicit store's location: a URL as given, a path with ``~`` expanded and made absolute.

    A relative path is taken against the working directory, unless that is
    the filesystem root or a folder this user cannot write to: an MCP client
    chose it, not the user (Claude Desktop starts servers in ``/``), so
    ``./agent-memory`` would silently become ``/agent-memory``.
    """
    address = mnem_bridge.store_address(given)
    if isinstance(given, mnem_bridge.StoreUrl) or isinstance(address, mnem_bridge.StoreUrl):
        return StoreLocation(address, origin)
    text = os.fspath(given)
    path = Path(text).expanduser()
    if path.is_absolute():
        return StoreLocation(path, origin)
    cwd = Path.cwd()
    where = "the filesystem root" if cwd == Path(cwd.anchor) else None
    if where is None and not os.access(cwd, os.W_OK):
        where = "a folder you cannot write to"
    if where is None:
        return StoreLocation(cwd / path, origin)
    flag = "--store " if origin == "--store" else "MNEM_STORE="
    return StoreLocation(cwd / path, origin, refused=(
        f"{origin} {text} is a relative path, and mnem-mcp was started in {cwd}, {where} (an MCP "
        f"client chooses the working directory: Claude Desktop uses /), so it would name {cwd / path}; give the "
        f"store's absolute path in the client's config instead, e.g. {flag}{Path.home() / path}"
    ))


def store_internals(path: Path | mnem_bridge.StoreUrl) -> list[str]:
    """Texts that show where a store is: its folder as given and as resolved, or a PostgreSQL store's schema.

    A URL itself needs no entry: ``errors.Redaction`` leaves out every
    PostgreSQL URL it finds.

    Args:
        path: The store's folder or URL.

    Returns:
        The texts.
    """
    if isinstance(path, mnem_bridge.StoreUrl):
        return [f"mnem_{name}" for name in parse_qs(urlsplit(path.url).query).get("store", []) if name]
    return [str(path), os.path.realpath(path)]


class Binding(Protocol):
    """What the tools and resources call a store through: one ``StoreBinding``, or ``tenants.StoreRouter``'s many."""

    async def call(self, fn: Callable[Concatenate[mnem_bridge.Store, P], T], /, *args: P.args,
                   **kwargs: P.kwargs) -> T:
        """``fn(store, *args, **kwargs)`` on the current request's store."""
        ...

    def open(self) -> AbstractContextManager[mnem_bridge.Store]:
        """The current request's store, for one call."""
        ...

    def binding_for_request(self) -> StoreBinding:
        """The binding of the current request's store (what an HTTP route resolves its store by)."""
        ...

    def internals(self) -> list[str]:
        """Texts that show where the current request's store (and the server's stores) and the binary are."""
        ...

    def close(self) -> None:
        """End every ``mnem`` worker (at the end of the server's life)."""
        ...


class StoreBinding:
    """How every call reaches the store: its path, and one bridge client shared by all calls.

    The client (``mnem_bridge.Mnem``) keeps one ``mnem serve`` worker alive
    across calls, so a call costs a request, not a Python start-up; the
    worker serialises requests, so calls on worker threads may share it.  It
    is created on first use, and again after a failure to create it, so a
    ``mnem`` that is missing at start-up is picked up once it appears.

    Args:
        path: The store's root, exactly (nothing walks up from an explicit store).
        binary: The ``mnem`` to run (``None``: the bridge's lookup, ``$MNEM_BIN`` then PATH).
        timeout: Seconds one ``mnem`` invocation may take before it is killed.
        create: Create a PostgreSQL store that does not exist yet (``mnem-mcp --create``); a folder is
            created on first use without it (``create``).
        refused: Why ``path`` is not used (``StoreLocation.refused``): every call then answers ``no_store``
            with it.
        origin: Which rule chose ``path`` (``StoreLocation.origin``): the store is created on its first use
            (``settle``).  ``None`` (``build_server``'s own binding): it is used as it is, never created.
    """

    def __init__(
        self, path: Path | mnem_bridge.StoreUrl, binary: str | None = None,
        timeout: float = mnem_bridge.DEFAULT_TIMEOUT, *, create: bool = False, refused: str | None = None,
        origin: Origin | None = None,
    ) -> None:
        self.path = path
        self.binary = binary
        self.timeout = timeout
        self.create_url = create
        self.refused = refused
        self.origin = origin
        self._settled = origin is None  # whether the store has been opened once (settle), or is never created
        self._client: mnem_bridge.Mnem | None = None
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._ready.set()
        self._starting = threading.local()

    def start(self, prepare: Callable[[StoreBinding], None]) -> None:
        """Run ``prepare`` (create the store on first use, check it, start the worker) on a thread of its own.

        ``mnem-mcp`` calls this before it imports the MCP SDK, so the
        ``mnem`` processes start on the machine's other core while the server
        loads, instead of one after another.  Calls (``open``) wait until
        ``prepare`` has finished, so none can run before the store exists.
        """
        self._ready.clear()

        def run() -> None:
            self._starting.active = True
            try:
                prepare(self)
            finally:
                self._ready.set()

        threading.Thread(target=run, name="mnem-mcp-start", daemon=True).start()

    def __repr__(self) -> str:
        return f"StoreBinding(path={str(self.path)!r}, binary={self.binary!r}, timeout={self.timeout!r})"

    async def started(self) -> None:
        """Wait until ``start``'s ``prepare`` has finished, without holding up the event loop."""
        if not self._ready.is_set():
            import anyio.to_thread  # here, not at the top: this module is imported before start-up begins

            await anyio.to_thread.run_sync(self._ready.wait)

    async def call(self, fn: Callable[Concatenate[mnem_bridge.Store, P], T], /, *args: P.args,
                   **kwargs: P.kwargs) -> T:
        """``fn(store, *args, **kwargs)`` on a store opened for this call (``open``), e.g. ``call(Store.log, limit=5)``.

        It runs on the event loop's thread, its waits for ``mnem`` awaited
        (``mnem_bridge.run_inline``), not on a worker thread: handing a call
        to a thread and its result back costs two thread wake-ups, 150 us a
        call on a virtual machine, more than the worker takes to answer a read.

        Returns:
            What ``fn`` returns.

        Raises:
            mnem_bridge.MnemError: No binary, no store, or the binary's own error.
        """

        def open_and_call() -> T:
            with self.open() as store:
                return fn(store, *args, **kwargs)

        await self.started()
        return await mnem_bridge.run_inline(open_and_call)

    @contextmanager
    def open(self) -> Iterator[mnem_bridge.Store]:
        """A store for one call (it does not close the shared client).

        Yields:
            The open store.

        Raises:
            mnem_bridge.MnemError: No binary, no store, or the binary's own error.
        """
        if not getattr(self._starting, "active", False):
            self._ready.wait()
        self._check_refused()
        if not self._settled:
            self.settle()  # the store's first use, again: it raises why the store cannot be used, as start-up logged
        with self._exact() as store:
            yield store

    def settle(self) -> str:
        """The store's first use: open it, creating it first where the rule allows (``create``); its HEAD.

        Start-up runs this (``mnem-mcp``: ``cli``), and until it has succeeded
        once, every call runs it again (``open``), so a call answers the error
        start-up logged, and a fix made meanwhile is seen by the next call.  A
        store that goes missing after it has been used is not created again:
        its memory is gone, and an empty store in its place would hide that.

        Returns:
            HEAD (one ``mnem`` call, which also proves the binary and the store work).

        Raises:
            mnem_bridge.MnemError: The store cannot be used: the message says why and what to do.
        """
        self._check_refused()
        try:
            head = self._head()
        except mnem_bridge.NoStoreError:
            self.created(self.create(parents=self.origin == "default"))
            head = self._head()
        self._settled = True
        return head

    def created(self, root: Path | mnem_bridge.StoreUrl) -> None:
        """Log that ``settle`` created the store (``tenants.TenantBinding`` says whose store it is)."""
        if self.origin == "default":
            logger.info("created the default store at %s (use --store or MNEM_STORE for another)", root)
        else:
            logger.info("created a new store at %s (from %s): nothing was there yet", root, self.origin)

    def _head(self) -> str:
        with self._exact() as store:
            return store.head()

    def _exact(self) -> mnem_bridge.Store:
        """The store at ``path`` exactly, through the shared client (a path walk, or nothing at all for a URL)."""
        return mnem_bridge.open(self.path, client=self._mnem(), exact=True)

    def create(self, *, parents: bool = False) -> Path | mnem_bridge.StoreUrl:
        """Create the store at ``path`` on its first use.

        Args:
            parents: The per-user default store: create it with any missing
                parent folders.  Otherwise ``mnem_bridge.open(create=True)``'s
                rule applies: only a new folder whose parent exists, or an
                empty folder of yours; and a PostgreSQL store only with
                ``create`` (without it, this raises the ``no_store`` that
                names the stores the database holds).

        Returns:
            The store's root.

        Raises:
            mnem_bridge.NoStoreError: ``path`` is refused (the message says why and what to do).
            mnem_bridge.MnemError: It could not be created.
        """
        self._check_refused()
        if parents:
            return mnem_bridge.init(self.path, client=self._mnem()).root
        create = self.create_url or not isinstance(self.path, mnem_bridge.StoreUrl)
        with mnem_bridge.open(self.path, client=self._mnem(), create=create) as store:  # the shared client stays open
            if not create:
                store.head()  # the engine's no_store, naming the database's stores; or it was created meanwhile
            return store.root

    def binding_for_request(self) -> StoreBinding:
        """This binding: one store serves every request (``tenants.StoreRouter`` picks one per request instead).

        Returns:
            ``self``.
        """
        return self

    def internals(self) -> list[str]:
        """Texts that show where this store and its binary are, which a remote client is never told.

        ``errors.Redaction`` leaves them out of what it tells: the folder (as
        given and as resolved), a PostgreSQL store's schema (its URL is left
        out wherever it appears), and the binary (``--mnem``, and the one the
        bridge found on first use).

        Returns:
            The texts.
        """
        found = store_internals(self.path)
        with self._lock:
            client = self._client
        for binary in (self.binary, None if client is None else client.path):
            if binary:
                found += [str(binary), os.path.realpath(binary)]
        return found

    def worker_pid(self) -> int | None:
        """The process id of this binding's ``mnem serve`` worker, when one is running (for the log and tests)."""
        with self._lock:
            client = self._client
        pid = None if client is None else getattr(client.runner, "pid", None)
        return pid if isinstance(pid, int) else None

    def _check_refused(self) -> None:
        """Raise ``no_store`` with the reason when the path is refused (``StoreLocation.refused``)."""
        if self.refused is not None:
            raise mnem_bridge.NoStoreError(self.refused)

    def close(self) -> None:
        """End the shared client's worker; a later call starts a new one."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _mnem(self) -> mnem_bridge.Mnem:
        with self._lock:
            if self._client is None:
                client = mnem_bridge.Mnem(self.binary, timeout=self.timeout)
                client.runner  # noqa: B018 - pick worker or one-shot now, so first calls in parallel share one
                self._client = client
            return self._client
