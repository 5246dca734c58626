"""``mnem gc``: what nothing reaches goes, everything reachable stays, and the store shrinks.

The oracle for "exactly" is a twin: the same history written into a second
store, minus the branch that gets deleted.  Ids are content hashes and
every commit is dated by ``--time``, so the twin holds exactly the rows the
first store should keep; after the branch is deleted and ``gc`` runs, the
two must hold the same objects, commits, change rows, node names, vectors
and leases.
"""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import killpoints
import pg_stores
import pytest
from conftest import MNEM, new_store, run_mnem, store_fingerprint, store_sql
from held_writes import HeldWrite
from manual_clock import eventually
from mnem_history import ok, write

#: A value no other node holds, large and incompressible, so that dropping it shows in the store's size.
BIG = base64.b64encode(random.Random(47).randbytes(150_000)).decode()
#: A vector for ``vectors`` (little-endian float32 ``[1, 0]``).
VECTOR = base64.b64encode(b"\x00\x00\x80\x3f\x00\x00\x00\x00").decode()


def put(store: Path, message: str, time: int, puts: list[dict[str, Any]], *, branch: str | None = None) -> str:
    """One ``mnem write`` of full put entries (``ttl``, ``vectors``), on HEAD's branch or ``branch``."""
    flags = ["--branch", branch] if branch is not None else []
    result = ok("--json", "write", "-m", message, "--time", str(time), "--author", "tester", *flags, cwd=store,
                input=json.dumps({"put": puts}))
    return str(result.json["commit"]["id"])


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose main has a commit the others only fetch: a tracking branch is all that reaches it there."""
    folder = new_store(tmp_path_factory.mktemp("remote") / "store", "sqlite")
    write(folder, "theirs", 500, {"t": "from the remote"})
    return folder


def history(store: Path, remote: Path, *, replay: bool) -> None:
    """The history both twins share; with ``replay``, a ``replay/1`` branch written between main's commits.

    What only ``replay/1`` holds: two commits, a large node, a vector and a
    lease.  What it shares with main: the node ``s``, which it writes first
    and main writes later with the same value (one object).  A feature
    branch is merged and deleted, so only the merge's second parent reaches
    its commit; a tracking branch reaches a commit no branch does, and a
    staged node is an object no commit holds.
    """
    write(store, "one", 1000, {"a": "alpha", "b": "beta"})
    ok("branch", "feature", cwd=store)
    if replay:  # starts at main's tip, so its first commit joins main's lane
        put(store, "r1", 1100, [{"id": "r", "content": BIG, "ttl": 10**9,
                                 "vectors": {"model": "m", "fields": {"$": VECTOR}}}], branch="replay/1")
        put(store, "r2", 1200, [{"id": "s", "content": "shared"}], branch="replay/1")
    put(store, "f1", 1300, [{"id": "f", "content": "feature"}], branch="feature")
    write(store, "two", 2000, {"s": "shared", "b": "beta 2"})
    ok("merge", "feature", "--time", "3000", "-m", "merge feature", "--author", "tester", cwd=store)
    ok("branch", "-d", "feature", cwd=store)
    put(store, "three", 4000, [{"id": "k", "content": "kept", "ttl": 10**9,
                                "vectors": {"model": "m", "fields": {"$": VECTOR}}}])
    ok("remote", "add", "origin", str(remote), cwd=store)
    ok("fetch", "origin", cwd=store)
    ok("add", "z", "staged, never committed", cwd=store)


def rows(store: Path) -> dict[str, set[Any]]:
    """What a store holds, by content (keys differ between stores; ids do not)."""

    def of(statement: str) -> set[tuple[Any, ...]]:
        return {tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in store_sql(store, statement)}

    return {
        "objects": of("SELECT id, kind, data IS NULL FROM objects"),
        "commits": of("SELECT o.id FROM commits c JOIN objects o ON o.key = c.key"),
        "changes": of("SELECT x.id, n.name, ch.kind, o.id FROM changes ch JOIN objects x ON x.key = ch.commit_key "
                      "JOIN names n ON n.key = ch.name LEFT JOIN objects o ON o.key = ch.object"),
        "names": of("SELECT name FROM names"),
        "vectors": of("SELECT model, object, field FROM vectors"),
        "leases": of("SELECT branch, node_id, expires FROM leases"),
    }


def views(store: Path) -> dict[str, Any]:
    """What a user reads: every branch's log and memory, and the tracking branch's memory."""
    seen: dict[str, Any] = {}
    for branch in ok("--json", "branch", cwd=store).json:
        name = branch["name"] if isinstance(branch, dict) else branch
        seen[f"log {name}"] = ok("--json", "log", name, cwd=store).json
        seen[f"show {name}"] = ok("--json", "show", name, cwd=store).json
    seen["show origin/main"] = ok("--json", "show", "origin/main", cwd=store).json
    seen["status"] = ok("--json", "status", cwd=store).json
    return seen


def size(store: Path) -> int:
    """The bytes of a SQLite store's database and WAL."""
    database = Path(store) / ".mnem" / "store.sqlite3"
    wal = database.with_name("store.sqlite3-wal")
    return database.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


