"""A commit's rows are written in batches that find their keys by id (issue #48), and keep the commit graph whole.

A commit's objects, node names and change rows go in one statement each,
and on PostgreSQL its graph row and lane in one more, without the write
waiting for any key (``mnem_store/sql/states.py``, ``SqlStateStore.record``).
What the engine decided from answers before, it now decides where the rows
are written: whether the commit is indexed already, and whether it joins
its parent's lane, which two writers extending one commit on two branches
must never both do.  These tests hold those decisions on both backends.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pg_stores
import pytest
from conftest import MNEM, open_repo
from manual_clock import eventually
from mnem_history import ok

from mnem_store import porcelain
from mnem_store.objects import MemoryNode


def lanes_of(repo: object, commits: list[bytes]) -> list[int]:
    """The lane each commit's graph row names."""
    backend = repo.backend  # type: ignore[attr-defined]
    with backend.read():
        return [
            backend.session.execute(
                "SELECT c.lane FROM commits c JOIN objects o ON o.key = c.key WHERE o.id = ?", (raw,)
            ).fetchone()[0]
            for raw in commits
        ]


def test_the_same_commit_written_on_two_branches_is_indexed_once(store: Path) -> None:
    """Two branches at one commit, written alike at one time, reach the same commit id: the second write adds no row."""
    ok("--json", "write", "-m", "root", input='{"put": [{"id": "a", "content": 1}]}', cwd=store)
    ok("branch", "side", cwd=store)
    with open_repo(store) as repo:
        root = repo.head_commit()
        same = [MemoryNode("b", {"v": 2}), MemoryNode("c", {"v": 3})]
        first = porcelain.write(repo, same, ["a"], "same", "agent", 1_900_000_000_000).commit
        again = porcelain.write(repo, same, ["a"], "same", "agent", 1_900_000_000_000, branch="side").commit
        assert first is not None and again is not None and first[0] == again[0]
        with repo.backend.read():
            assert repo.branches() == [("main", first[0]), ("side", first[0])]
            assert repo.first_parent_chain(first[0]) == [first[0], root]
            assert repo.changes_of(first[0]) == {"a": "removed", "b": "added", "c": "added"}
            rows = repo.backend.session.execute("SELECT count(*) FROM changes").fetchone()[0]
        assert rows == 1 + 3  # the root's row and the commit's three, written once
        # Each branch goes on from it, one in its lane and one in a lane of its own.
        on_main = porcelain.write(repo, [MemoryNode("d", 4)], [], "on main", "agent", None).commit
        on_side = porcelain.write(repo, [MemoryNode("e", 5)], [], "on side", "agent", None, branch="side").commit
        assert on_main is not None and on_side is not None
        with repo.backend.read():
            assert repo.first_parent_chain(on_main[0]) == [on_main[0], first[0], root]
            assert repo.first_parent_chain(on_side[0]) == [on_side[0], first[0], root]
            assert sorted(repo.commit_nodes(on_side[0])) == ["b", "c", "e"]
    assert ok("--json", "verify", cwd=store).json["refs"] == 2


def test_commits_of_many_rows_read_back_whole(store: Path) -> None:
    """Batches past a few rows (PostgreSQL's arrays) and below (its values) write every object, name and change.

    Node ids with a NUL and non-ASCII text, a value written back as it was
    (its object stored already) and an object two ids share all go through.
    """
    nodes = {f"n{i}\x00é" if i % 7 == 0 else f"n{i}": {"v": i % 5} for i in range(40)}
    with open_repo(store) as repo:
        first = porcelain.write(repo, [MemoryNode(k, v) for k, v in nodes.items()], [], "many", "agent", None).commit
        assert first is not None
        ids = sorted(nodes)
        put = [MemoryNode(k, {"v": 99}) for k in ids[:12]] + [MemoryNode(ids[12], nodes[ids[12]])]  # 12 new, 1 same
        put += [MemoryNode(f"new{i}", {"v": 99}) for i in range(3)]
        second = porcelain.write(repo, put, ids[20:31], "edit", "agent", None).commit
        small = porcelain.write(repo, [MemoryNode("one", 1)], [ids[35]], "small", "agent", None).commit
        assert second is not None and small is not None
        with repo.backend.read():
            assert repo.commit_nodes(first[0]).keys() == nodes.keys()
            changed = repo.changes_of(second[0])
            assert changed == {**{k: "modified" for k in ids[:12]}, **{k: "removed" for k in ids[20:31]},
                               **{f"new{i}": "added" for i in range(3)}}
            now = repo.nodes_of(repo.commit_nodes(small[0]))
        expected = {**nodes, **{k: {"v": 99} for k in ids[:12]}, **{f"new{i}": {"v": 99} for i in range(3)}, "one": 1}
        for gone in [*ids[20:31], ids[35]]:
            del expected[gone]
        assert {k: node.content for k, node in now.items()} == expected
    assert ok("--json", "verify", cwd=store).json["refs"] == 1


def waiting_writers() -> int:
    """Sessions of the engine (``application_name`` mnem) that wait on a lock another session holds."""
    import psycopg

    with psycopg.connect(pg_stores.server_uri(), autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mnem' "
            "AND cardinality(pg_blocking_pids(pid)) > 0"
        ).fetchone()
        return int(row[0]) if row is not None else 0


@pytest.mark.parametrize("backend", ["postgresql"])
def test_writers_extending_one_commit_on_two_branches_never_fork_its_lane(store: Path, tmp_path: Path) -> None:
    """Both writers reach the parent's lane row together; one joins the lane, the other starts one of its own.

    The lane row is held by an outside transaction until both writers wait
    on it (seen on the server, not timed), then let go: whichever takes it
    first joins the lane, and the other, finding it headed by that commit,
    must not.  A forked lane would list the one branch's commit in the
    other's first-parent chain.
    """
    ok("--json", "write", "-m", "root", input='{"put": [{"id": "a", "content": 1}]}', cwd=store)
    ok("branch", "side", cwd=store)
    url = pg_stores.url_of(store)
    assert url is not None
    with open_repo(store) as repo:
        root = repo.head_commit()
        assert root is not None
        (lane,) = lanes_of(repo, [root])
    holder = pg_stores.connect(url)
    holder.autocommit = False
    holder.execute("SELECT head FROM lanes WHERE lane = %s FOR UPDATE", (lane,))
    writers = []
    try:
        for branch in ("main", "side"):
            payload = tmp_path / f"{branch}.json"
            payload.write_text(f'{{"put": [{{"id": "on-{branch}", "content": 1}}]}}')
            writers.append(subprocess.Popen(
                [MNEM, "--json", "write", "-m", branch, "--branch", branch, "--file", str(payload)],
                stdout=subprocess.PIPE, env={**os.environ, "MNEM_STORE": url, "MNEM_BUSY_TIMEOUT_MS": "600000"},
            ))
        eventually(lambda: waiting_writers() == 2, "both writers waiting on the parent's lane row")
    finally:
        holder.rollback()
        holder.close()
    for writer in writers:
        out, _ = writer.communicate(timeout=60)
        assert writer.returncode == 0, out
    with open_repo(store) as repo, repo.backend.read():
        tips = [repo.branch_tip("main"), repo.branch_tip("side")]
        assert None not in tips and tips[0] != tips[1]
        for tip in tips:
            assert repo.first_parent_chain(tip) == [tip, root]
    with open_repo(store) as repo:
        lanes = lanes_of(repo, tips)
    assert lane in lanes and len(set(lanes)) == 2  # one joined the root's lane, the other started its own
    assert ok("--json", "verify", cwd=store).json["refs"] == 2
