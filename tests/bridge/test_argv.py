"""The exact argv (and stdin) the bridge sends, pinned with a mocked runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from mnem_bridge import MemoryNode, Mnem, Provenance, RunResult, Store, agents

from .support import DESCRIPTION

NODE = {"id": "n", "content": 1, "content_kind": "note",
        "provenance": {"agent_step": None, "observation": None, "tool_call": None, "source": None, "note": None},
        "event_time": None}
COMMIT = {"id": "c" * 64, "parents": [], "state": "d" * 64, "message": "m", "author": "a", "time": 1}
#: A plausible reply per subcommand, enough for the facade to parse.
REPLIES: dict[str, Any] = {
    "add": {"node": NODE, "object": "0" * 64},
    "rm": {"id": "n"},
    "unstage": {"id": "n", "unstaged": True},
    "commit": COMMIT,
    "write": {"commit": COMMIT, "changes": {"n": "added"}},
    "log": [],
    "resolve": {"commit": "c" * 64},
    "branch": {"name": "b", "commit": "c" * 64},
    "checkout": {"result": "branch", "head": "ref: b"},
    "show": {},
    "diff": [],
    "merge": {"status": "merged", "commit": "c" * 64, "conflicts": []},
    "blame": {"commit": "c" * 64, "node": NODE, "time": 1},
    "bisect": {"commit": "c" * 64, "blame": None},
    "import": {"root": "/r", "store": "/r/.mnem", "objects": 0},
}


class Recorder:
    """A runner that answers like ``mnem`` would and remembers what it was asked."""

    def __init__(self) -> None:
        self.sent: list[tuple[list[str], bytes | None]] = []

    def run(self, argv: list[str], *, stdin: bytes | None, timeout: float | None) -> RunResult:
        if argv[1:] == ["--version", "--json"]:
            return RunResult(0, orjson.dumps(DESCRIPTION), b"")
        self.sent.append((argv, stdin))
        if argv[4] == "branch" and any(arg.startswith("--delete=") for arg in argv):  # branch -d's own document
            return RunResult(0, orjson.dumps({"name": argv[-1].split("=", 1)[1], "deleted": True}), b"")
        return RunResult(0, orjson.dumps(REPLIES[argv[4]]), b"")

    def close(self) -> None:
        """Nothing held."""


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def store(tmp_path: Path, recorder: Recorder) -> Store:
    binary = tmp_path / "bin" / "mnem"  # checked for existence, never run
    binary.parent.mkdir()
    binary.write_text("")
    binary.chmod(0o755)
    return Store(tmp_path / "s", client=Mnem(binary, runner=recorder))


def _args(recorder: Recorder, store: Store) -> list[list[str]]:
    """Each call's argv after the fixed ``mnem -C ROOT --json`` prefix."""
    prefix = [store.client.path, "-C", str(store.root), "--json"]
    assert all(argv[:4] == prefix for argv, _ in recorder.sent)
    return [argv[4:] for argv, _ in recorder.sent]


def test_add_sends_compact_json_and_guards_the_id(store: Store, recorder: Recorder) -> None:
    store.add("-x", {"b": [1, "ü"], "a": None}, content_kind="claim",
              provenance=Provenance(agent_step="s", source="-src", note="a=b"), event_time=5)
    store.add("plain", "text")
    assert _args(recorder, store) == [
        ["add", '--content-json={"b":[1,"ü"],"a":null}', "--content-kind=claim", "--source=-src", "--step=s",
         "--note=a=b", "--event-time=5", "--", "-x"],
        ["add", '--content-json="text"', "--", "plain"],
    ]