@pytest.fixture
def twins(backend: str, tmp_path: Path, remote: Path) -> tuple[Path, Path]:
    """A store with ``replay/1`` deleted (garbage to collect), and its twin that never had the branch."""
    store, twin = new_store(tmp_path / "store", backend), new_store(tmp_path / "twin", backend)
    history(store, remote, replay=True)
    history(twin, remote, replay=False)
    ok("branch", "-d", "replay/1", cwd=store)
    return store, twin


def test_gc_drops_exactly_what_only_a_deleted_branch_reached(twins, backend):
    store, twin = twins
    before, seen = rows(store), views(store)
    assert rows(twin)["objects"] < before["objects"]  # the deleted branch left rows behind
    file_before = size(store) if backend == "sqlite" else 0
    done = ok("--json", "gc", cwd=store).json
    assert rows(store) == rows(twin)
    assert done == {"dry_run": False, "commits": 2, "objects": len(before["objects"] - rows(twin)["objects"]),
                    "kept_commits": len(rows(twin)["commits"]), "bytes_before": done["bytes_before"],
                    "bytes_after": done["bytes_after"]}
    assert done["objects"] == 5  # two commits, their two states, the large node ("s" is main's too)
    assert done["bytes_after"] < done["bytes_before"]
    if backend == "sqlite":
        assert done["bytes_before"] == file_before
        assert size(store) == done["bytes_after"] < file_before - 100_000  # the large value's pages came back
    ok("verify", cwd=store)
    assert views(store) == seen
    # the store writes on as before: a new commit on main, and a branch from the old fork point
    for each in (store, twin):
        write(each, "four", 5000, {"a": "alpha 4"})
        put(each, "again", 6000, [{"id": "q", "content": "again"}], branch="later")
        ok("branch", "replay/2", "main~4", cwd=each)
        put(each, "r3", 7000, [{"id": "r", "content": "redo"}], branch="replay/2")
        ok("verify", cwd=each)
    assert views(store) == views(twin)
    assert ok("--json", "gc", cwd=store).json["objects"] == 0


def test_a_dry_run_counts_the_same_and_changes_nothing(twins):
    store, _ = twins
    fingerprint = store_fingerprint(store)
    counted = ok("--json", "gc", "--dry-run", cwd=store).json
    assert store_fingerprint(store) == fingerprint
    assert counted["dry_run"] and counted["bytes_after"] == counted["bytes_before"]
    assert ok("gc", "--dry-run", cwd=store).out == (
        f"(dry run) would drop {counted['commits']} commit(s) and {counted['objects']} object(s)\n")
    done = ok("--json", "gc", cwd=store).json
    assert (done["commits"], done["objects"]) == (counted["commits"], counted["objects"]) == (2, 5)


def test_a_detached_head_keeps_what_it_reaches(store):
    write(store, "one", 1000, {"a": "alpha"})
    kept = put(store, "r1", 2000, [{"id": "r", "content": "replayed"}], branch="replay/1")
    ok("checkout", kept, cwd=store)
    ok("branch", "-d", "replay/1", cwd=store)
    assert ok("--json", "gc", cwd=store).json["commits"] == 0
    assert ok("--json", "show", cwd=store).json["r"]["content"] == "replayed"
    ok("checkout", "main", cwd=store)
    assert ok("--json", "gc", cwd=store).json["commits"] == 1
    ok("verify", cwd=store)


def test_gc_refuses_a_store_whose_branch_points_at_a_missing_commit(store):
    write(store, "one", 1000, {"a": "alpha"})
    put(store, "r1", 2000, [{"id": "r", "content": "replayed"}], branch="replay/1")
    store_sql(store, "UPDATE refs SET target = ? WHERE name = 'main'", b"\x01" * 32)
    fingerprint = store_fingerprint(store)
    refused = run_mnem("--json", "gc", cwd=store)
    assert refused.code != 0
    error = json.loads(refused.out)["error"]
    assert error["code"] == "corrupt_store" and "mnem verify" in error["message"] and "nothing was dropped" in error[
        "message"]
    assert store_fingerprint(store) == fingerprint


# ------------------------------------------------------------------ kills
KILLS = 12


