"""The whole-store verbs: create a store (empty or from an export), export, verify, reindex and gc one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..location import Address
from ..repo import Repo

if TYPE_CHECKING:
    from ..verify import Report

__all__ = ["Collected", "export", "export_to_file", "gc", "import_", "init", "reindex", "verify"]


def init(where: Address) -> Address:
    """Create an empty store at ``where`` (a folder or URL) atomically; returns its root folder or URL."""
    Repo.init(where).close()
    return where.absolute() if isinstance(where, Path) else where


def import_(where: Address, document: Any) -> tuple[Address, int]:
    """Create a store at ``where`` from an export document, atomically; returns its root (or URL) and object count.

    The whole document is checked (hashes, links and meaning) before
    anything is created, and the store is built in one transaction and
    published whole, so a refused or interrupted import leaves nothing.
    """
    from ..portable import restore

    checked = restore(document)
    Repo.init(where, populate=checked.populate).close()
    return where.absolute() if isinstance(where, Path) else where, checked.count


def export(repo: Repo, *, seal: bool = False) -> dict[str, Any]:
    """The whole store as upstream's export document; with ``seal``, plus the seal that import checks."""
    from ..portable import export_document

    with repo.backend.read():
        return export_document(repo, seal=seal)


def export_to_file(repo: Repo, path: Path, *, seal: bool = False) -> int:
    """Write the export to ``path`` atomically (an old file stays whole on failure); returns the object count."""
    from ..portable import replace_file

    document = export(repo, seal=seal)
    replace_file(path, document)
    return len(document["objects"])


def verify(repo: Repo) -> Report:
    """Re-hash and cross-check the whole store in one snapshot."""
    from ..verify import verify as verify_store

    with repo.backend.read():
        return verify_store(repo)


def reindex(repo: Repo) -> int:
    """Re-derive the change index from the commits; returns how many were checked.

    The rebuild starts a new epoch (``mnem_store.cache``): what any process
    learnt from the old index is no longer trusted.
    """
    with repo.backend.write():
        return repo.rebuild_index()


class Collected(NamedTuple):
    """What ``gc`` dropped (or, on a dry run, would drop), the commits it kept, and the store's size in bytes."""

    commits: int
    objects: int
    before: int
    after: int
    dry_run: bool
    kept: int

    def to_dict(self) -> dict[str, Any]:
        """``{"dry_run", "commits", "objects", "kept_commits", "bytes_before", "bytes_after"}`` (docs/cli-json.md)."""
        return {"dry_run": self.dry_run, "commits": self.commits, "objects": self.objects,
                "kept_commits": self.kept, "bytes_before": self.before, "bytes_after": self.after}


def gc(repo: Repo, *, dry_run: bool = False, rewrite: bool = True) -> Collected:
    """Drop every commit and object nothing reaches (``mnem_store.collect``), then give their space back.

    One write transaction that no other write runs beside (``Backend.exclusive``), then, after it commits,
    ``Backend.compact`` (``rewrite`` False: the files keep their size and later writes reuse the space).  A dry
    run is one read and changes nothing.
    """
    from ..collect import collect

    before = repo.backend.size()
    if dry_run:
        with repo.backend.read():
            dropped = collect(repo, dry_run=True)
        return Collected(dropped.commits, dropped.objects, before, before, True, dropped.kept)
    with repo.backend.exclusive():
        dropped = collect(repo, dry_run=False)
    repo.backend.compact(rewrite=rewrite)
    return Collected(dropped.commits, dropped.objects, before, repo.backend.size(), False, dropped.kept)
