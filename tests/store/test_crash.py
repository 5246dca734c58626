"""Writers killed with SIGKILL at random moments.

The store always opens, verifies, and keeps every acknowledged write.
"""

import contextlib
import json
import random
import signal
import subprocess
import time

import pg_stores
from conftest import MNEM, run_mnem

KILLS = 200


def write_argv(store, n):
    return [MNEM, "-C", pg_stores.address(store), "--json", "write", "-m", f"w{n}", "--time", str(n)]


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


def one_write_takes(store):
    """Seconds one whole one-shot write takes on this backend (its slowest of three), to aim the kills."""
    taken = []
    for n in range(3):
        started = time.monotonic()
        assert run_mnem("write", "-m", "warm", input=payload(10_000 + n), cwd=store).code == 0
        taken.append(time.monotonic() - started)
    return max(taken)


def test_one_shot_writers_killed_at_random(store):
    rng = random.Random(8)
    span = one_write_takes(store)
    acknowledged, killed_mid_write = set(), 0
    for n in range(KILLS):
        proc = subprocess.Popen(write_argv(store, n), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        proc.stdin.write(payload(n).encode())
        proc.stdin.close()
        time.sleep(rng.uniform(0.0, span))  # anywhere from start-up to the commit's end
        proc.send_signal(signal.SIGKILL)
        out = proc.stdout.read()
        status = proc.wait()
        if status == 0:
            acknowledged.add(json.loads(out)["commit"]["id"])
        else:
            assert status == -signal.SIGKILL
            killed_mid_write += 1
    assert killed_mid_write > KILLS // 4  # the kills really landed during start-up and writes
    check_whole(store, acknowledged)


def test_a_worker_killed_at_random_between_and_during_requests(store):
    rng = random.Random(9)
    acknowledged = set()
    n = 0
    for _ in range(50):
        worker = subprocess.Popen([MNEM, "serve", "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + rng.uniform(0.0, 0.3)
        while time.monotonic() < deadline:
            request = {"argv": write_argv(store, n)[1:], "stdin": payload(n)}
            n += 1
            worker.stdin.write(json.dumps(request).encode() + b"\n")
            worker.stdin.flush()
            line = worker.stdout.readline()
            if not line:
                break
            answer = json.loads(line)
            assert answer["exit"] == 0, answer
            acknowledged.add(json.loads(answer["stdout"])["commit"]["id"])
        # one more request in flight, then the kill
        worker.stdin.write(json.dumps({"argv": write_argv(store, n)[1:], "stdin": payload(n)}).encode() + b"\n")
        worker.stdin.flush()
        n += 1
        time.sleep(rng.uniform(0.0, 0.005))
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        for stream in (worker.stdin, worker.stdout):
            with contextlib.suppress(BrokenPipeError):
                stream.close()
    check_whole(store, acknowledged)
