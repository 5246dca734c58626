"""The worker mode answers exactly what the one-shot binary would."""

import shutil
import subprocess

import orjson
import pytest
from conftest import MNEM, run_mnem


class Worker:
    """A real ``mnem serve --stdio`` process driven line by line."""

    def __init__(self):
        self.proc = subprocess.Popen([MNEM, "serve", "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def raw(self, line: bytes) -> dict:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()
        return orjson.loads(self.proc.stdout.readline())

    def ask(self, *argv, stdin=None):
        return self.raw(orjson.dumps({"argv": list(argv), "stdin": stdin}))

    def framed(self, *argv, stdin: bytes | None = None) -> tuple[int, bytes, bytes]:
        header = {"argv": list(argv), "stdin_bytes": None if stdin is None else len(stdin), "framed": True}
        self.proc.stdin.write(orjson.dumps(header) + b"\n" + (stdin or b""))
        self.proc.stdin.flush()
        answer = orjson.loads(self.proc.stdout.readline())
        out, err = self.proc.stdout.read(answer["stdout_bytes"]), self.proc.stdout.read(answer["stderr_bytes"])
        return answer["exit"], out, err

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


@pytest.fixture
def worker():
    w = Worker()
    yield w
    w.close()


SCRIPT = [
    (("add", "plan", "--content-json", '{"tier": "pro"}', "--source", "bill"), None),
    (("commit", "-m", "one", "--time", "5", "--author", "a"), None),
    (("write", "-m", "two", "--time", "6", "--author", "a"), '{"put": [{"id": "seats", "content": 40}]}'),
    (("log",), None),
    (("show", "--node", "plan"), None),
    # Floats a one-shot process and a worker encode with different libraries (mnem_store/cli/jsonout.py).
    (("write", "-m", "three", "--time", "7", "--author", "a"),
     '{"put": [{"id": "tiny", "content": {"p": 0.00001, "q": 1.5e-7, "r": 1e-300, "big": 1e16, "x": 0.1}}]}'),
    (("show", "--node", "tiny"), None),
    # Node documents a worker splices in from its cache (mnem_store/cli/documents.py), the second time kept.
    (("stamps",), None),
    (("stamps", "--prefix=t", "--node=plan"), None),
    (("stamps",), None),
    (("status",), None),
    (("rm", "ghost"), None),
    (("show", "nope"), None),
    (("branch", "a b"), None),
    (("log", "-n", "x"), None),
]


def replay_beside_one_shot(tmp_path, answer):
    """Run SCRIPT on two identical stores, one by one-shot processes and one through ``answer``; compare."""
    one, two = tmp_path / "one", tmp_path / "two"
    run_mnem("init", str(one))
    run_mnem("init", str(two))
    for argv, stdin in SCRIPT:
        for mode in ((), ("--json",)):
            expected = run_mnem("-C", str(one), *mode, *argv, input=stdin)
            got = answer(["-C", str(two), *mode, *argv], stdin)
            assert got == (
                expected.code, expected.out.replace(str(one), str(two)), expected.err.replace(str(one), str(two))
            ), argv


def test_worker_answers_match_one_shot(tmp_path, worker):
    def line(argv, stdin):
        got = worker.ask(*argv, stdin=stdin)
        return got["exit"], got["stdout"], got["stderr"]

    replay_beside_one_shot(tmp_path, line)


def test_framed_answers_are_the_one_shot_bytes_and_mix_with_line_answers(tmp_path, worker):
    """Framed requests (raw stdin and output beside the JSON line) answer byte for byte what one-shot prints."""

    def framed(argv, stdin):
        code, out, err = worker.framed(*argv, stdin=None if stdin is None else stdin.encode())
        assert worker.ask("--version")["exit"] == 0  # a line request after it: the stream stays in step
        return code, out.decode(), err.decode()

    replay_beside_one_shot(tmp_path, framed)
    bad = worker.raw(b'{"argv": ["log"], "framed": true, "stdin_bytes": -1}')
    assert bad["exit"] == 2 and orjson.loads(bad["stdout"])["error"]["code"] == "usage"
    assert "serve-framed" in run_mnem("--version", "--json").json["features"]


def test_worker_sees_other_writers_and_a_replaced_store(tmp_path, worker):
    store = tmp_path / "s"
    run_mnem("init", str(store))
    assert orjson.loads(worker.ask("-C", str(store), "--json", "show")["stdout"]) == {}
    run_mnem("-C", str(store), "add", "a", "1")
    assert "a" in orjson.loads(worker.ask("-C", str(store), "--json", "show")["stdout"])
    shutil.rmtree(store)
    run_mnem("init", str(store))
    assert orjson.loads(worker.ask("-C", str(store), "--json", "show")["stdout"]) == {}


def test_worker_follows_a_store_named_two_ways_through_its_deletion(tmp_path, worker):
    """A store asked for by its root and by its ``.mnem`` folder is one store; gone, it is ``no_store``."""
    store = tmp_path / "s"
    names = (str(store), str(store / ".mnem"))
    run_mnem("init", str(store))
    run_mnem("-C", str(store), "add", "a", "1")
    for name in names:
        assert list(orjson.loads(worker.ask("-C", name, "--json", "show")["stdout"])) == ["a"]
    shutil.rmtree(store)
    for name in names:
        answer = worker.ask("-C", name, "--json", "show")
        assert answer["exit"] == 1 and orjson.loads(answer["stdout"])["error"]["code"] == "no_store"
    run_mnem("init", str(store))
    run_mnem("-C", str(store), "add", "b", "2")
    for name in names:
        assert list(orjson.loads(worker.ask("-C", name, "--json", "show")["stdout"])) == ["b"]


def test_a_request_s_now_holds_for_that_request_only(tmp_path, worker):
    """``--now`` is one invocation's clock: a worker's next request reads the system clock again.

    The two ``--now`` reads have one shape, so the second is answered from the parse cache with its own value.
    """
    store = str(tmp_path / "s")
    run_mnem("init", store)

    def live(*now: str) -> list[str]:
        answer = worker.ask("-C", store, "--json", *now, "ls", "--live")
        assert answer["exit"] == 0, answer
        return orjson.loads(answer["stdout"])

    written = worker.ask("-C", store, "--json", "--now=1000", "write", "-m", "w",
                         stdin='{"put": [{"id": "x", "content": 1, "ttl": 500}]}')
    assert orjson.loads(written["stdout"])["commit"]["time"] == 1000
    assert live("--now=1500") == []
    assert live("--now=1499") == ["x"]
    assert live() == []  # 1499 did not outlive its request: the system clock is far past 1500
    refused = worker.ask("-C", store, "--json", "--now=soon", "ls", "--live")
    assert refused["exit"] == 2 and orjson.loads(refused["stdout"])["error"]["code"] == "usage"
    assert live() == []


def test_malformed_requests_get_usage_answers_and_the_worker_lives_on(tmp_path, worker):
    for line in (b"garbage", b'{"argv": "log"}', b'{"argv": [1]}', b'{"argv": ["log"], "stdin": 5}', b"[]"):
        answer = worker.raw(line)
        assert answer["exit"] == 2 and orjson.loads(answer["stdout"])["error"]["code"] == "usage"
    nested = worker.ask("serve", "--stdio")
    assert nested["exit"] == 2
    # Help is that request's answer, not text on the worker's pipe (and the worker lives on).
    helped = worker.ask("show", "-h")
    assert (helped["exit"], helped["stdout"]) == (0, run_mnem("show", "-h").out) and "--node ID" in helped["stdout"]
    listed = worker.ask("--help")  # the worker's own commands: all but serve and ui
    assert listed["exit"] == 0 and "usage: mnem" in listed["stdout"] and "blame" in listed["stdout"]
    assert worker.ask("--version")["stdout"].startswith("mnem ")
    assert worker.close() == 0


def test_a_worker_filtering_a_namespace_again_sees_another_process_s_write(tmp_path, worker):
    """A worker's kept filter index (``search._Set.narrowed``) is one commit's: another writer's commit is seen."""
    store = tmp_path / "s"
    run_mnem("init", str(store))
    puts = [{"id": f"m:u:k{n}", "content": {"tier": "pro" if n % 2 else "free"}} for n in range(6)]
    run_mnem("-C", str(store), "write", "-m", "w", input=orjson.dumps({"put": puts}).decode())

    def pro() -> list[str]:
        answer = worker.ask("-C", str(store), "--json", "search", '--namespace=["m"]', '--filter={"tier":"pro"}')
        return [item["key"] for item in orjson.loads(answer["stdout"])["items"]]

    assert [pro() for _ in range(3)] == [["k1", "k3", "k5"]] * 3  # the third search reads the kept index
    run_mnem("-C", str(store), "write", "-m", "w", input=orjson.dumps({"put": [
        {"id": "m:u:k0", "content": {"tier": "pro"}}, {"id": "m:u:k1", "content": {"tier": "free"}}]}).decode())
    assert pro() == ["k0", "k3", "k5"]