def test_a_gc_killed_anywhere_leaves_a_whole_store(twins, backend, remote, tmp_path):
    """Killed at steps of its own run (``killpoints``), gc leaves the store as it was or as gc leaves it, whole.

    Each kill gets a store built afresh by the same history (a copy would
    lose the remote's tracking branch on PostgreSQL, whose copies go
    through an export).
    """
    template, twin = twins
    seen, before, after = views(template), rows(template), rows(twin)

    def fresh(name: str) -> Path:
        store = new_store(tmp_path / name, backend)
        history(store, remote, replay=True)
        ok("branch", "-d", "replay/1", cwd=store)
        return store

    marker = "mnem_store/sql/collect.py:drop"
    run = killpoints.measure(["-C", pg_stores.address(fresh("measured")), "gc"], marker=marker)
    inside = 0
    for n, stop in enumerate(killpoints.aimed(run, KILLS, random.Random(47))):
        store = fresh(f"kill{n}")
        inside += killpoints.kill(["-C", pg_stores.address(store), "gc"], stop, marker=marker).inside
        ok("verify", cwd=store)
        assert views(store) == seen
        assert rows(store) in (before, after)
    assert inside >= KILLS // 2  # most kills fell while gc was deleting, inside its transaction


# ------------------------------------------------------------------ concurrent writers
#: The node a held writer writes: the value the deleted branch wrote, so its object is one gc would drop.
REUSED = {"id": "r", "content": BIG}

HELD_GC = """#!{python}
import os, sys, time
from mnem_store import collect
HELD, RELEASE, HANG = {held!r}, {release!r}, {hang!r}
walk = collect.collect
def held_collect(repo, *, dry_run):
    open(HELD, "w").close()
    deadline = time.monotonic() + HANG
    while not os.path.exists(RELEASE) and time.monotonic() < deadline:
        time.sleep(0.01)
    return walk(repo, dry_run=dry_run)
collect.collect = held_collect
from mnem_store.process import main
sys.exit(main())
"""


def reused_write(store: Path, binary: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """A ``mnem write`` of ``REUSED`` on main, by ``binary``, started and left running."""
    payload = Path(store).parent / "reused.json"
    payload.write_text(json.dumps({"put": [REUSED]}), encoding="utf-8")
    return subprocess.Popen(
        [binary, "-C", pg_stores.address(store), "--json", "write", "-m", "reuse", "--time", "9000", "--file",
         str(payload)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})})


def finish(proc: subprocess.Popen[bytes]) -> tuple[int, Any]:
    """Wait for a started ``mnem``: its exit status and its JSON answer."""
    out, err = proc.communicate(timeout=killpoints.HANG)
    return proc.returncode, json.loads(out or err)


def test_a_write_under_way_holds_gc_off_and_keeps_the_object_it_reuses(twins, tmp_path):
    """A commit is mid-transaction, its node's object found in the store (an object only the deleted branch held).

    gc must not drop that object under it: given a short busy timeout, gc
    answers ``busy`` and changes nothing while the write is held; once the
    write commits, gc keeps the object, which main now reaches.
    """
    store, _ = twins
    held = HeldWrite(tmp_path, "r")
    writer = reused_write(store, str(held.binary))
    held.wait()
    fingerprint = store_fingerprint(store)
    waited = run_mnem("--json", "gc", cwd=store, env={"MNEM_BUSY_TIMEOUT_MS": "300"})
    assert waited.code != 0 and json.loads(waited.out)["error"]["code"] == "busy", waited.out
    assert store_fingerprint(store) == fingerprint
    held.release()
    code, answer = finish(writer)
    assert code == 0, answer
    done = ok("--json", "gc", cwd=store).json
    assert (done["commits"], done["objects"]) == (2, 4)  # the large node is main's now
    ok("verify", cwd=store)
    assert ok("--json", "show", "--node", "r", cwd=store).json["content"] == BIG


