"""Which store a server serves, and a fresh bridge ``Store`` for every call.

ADR-0016 binds one store per server process.  Its location comes from
``--store``, else ``$MNEM_STORE``, else a per-user default store (created on
first use) so that ``mnem-mcp`` with no arguments just works.  An explicit
location is never created: a typo there should fail loudly (``no_store``),
not start an empty memory somewhere unexpected.

The server keeps no store state between calls: each call opens the store
through the bridge (a path walk, no process), runs its ``mnem``
invocations, and closes it.  Branch state lives in the store's HEAD, so a
``switch`` is seen by the next call, and a store that was broken at start-up
and is later repaired simply starts working.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import mnem_bridge
import platformdirs

__all__ = ["APP_NAME", "StoreLocation", "StoreBinding", "default_store_path", "locate_store"]

logger = logging.getLogger(__name__)

#: The platformdirs application name of the per-user data directory.
APP_NAME = "mnemosyne"


def default_store_path() -> Path:
    """The per-user default store: ``<user data dir>/mnemosyne/default``.

    Returns:
        e.g. ``~/.local/share/mnemosyne/default`` on Linux (``$XDG_DATA_HOME``
        wins), ``~/Library/Application Support/mnemosyne/default`` on macOS,
        ``%LOCALAPPDATA%\\mnemosyne\\default`` on Windows.
    """
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "default"


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """Where the store is and which rule chose it.

    Attributes:
        path: An absolute path at or below the store's root.
        origin: ``"--store"``, ``"MNEM_STORE"`` or ``"default"``.
    """

    path: Path
    origin: Literal["--store", "MNEM_STORE", "default"]


def locate_store(explicit: str | os.PathLike[str] | None, environ: Mapping[str, str] = os.environ) -> StoreLocation:
    """Apply the resolution order: ``--store``, then ``$MNEM_STORE``, then the default store.

    Args:
        explicit: The ``--store`` argument, if any.
        environ: The environment to read ``MNEM_STORE`` from.

    Returns:
        The location and its origin.
    """
    if explicit is not None:
        return StoreLocation(Path(explicit).absolute(), "--store")
    if environ.get("MNEM_STORE"):
        return StoreLocation(Path(environ["MNEM_STORE"]).absolute(), "MNEM_STORE")
    return StoreLocation(default_store_path(), "default")


@dataclass(frozen=True, slots=True)
class StoreBinding:
    """How every call reaches the store: its path, the ``mnem`` binary and the per-invocation timeout.

    Attributes:
        path: Where the store is (``open`` walks up from here to the nearest ``.mnem``).
        binary: The ``mnem`` to run (``None``: the bridge's lookup, ``$MNEM_BIN`` then PATH).
        timeout: Seconds one ``mnem`` invocation may take before it is killed.
    """

    path: Path
    binary: str | None = None
    timeout: float = mnem_bridge.DEFAULT_TIMEOUT

    @contextmanager
    def open(self) -> Iterator[mnem_bridge.Store]:
        """A store for one call, closed afterwards.

        Yields:
            The open store.

        Raises:
            mnem_bridge.MnemError: No binary, no store, or the binary's own error.
        """
        with mnem_bridge.Mnem(self.binary, timeout=self.timeout) as client:
            with mnem_bridge.open(self.path, client=client) as store:
                yield store

    def create(self) -> Path:
        """Create the store at ``path`` (the default store's first use).

        Returns:
            The new store's root.

        Raises:
            mnem_bridge.MnemError: It could not be created.
        """
        with mnem_bridge.Mnem(self.binary, timeout=self.timeout) as client:
            return mnem_bridge.init(self.path, client=client).root
