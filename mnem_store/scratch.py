"""Temporary siblings that are renamed into place, and the removal of those a killed writer left.

A new store (``.mnem``) and an export file are written beside their final
name and renamed over it only when complete, so a kill or a full disk never
leaves half of one where a whole one should be.  A writer that is killed
leaves its temporary sibling instead; its name carries the writer's pid, so
the next writer in the same folder removes the ones whose writer is gone.
"""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path

from .logs import logger

__all__ = ["remove_dead", "scratch_name"]


def scratch_name(prefix: str, suffix: str = "") -> str:
    """A name no other writer uses: ``<prefix><pid>-<random><suffix>``."""
    return f"{prefix}{os.getpid()}-{os.urandom(4).hex()}{suffix}"  # not ``secrets``: 6 ms of start-up


def _writer_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def remove_dead(folder: Path, prefix: str) -> None:
    """Remove ``folder``'s entries named by ``scratch_name(prefix, ...)`` whose writer is no longer running."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        pid = entry.name[len(prefix):].partition("-")[0]
        if not pid.isdigit() or _writer_alive(int(pid)):
            continue
        logger(__name__).info("removing %s, left by a writer that did not finish", entry)
        if entry.is_dir() and not entry.is_symlink():
            import shutil  # rare: kept off every writer's start-up

            shutil.rmtree(entry, ignore_errors=True)
        else:
            with suppress(OSError):
                entry.unlink()