def test_gc_under_way_holds_writers_off_and_they_write_after_it(twins, tmp_path):
    """gc is held inside its transaction; a write meanwhile waits (short timeout: ``busy``, nothing written),
    and the same write after gc commits keeps its node, whose object gc had just dropped."""
    store, _ = twins
    binary = tmp_path / "mnem-held-gc"
    held, release = tmp_path / "held", tmp_path / "release"
    binary.write_text(HELD_GC.format(python=sys.executable, held=str(held), release=str(release),
                                     hang=killpoints.HANG), encoding="utf-8")
    binary.chmod(0o755)
    collector = subprocess.Popen([str(binary), "-C", pg_stores.address(store), "--json", "gc"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        eventually(lambda: held.exists() or collector.poll() is not None, "gc reached its walk", within=killpoints.HANG)
        assert collector.poll() is None, collector.communicate()
        code, answer = finish(reused_write(store, MNEM, {"MNEM_BUSY_TIMEOUT_MS": "300"}))
        assert code != 0 and answer["error"]["code"] == "busy", answer
    finally:
        release.touch()
    code, answer = finish(collector)
    assert code == 0 and (answer["commits"], answer["objects"]) == (2, 5), answer
    assert ok("--json", "write", "-m", "reuse", "--time", "9000", cwd=store,
              input=json.dumps({"put": [REUSED]})).json["commit"]
    ok("verify", cwd=store)
    assert ok("--json", "show", "--node", "r", cwd=store).json["content"] == BIG


def test_a_redaction_and_its_object_outlive_the_branch_that_held_the_version(store):
    """A record names its object: gc keeps both, though the version's branch and commits are gone."""
    write(store, "one", 1000, {"a": "alpha"})
    put(store, "leak", 2000, [{"id": "token", "content": "sk-live-0123456789"}], branch="replay/1")
    ok("redact", "--node", "token", "--reason", "a leaked token", cwd=store)
    records = ok("--json", "redactions", cwd=store).json
    ok("branch", "-d", "replay/1", cwd=store)
    done = ok("--json", "gc", cwd=store).json
    assert (done["commits"], done["objects"]) == (1, 2)  # the commit and its state; the redacted node stays
    assert ok("--json", "redactions", cwd=store).json == records
    (record,) = records["redactions"]
    assert store_sql(store, "SELECT data IS NULL FROM objects WHERE id = ?", bytes.fromhex(record["object"])) == [
        (True,)]
    ok("verify", cwd=store)


# ------------------------------------------------------------------ a branch that lets go of its history
def test_an_orphan_write_lets_go_of_its_branchs_history_and_gc_drops_it(backend, tmp_path):
    """``write --orphan`` keeps the state and drops the parent: gc then leaves what one root write would have."""
    store, twin = new_store(tmp_path / "store", backend), new_store(tmp_path / "twin", backend)
    for each in (store, twin):
        write(each, "memory", 1000, {"a": "alpha"})
    put(store, "c1", 2000, [{"id": "c/1", "content": BIG}], branch="checkpoints")
    put(store, "c2", 3000, [{"id": "c/2", "content": "two"}], branch="checkpoints")
    answer = ok("--json", "write", "-m", "c3", "--time", "4000", "--author", "tester", "--branch", "checkpoints",
                "--orphan", cwd=store, input=json.dumps({"put": [{"id": "c/3", "content": "three"}],
                                                         "delete": ["c/1"]})).json
    assert answer["commit"]["parents"] == []
    assert answer["changes"] == {"c/2": "added", "c/3": "added"}  # a root's change set: its whole state
    # the twin writes that state once, as the branch's first commit: the same root, id for id
    root = put(twin, "c3", 4000, [{"id": "c/2", "content": "two"}, {"id": "c/3", "content": "three"}],
               branch="checkpoints")
    assert answer["commit"]["id"] == root
    assert [entry["id"] for entry in ok("--json", "log", "checkpoints", cwd=store).json] == [root]
    assert ok("--json", "show", "checkpoints", cwd=store).json == ok("--json", "show", "checkpoints", cwd=twin).json
    ok("verify", cwd=store)
    done = ok("--json", "gc", "--plain-vacuum", cwd=store).json
    assert (done["commits"], done["objects"]) == (2, 5)  # c1, c2, their states, the large value
    assert rows(store) == rows(twin)
    for branch in ("main", "checkpoints"):
        for verb in ("log", "show"):
            assert ok("--json", verb, branch, cwd=store).json == ok("--json", verb, branch, cwd=twin).json
    ok("verify", cwd=store)
    if backend == "sqlite":  # not rewritten: the file keeps its size, and its free pages hold none of the value
        assert size(store) == done["bytes_after"] >= done["bytes_before"] - 100_000
        database = (Path(store) / ".mnem" / "store.sqlite3").read_bytes()
        assert BIG[:64].encode() not in database
        assert store_sql(store, "PRAGMA freelist_count")[0][0] > 0


def test_an_orphan_write_on_heads_branch_keeps_the_tips_state(store):
    """Without --branch the orphan goes on HEAD's branch, holding the tip's nodes and the payload's."""
    write(store, "one", 1000, {"a": "alpha"})
    ok("--json", "write", "-m", "root", "--orphan", cwd=store, input=json.dumps({"put": [{"id": "b", "content": 2}]}))
    assert set(ok("--json", "show", cwd=store).json) == {"a", "b"}
    assert len(ok("--json", "log", cwd=store).json) == 1
    assert ok("--json", "gc", cwd=store).json["commits"] == 1
    ok("verify", cwd=store)
