"""Where a store is: an explicit root or URL, or discovery from the current folder.

A store lives in a folder (SQLite, the default) or in a PostgreSQL database,
named by a ``postgresql://`` URL (``layout.StoreUrl``) wherever a folder is accepted.

An explicit store (``-C``/``--store``, ``MNEM_STORE``, a path given to the
bridge, the MCP server or the LangGraph store) names the store's root
exactly, or its ``.mnem`` folder: nothing walks up from it, so a typo or a
missing store can never silently land in a store further up.  Only
discovery from the current folder walks up, as git does, and like git's
``safe.directory`` it refuses a store that belongs to another user.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from .errors import ForeignStoreError, NoStoreError
from .layout import StoreUrl
from .sqlite import MNEM_DIR

__all__ = ["Address", "address", "discover_root", "exact_root", "make_private_dirs", "remove_made_dirs"]

#: Where a store is: a folder (SQLite) or a URL (PostgreSQL).
Address = Path | StoreUrl


@lru_cache(maxsize=256)
def address(text: str) -> Address:
    """A store address as a user typed it: a ``postgresql://`` or ``postgres://`` URL, else a path.

    Remembered per text: a worker is handed the same ``-C`` request after
    request, and the one object keeps its hash for the worker's store cache.
    """
    if text.startswith(("postgresql://", "postgres://")):
        return StoreUrl.parse(text)
    return Path(text)


def exact_root(path: Path) -> Path:
    """The store root ``path`` names: the folder holding ``.mnem``, or that ``.mnem`` folder itself.

    Raises:
        NoStoreError: No store exactly there (the message says how to create one, or, when ``path`` lies inside
            another store, that store: ``mnem init`` makes none inside another).
    """
    here = path.absolute()
    if here.name == MNEM_DIR and here.is_dir():
        return here.parent
    if (here / MNEM_DIR).is_dir():
        return here
    outer = next((str(parent) for parent in here.parents if (parent / MNEM_DIR).is_dir()), None)
    raise NoStoreError(str(here), exact=True, inside=outer)


def discover_root(start: Path) -> Path:
    """The nearest store at or above ``start`` that the current user owns (or ``start``'s own store).

    Raises:
        NoStoreError: None at or above ``start``.
        ForeignStoreError: The nearest one above ``start`` belongs to another user.
    """
    here = start.absolute()
    if here.name == MNEM_DIR and here.is_dir():
        return here.parent
    for candidate in (here, *here.parents):
        mnem_dir = candidate / MNEM_DIR
        if mnem_dir.is_dir():
            owner = mnem_dir.stat().st_uid
            if owner != os.geteuid():
                raise ForeignStoreError(str(candidate), owner)
            return candidate
    raise NoStoreError(str(here))


def make_private_dirs(path: Path) -> list[Path]:
    """Create ``path`` and its missing ancestors owner-only (0700); folders that exist keep their mode.

    ``mkdir(parents=True)`` gives ancestors the umask's mode, so under a
    permissive umask a store's new folders (the MCP server's default store
    among them) would let another local user replace its ``.mnem``.

    Returns:
        The folders this call created, deepest first: what a caller that
        fails afterwards removes (``remove_made_dirs``), and nothing else.
    """
    missing = []
    while not path.is_dir():
        missing.append(path)
        path = path.parent
    made: list[Path] = []
    try:
        for folder in reversed(missing):
            try:
                folder.mkdir(mode=0o700)
            except FileExistsError:
                if not folder.is_dir():
                    raise
                continue  # made meanwhile by someone else: theirs, not ours to remove
            made.insert(0, folder)
    except BaseException:
        remove_made_dirs(made)
        raise
    return made


def remove_made_dirs(made: list[Path]) -> None:
    """Remove the folders ``make_private_dirs`` created, deepest first, each only while it is still empty.

    ``rmdir`` refuses a folder that holds anything, so what another process
    put there meanwhile stays, and so does every folder above it.
    """
    for folder in made:
        try:
            folder.rmdir()
        except OSError:
            return