def test_commit_always_passes_the_author_and_the_time_only_when_given(
        store: Store, recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``time_ms`` the binary times the commit inside its transaction (never before the parent)."""
    monkeypatch.setenv("MNEM_AUTHOR", "")
    store.commit("-m looks like a flag")
    store.commit("second\nline", author="ann", time_ms=0)
    assert _args(recorder, store) == [
        ["commit", "--message=-m looks like a flag", "--author=unknown"],
        ["commit", "--message=second\nline", "--author=ann", "--time=0"],
    ]


def test_agents_write_one_payload_on_stdin(store: Store, recorder: Recorder) -> None:
    agents.remember(store, "a", {"k": 1}, source="s", step="p", time_ms=9)
    agents.remember_many(store, [{"id": "b", "content": None}, {"id": "c", "content": 2, "note": "n"}], author="x")
    agents.forget(store, "-a", summary="drop")
    assert _args(recorder, store) == [
        ["write", "--message=remember a", "--author=agent", "--time=9"],
        ["write", "--message=remember 2 nodes", "--author=x"],
        ["write", "--message=drop", "--author=agent"],
    ]
    assert [stdin for _, stdin in recorder.sent] == [
        b'{"put":[{"id":"a","content":{"k":1},"source":"s","step":"p"}],"delete":[]}\n',
        b'{"put":[{"id":"b","content":null},{"id":"c","content":2,"note":"n"}],"delete":[]}\n',
        b'{"put":[],"delete":["-a"]}\n',
    ]


def test_write_skip_missing(store: Store, recorder: Recorder) -> None:
    store.write([], ["x"], message="m", author="a", time_ms=1, skip_missing=True)
    assert _args(recorder, store) == [["write", "--message=m", "--author=a", "--time=1", "--skip-missing"]]


def test_merge_resolutions_and_strategy(store: Store, recorder: Recorder) -> None:
    store.merge("-theirs", resolutions={"p": "theirs", "-q": MemoryNode("-q", {"x": "a=b"})}, strategy="ours",
                author="m", time_ms=3)
    store.merge("feature", message="custom", author="m", time_ms=4)
    store.merge("plain")
    assert _args(recorder, store) == [
        ["merge", "--resolve=p=theirs", '--resolve-json=-q={"x":"a=b"}', "--strategy=ours", "--author=m", "--time=3",
         "--", "-theirs"],
        ["merge", "--message=custom", "--author=m", "--time=4", "--", "feature"],
        ["merge", "--author=unknown", "--", "plain"],
    ]
    with pytest.raises(ValueError):
        store.merge("feature", resolutions={"p": "mine"})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="first '='"):
        store.merge("feature", resolutions={"a=b": "ours"})


def test_bisect_helper_forms(store: Store, recorder: Recorder) -> None:
    assert store.bisect(node="-n", equals=None, good="g", bad="b") == "c" * 64
    store.bisect_explain("n", absent=True)
    store.bisect(node="n", present=True)
    store.bisect(node="n", equals={"tier": "pro"})
    assert _args(recorder, store) == [
        ["bisect", "--node=-n", "--equals=null", "--good=g", "--", "b"],
        ["bisect", "--node=n", "--absent", "--"],
        ["bisect", "--node=n", "--present", "--"],
        ["bisect", "--node=n", '--equals={"tier":"pro"}', "--"],
    ]
    with pytest.raises(ValueError):
        store.bisect(node="n")
    with pytest.raises(ValueError):
        store.bisect(node="n", absent=True, present=True)
    with pytest.raises(ValueError):
        store.bisect(lambda memory: True, node="n", present=True)
    with pytest.raises(ValueError):
        store.bisect(lambda memory: True, absent=True)


def test_reads_and_refs(store: Store, recorder: Recorder) -> None:
    store.log(first_parent=True, limit=3)
    store.resolve("-r")
    store.new_branch("-b", start="s")
    store.delete_branch("-b")
    store.checkout("-t", create="new", discard=True)
    store.state_at("-c")
    store.changed_by("c")
    store.diff("a", "b")
    store.blame("-n", "at")
    store.rm("-n")
    store.unstage("-n")
    assert _args(recorder, store) == [
        ["log", "--first-parent", "--max-count=3"],
        ["resolve", "--", "-r"],
        ["branch", "--", "-b", "s"],
        ["branch", "--delete=-b"],
        ["checkout", "--create=new", "--discard", "--", "-t"],
        ["show", "--", "-c"],
        ["show", "--stat", "--", "c"],
        ["diff", "--", "a", "b"],
        ["blame", "--", "-n", "at"],
        ["rm", "--", "-n"],
        ["unstage", "--", "-n"],
    ]


def test_log_keeps_the_binarys_order(store: Store, recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    """``mnem log`` lists commits in graph order (never one before a descendant), not by time: nothing re-sorts it."""
    child = {**COMMIT, "id": "b" * 64, "parents": ["a" * 64], "time": 1}  # a child timed before its parent
    parent = {**COMMIT, "id": "a" * 64, "time": 9}
    monkeypatch.setitem(REPLIES, "log", [child, parent])
    assert [commit.id for commit in store.log()] == [child["id"], parent["id"]]


def test_import_feeds_the_export_on_stdin(tmp_path: Path, store: Store, recorder: Recorder) -> None:
    Store.import_(tmp_path / "fork", {"format_version": 1, "objects": {}}, client=store.client)
    [(argv, stdin)] = recorder.sent
    assert argv[1:] == ["-C", str(tmp_path / "fork"), "--json", "import", "-"]
    assert stdin == b'{"format_version":1,"objects":{}}\n'

