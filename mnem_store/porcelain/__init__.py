"""The verbs of ``mnem``: each one function that owns its transaction and returns a typed result.

As in dulwich's porcelain, a verb takes an open ``Repo`` (or, for ``init``
and ``import_``, a path), runs in exactly one read snapshot or one write
transaction of the store's backend, and returns objects, never text.  The
CLI parses arguments, calls one verb and renders what it returns; it never
opens a transaction itself, so no command can forget its snapshot and a
write either happens whole or not at all.  Results that the CLI shows carry
everything rendering needs (nodes loaded, commit subjects), so rendering
reads nothing from the store.

The verbs live in one module per family (``FAMILIES``), and this package
names them all: ``porcelain.show_node`` imports the family that defines it
on first use.  A one-shot read then loads only ``reading``, not the records
and code of the verbs it does not run: the one module took about 1.4 ms of
``mnem --json show --node``'s start-up more than ``reading`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as the type checker sees them; at run time ``__getattr__`` imports them when asked
    from .branches import *  # noqa: F403
    from .history import *  # noqa: F403
    from .reading import *  # noqa: F403
    from .searching import *  # noqa: F403
    from .staging import *  # noqa: F403
    from .stores import *  # noqa: F403
    from .undoing import *  # noqa: F403
    from .writing import *  # noqa: F403

#: Each family's module and the names it defines (its ``__all__``; tests/store/test_porcelain_families.py checks).
FAMILIES: dict[str, tuple[str, ...]] = {
    "reading": ("CACHE_LISTINGS", "Page", "count", "head", "load_nodes", "ls", "ls_objects", "page", "resolve",
                "show", "show_node", "show_stat", "stamps", "valid_at"),
    "history": ("Bisected", "ChangePage", "NodeChange", "Proposal", "ProposedChange", "Timeline", "TimelineEntry",
                "bisect", "blame", "blame_many", "changes", "diff", "diff_proposed", "holds_checkpoints", "log",
                "pushes_of", "threads_of", "timeline"),
    "staging": ("Status", "add", "commit", "rm", "status", "unstage"),
    "writing": ("Erasing", "Expired", "Written", "embed", "expire", "touch", "write"),
    "branches": ("BranchInfo", "MergeOutcome", "branch_create", "branch_delete", "branch_list", "checkout", "merge"),
    "undoing": ("REASON_CHARS", "Redacted", "Reverted", "RevertedFact", "SkippedFact", "check_reason", "redact",
                "redactions", "revert"),
    "searching": ("Found", "Ranker", "namespaces", "search", "similar"),
    "stores": ("Collected", "export", "export_to_file", "gc", "import_", "init", "reindex", "verify"),
}

_HOME = {name: family for family, names in FAMILIES.items() for name in names}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    """A verb or record of a family, imported on first use and kept here (the next use is a plain lookup)."""
    family = _HOME.get(name)
    if family is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # ``__import__`` (what an import statement runs), not ``importlib.import_module``: ``-X importtime`` then lists
    # the family as it lists every other import (tests/store/test_oneshot_imports.py reads that listing).
    module = __import__(f"{__name__}.{family}", fromlist=[name])
    value = globals()[name] = getattr(module, name)
    return value


def __dir__() -> list[str]:
    """Every name of every family, loaded or not."""
    return sorted({*globals(), *_HOME})
