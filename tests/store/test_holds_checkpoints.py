"""``porcelain.holds_checkpoints``: whether a store ever wrote a LangGraph checkpoint's node, on both backends.

``mnem ui`` offers its thread filter only where this is true (tests/ui/test_ui_first_hour.py).  It is one
probe of the index of every node id a change row ever named, so it sees a checkpoint on any branch, one that a
later commit removed, and none in a store whose ids merely sort next to the prefix.
"""

from __future__ import annotations

from pathlib import Path

from conftest import init_repo

from mnem_store import porcelain
from mnem_store.objects import MemoryNode


def test_a_checkpoint_on_any_branch_ever_written_is_seen_and_neighbours_are_not(backend: str, tmp_path: Path) -> None:
    with init_repo(tmp_path / "store", backend) as repo:
        assert porcelain.holds_checkpoints(repo) is False  # no commit at all
        # ids around the prefix in byte order: '.checkpoint' (shorter), '.checkpoint9' (':' - 1), '.checkpoint;'
        neighbours = [MemoryNode(node_id, 1) for node_id in (".checkpoint", ".checkpoint9", ".checkpoint;x", "plan")]
        porcelain.write(repo, neighbours, [], "memory only", "agent", 1)
        assert porcelain.holds_checkpoints(repo) is False
        porcelain.write(repo, [MemoryNode(".checkpoint:t1::c:01", {"step": 0})], [], "checkpoint t1", "saver", 2,
                        branch="runs/t1")
        assert porcelain.holds_checkpoints(repo) is True  # on another branch than HEAD's
        porcelain.write(repo, [], [".checkpoint:t1::c:01"], "sweep t1", "saver", 3, branch="runs/t1")
        assert porcelain.holds_checkpoints(repo) is True  # removed since: the history still holds it
