"""Several processes on one store at once lose nothing."""

import json
import subprocess
import sys
import textwrap

import pg_stores
from conftest import MNEM, run_mnem

WRITER = textwrap.dedent(
    """
    import json, subprocess, sys
    mnem, store, name, count, mode = sys.argv[1:6]
    failures = []
    for i in range(int(count)):
        node = f"{name}-{i}"
        if mode == "write":
            payload = json.dumps({"put": [{"id": node, "content": i}]})
            runs = [subprocess.run([mnem, "-C", store, "--json", "write", "-m", f"remember {node}"],
                                   input=payload.encode(), capture_output=True)]
        else:
            runs = [subprocess.run([mnem, "-C", store, "--json", "add", node, str(i)], capture_output=True),
                    subprocess.run([mnem, "-C", store, "--json", "commit", "-m", f"commit {node}"],
                                   capture_output=True)]
        for run in runs:
            if run.returncode != 0:
                failures.append(json.loads(run.stdout)["error"])
    print(json.dumps(failures))
    """
)


def spawn_writers(store, tmp_path, writers, count, mode):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    procs = [
        subprocess.Popen([sys.executable, str(script), MNEM, pg_stores.address(store), f"w{n}", str(count), mode],
                         stdout=subprocess.PIPE, text=True)
        for n in range(writers)
    ]
    return [proc.communicate(timeout=600)[0] for proc in procs]


def test_concurrent_atomic_writes_each_land_exactly_once(store, tmp_path):
    outputs = spawn_writers(store, tmp_path, writers=4, count=20, mode="write")
    assert all(out.strip() == "[]" for out in outputs), outputs
    log = run_mnem("--json", "log", cwd=store).json
    assert len(log) == 80
    assert sorted(c["message"] for c in log) == sorted(f"remember w{n}-{i}" for n in range(4) for i in range(20))
    memory = run_mnem("--json", "show", cwd=store).json
    assert {f"w{n}-{i}": i for n in range(4) for i in range(20)} == {k: v["content"] for k, v in memory.items()}
    first_parent = run_mnem("--json", "log", "--first-parent", cwd=store).json
    assert len(first_parent) == 80  # a straight line: every write saw the previous tip


def test_concurrent_stage_and_commit_loses_no_node(store, tmp_path):
    """Staging is shared (upstream semantics), so a commit may find nothing left to commit; no node is lost."""
    outputs = spawn_writers(store, tmp_path, writers=2, count=15, mode="stage")
    for out in outputs:
        for error in json.loads(out):
            assert error["message"] == "nothing staged; use `mnem add` or `mnem rm` first", error
    memory = run_mnem("--json", "show", "main", cwd=store).json
    status = run_mnem("--json", "status", cwd=store).json
    assert status["staged"] == []
    assert set(memory) == {f"w{n}-{i}" for n in range(2) for i in range(15)}


def test_a_second_open_in_one_process_keeps_the_first_connections_writes(sqlite_store):
    """Opening a store again in a process that has it open must not drop the first connection's locks.

    SQLite's locks are POSIX locks: closing any descriptor of the database file
    in the process releases them all.  If opening the store read the file's
    header through a descriptor of its own, another process closing its
    connection afterwards would take itself for the last one, checkpoint and
    delete the WAL under the first connection, and that connection's later
    commits would be acknowledged and then lost.
    """
    from mnem_store import porcelain
    from mnem_store.objects import MemoryNode
    from mnem_store.repo import Repo

    def elsewhere(node: str):
        """A write by another process."""
        return run_mnem("-C", str(sqlite_store), "--json", "write", "-m", node,
                        input=json.dumps({"put": [{"id": node, "content": 1}]}))

    with Repo.open(sqlite_store) as first:
        with first.backend.read():
            first.head_commit()  # the first connection is set up: its locks and the WAL index are held
        Repo.open(sqlite_store).close()
        written = elsewhere("x")
        assert written.code == 0, written.err  # its process closed its connection as it exited
        for i in range(5):
            porcelain.write(first, [MemoryNode(f"kept-{i}", i)], [], f"write {i}", "tester", None)
        shown = run_mnem("-C", str(sqlite_store), "--json", "show")  # committed: every other process sees them
        assert {"x", *(f"kept-{i}" for i in range(5))} <= set(shown.json)  # {id: node}
        written = elsewhere("y")
        assert written.code == 0, written.err
    shown = run_mnem("-C", str(sqlite_store), "--json", "show")
    assert {"x", "y", *(f"kept-{i}" for i in range(5))} <= set(shown.json)
