"""Where a store is, and where one may be created: path rules only, no ``mnem`` run.

``open`` finds a store by walking up from a folder, as git does (the
binary's own discovery, done here without a process spawn), refuses one
another user owns that it only found by walking up, and creates one on
first use only where ``creation_refused`` allows it (docs/bridge.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from .errors import NoStoreError

__all__ = ["MNEM_DIR", "check_owner", "creation_refused", "find_root"]

#: The directory that marks a store's root (upstream's layout).
MNEM_DIR: Final = ".mnem"


def find_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that holds a ``.mnem`` directory.

    This is the binary's own discovery from the current folder (upstream's
    ``open`` walks up like git); doing it here keeps ``open()`` free of a
    process spawn.

    Args:
        start: An absolute path.

    Returns:
        The store's root, or ``None``.
    """
    return next((p for p in (start, *start.parents) if (p / MNEM_DIR).is_dir()), None)


def check_owner(root: Path | None, start: Path, *, named: bool) -> None:
    """Refuse a store another user owns found by discovery (git's ``safe.directory``).

    A store the caller named by its exact root (``named``) is trusted; one
    found by walking up from ``start``, or from the current folder, is not.
    """
    if root is None or (named and root == start):
        return
    owner = (root / MNEM_DIR).stat().st_uid
    if owner != os.geteuid():
        raise NoStoreError(
            f"the store at {root} belongs to another user (uid {owner}) and was only found by walking up "
            f"from {start}, so it is not used; if you trust it, open it by its path: "
            f"mnem_bridge.open({str(root)!r})"
        )


def creation_refused(path: Path) -> str | None:
    """Why no store may be created at ``path`` on first use, or ``None`` when one may.

    The rule (docs/bridge.md, "A store is created on first use"): a store is
    created only in a *new* folder whose parent exists, or in an *empty*
    folder that belongs to you.  Refused, each with the fix in the message:

    * a path that is a file, or a ``.mnem`` folder that does not exist;
    * a path inside an existing store (at or below the folder holding a
      ``.mnem``): most likely a typo for that store, and ``mnem init`` refuses
      nested stores anyway;
    * a folder that already holds files but no store: a store silently created
      inside a random project folder is a surprise, so that takes ``mnem init``;
    * an empty folder that belongs to another user;
    * a new folder whose parent does not exist (a typo in the parent would
      otherwise create a whole tree of folders).

    Args:
        path: An absolute path with no store at it.

    Returns:
        The refusal message, or ``None``.
    """
    init = f"`mnem init {path}`"
    if path.name == MNEM_DIR:
        return f"{path} names a {MNEM_DIR} folder that does not exist; pass the folder that should hold the store"
    outer = find_root(path.parent)
    if outer is not None:
        return (f"{path} is inside the store at {outer}, and no store is created inside another; to use that store "
                f"pass {outer}, for a new store pass a path outside it")
    if path.exists() and not path.is_dir():
        return f"{path} is a file, not a store; pass the folder that holds (or should hold) the store"
    if path.is_dir():
        held = sorted(entry.name for entry in path.iterdir() if not entry.name.startswith(f"{MNEM_DIR}.new-"))
        if held:
            shown = ", ".join(held[:3]) + (f" and {len(held) - 3} more" if len(held) > 3 else "")
            return (f"{path} holds files ({shown}) but no store, so none is created there on first use; "
                    f"if that folder is meant to hold one, run {init}, else pass a new or empty folder")
        if path.stat().st_uid != os.geteuid():
            return f"{path} belongs to another user (uid {path.stat().st_uid}); run {init} if you trust it"
        return None
    if not path.parent.is_dir():
        return f"{path.parent} does not exist, so no store is created at {path}; create the folder or run {init}"
    return None

