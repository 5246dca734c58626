"""Writers killed with SIGKILL at random points of their run.

The store always opens, verifies, and keeps every acknowledged write.  The
kill points are steps of the program (``killpoints``: the n-th call made by
``mnem_store``'s code), drawn at random from a whole run's, so where a kill
lands does not depend on how fast the machine is; many land inside a
commit's ``Repo.write``, and the tests count them from what the killed
process said.
"""

import contextlib
import json
import os
import random
import select
import signal
import subprocess

import killpoints
import pg_stores
from conftest import run_mnem

KILLS = 200
WORKERS = 50
#: Writes sent to each worker, one at a time; its kill point falls anywhere from start-up to the last one's end.
WORKER_REQUESTS = 8


def write_args(store, n):
    """``mnem``'s arguments for write number ``n``."""
    return ["-C", pg_stores.address(store), "--json", "write", "-m", f"w{n}", "--time", str(n)]


def payload(n):
    # several nodes per commit, so a half-applied commit would show as a partial group
    return json.dumps({"put": [{"id": f"n{n}-{part}", "content": {"n": n, "part": part}} for part in range(3)]})


def check_whole(store, acknowledged):
    verified = run_mnem("--json", "verify", cwd=store)
    assert verified.code == 0, verified.out
    log = run_mnem("--json", "log", "--first-parent", cwd=store).json
    ids = {commit["id"] for commit in log}
    assert acknowledged <= ids  # every write that answered is there
    memory = run_mnem("--json", "show", cwd=store).json
    groups = {}
    for node_id in memory:
        groups.setdefault(node_id.split("-")[0], set()).add(node_id)
    assert all(len(parts) == 3 for parts in groups.values())  # no half-commit is visible
    assert len(groups) == len(log)  # one group per commit, nothing else


def test_one_shot_writers_killed_at_random(store):
    """Each write is killed at a seeded random step of its own run (``killpoints``), from start-up to its answer.

    Stop points are drawn a quarter past a whole run's calls, so some writes finish and are acknowledged.
    """
    rng = random.Random(8)
    span = max(killpoints.measure(write_args(store, 10_000 + n), payload(10_000 + n).encode()).steps for n in range(3))
    acknowledged, killed_mid_write = set(), 0
    for n in range(KILLS):
        read, write = os.pipe()
        proc = subprocess.Popen(killpoints.argv(rng.randint(1, span * 5 // 4), write, write_args(store, n)),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                pass_fds=(write,))
        os.close(write)
        proc.stdin.write(payload(n).encode())
        proc.stdin.close()
        stopped = killpoints.wait_stop(proc, read)
        os.close(read)
        out = proc.stdout.read()
        status = proc.wait()
        if status == 0:
            acknowledged.add(json.loads(out)["commit"]["id"])
        else:
            assert stopped.stopped and status == -signal.SIGKILL, (status, stopped)
            killed_mid_write += stopped.inside
    # a write's transaction is about half its steps, so many kills land in it
    assert acknowledged and killed_mid_write > KILLS // 4
    check_whole(store, acknowledged)


def request(store, n):
    return json.dumps({"argv": write_args(store, n), "stdin": payload(n)}).encode() + b"\n"


def worker_calls(store, requests):
    """How many ``mnem_store`` calls a worker makes from start-up to the end of ``requests`` writes."""
    return killpoints.measure(["serve", "--stdio"], b"".join(request(store, 20_000 + n) for n in range(requests))).steps


def test_a_worker_killed_at_random_between_and_during_requests(store):
    """Each worker is killed at a seeded random step of its run (``killpoints``), its requests sent one at a time."""
    rng = random.Random(9)
    span = worker_calls(store, WORKER_REQUESTS)
    acknowledged, killed_mid_write, n = set(), 0, 0
    for _ in range(WORKERS):
        read, write = os.pipe()
        worker = subprocess.Popen(killpoints.argv(rng.randint(1, span), write, ["serve", "--stdio"]),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  pass_fds=(write,))
        os.close(write)
        for _ in range(WORKER_REQUESTS):
            worker.stdin.write(request(store, n))
            worker.stdin.flush()
            n += 1
            ready, _, _ = select.select([read, worker.stdout], [], [], killpoints.HANG)
            assert ready, "the worker neither answered nor reached its stop point"
            if read in ready:
                stopped = killpoints.wait_stop(worker, read)
                killed_mid_write += stopped.inside
                break
            answer = json.loads(worker.stdout.readline())
            assert answer["exit"] == 0, answer
            acknowledged.add(json.loads(answer["stdout"])["commit"]["id"])
        worker.kill()
        worker.wait()
        os.close(read)
        for stream in (worker.stdin, worker.stdout):
            with contextlib.suppress(BrokenPipeError):
                stream.close()
    assert acknowledged and killed_mid_write > WORKERS // 4  # many kills land inside a request's write
    check_whole(store, acknowledged)
