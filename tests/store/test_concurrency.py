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
