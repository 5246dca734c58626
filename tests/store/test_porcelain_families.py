"""``mnem_store.porcelain`` names every verb, though each family's module loads only when one of its names is used.

The verbs live one module per family (``porcelain/reading.py``,
``porcelain/history.py``...) so a one-shot read does not define the records
of verbs it never runs (tests/store/test_oneshot_imports.py); code and docs
that call ``porcelain.write`` or ``from mnem_store.porcelain import Page``
keep working as before the split.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from mnem_store import porcelain

#: What ``mnem_store.porcelain`` exported when it was one module, and the public names it defined beside them.
BEFORE_THE_SPLIT = {
    "Bisected", "BranchInfo", "ChangePage", "Collected", "Erasing", "Expired", "Found", "MergeOutcome", "NodeChange",
    "Page", "Proposal", "ProposedChange", "Ranker", "Redacted", "Reverted", "RevertedFact", "SkippedFact", "Status",
    "Timeline", "TimelineEntry", "Written", "add", "bisect", "blame", "blame_many", "branch_create", "branch_delete",
    "branch_list", "changes", "check_reason", "checkout", "commit", "count", "diff", "diff_proposed", "embed",
    "expire", "export", "export_to_file", "gc", "head", "import_", "init", "load_nodes", "log", "ls_objects",
    "merge", "namespaces", "page", "pushes_of", "redact", "redactions", "reindex", "resolve", "revert", "rm",
    "search", "show", "show_node", "show_stat", "similar", "stamps", "status", "threads_of", "timeline", "touch",
    "unstage", "verify", "write",
    "CACHE_LISTINGS", "REASON_CHARS", "holds_checkpoints", "ls", "valid_at",
}


def test_every_name_the_one_module_had_is_still_there() -> None:
    assert set(porcelain.__all__) >= BEFORE_THE_SPLIT
    for name in BEFORE_THE_SPLIT:
        assert getattr(porcelain, name) is not None


@pytest.mark.parametrize("family", sorted(porcelain.FAMILIES))
def test_each_name_comes_from_the_family_the_package_says(family: str) -> None:
    """``FAMILIES`` is the map ``__getattr__`` loads by: it must list each family's ``__all__``, no more, no less."""
    module = importlib.import_module(f"mnem_store.porcelain.{family}")
    assert sorted(module.__all__) == sorted(porcelain.FAMILIES[family])
    for name in module.__all__:
        assert getattr(porcelain, name) is getattr(module, name)


def test_a_name_loads_its_family_alone() -> None:
    """In a fresh interpreter: ``from mnem_store.porcelain import Page`` imports ``reading`` and no other family."""
    probe = ("import sys\nfrom mnem_store.porcelain import Page, show_node\n"
             "print(sorted(m for m in sys.modules if m.startswith('mnem_store.porcelain.')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["['mnem_store.porcelain.reading']"]


def test_a_name_no_family_has_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_verb"):
        porcelain.no_such_verb  # noqa: B018
    with pytest.raises(ImportError):
        from mnem_store.porcelain import no_such_verb  # noqa: F401
