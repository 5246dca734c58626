"""``mnem log --touching PREFIX`` and ``--thread T`` through the real binary, on both backends.

A person debugging a LangGraph run wants one timeline: the thread's checkpoints (``MnemosyneSaver``'s commits,
under ``.checkpoint:THREAD:``) and the memory commits between them, without other threads' checkpoints.  The
filters read each commit's change rows, so they are checked against histories whose commits change known ids.
"""

from __future__ import annotations

from pathlib import Path

from conftest import new_store, run_mnem
from mnem_history import ok, write


def subjects(store: Path, *args: str) -> list[str]:
    """The messages ``log --json`` lists with ``args``, newest first."""
    return [commit["message"] for commit in ok("--json", "log", *args, cwd=store).json]


def chat(store: Path) -> None:
    """Two threads' checkpoints, memory commits between them, one commit of both, a removal, and escaped threads."""
    saver = {"allow_reserved": True}  # the checkpoints' ids are reserved: only a saver writes them
    write(store, "remember plan", 1000, {"users:u1:plan": "pro"})
    write(store, "checkpoint t1 step 0 (input)", 2000, {".checkpoint:t1::c:0001": {"step": 0}}, **saver)
    write(store, "checkpoint t2 step 0 (input)", 3000, {".checkpoint:t2::c:0001": {"step": 0}}, **saver)
    write(store, "remember seats", 4000, {"users:u1:seats": 40})
    write(store, "checkpoint t1 step 1 (loop)", 5000, {".checkpoint:t1::c:0002": {"step": 1}}, **saver)
    write(store, "t2 learns and checkpoints", 6000, {"users:u1:tier": "gold", ".checkpoint:t2::c:0002": {"step": 1}},
          **saver)
    write(store, "checkpoint a%3Ab step 0 (input)", 7000, {".checkpoint:a%3Ab::c:0001": {"step": 0}}, **saver)
    write(store, "checkpoint a step 0 (input)", 8000, {".checkpoint:a::c:0001": {"step": 0}}, **saver)
    write(store, "delete checkpoints of thread t1", 9000,
          delete=[".checkpoint:t1::c:0001", ".checkpoint:t1::c:0002"], **saver)


def test_touching_lists_the_commits_that_changed_a_node_under_a_prefix(backend: str, tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", backend)
    chat(store)
    assert subjects(store, "--touching", "users:") == [
        "t2 learns and checkpoints", "remember seats", "remember plan"]
    assert subjects(store, "--touching", "users:u1:seats", "--touching", ".checkpoint:t2:") == [
        "t2 learns and checkpoints", "remember seats", "checkpoint t2 step 0 (input)"]
    # -n counts the listed commits, --first-parent and REV apply as without a filter
    assert subjects(store, "--touching", ".checkpoint:t1:", "-n", "2", "--first-parent") == [
        "delete checkpoints of thread t1", "checkpoint t1 step 1 (loop)"]
    assert subjects(store, "HEAD~1", "--touching", ".checkpoint:t1:") == [
        "checkpoint t1 step 1 (loop)", "checkpoint t1 step 0 (input)"]
    # the text forms list the same commits
    oneline = ok("log", "--oneline", "--touching", "users:u1:s", cwd=store).out
    assert [line.split(" ", 1)[1] for line in oneline.splitlines()] == ["remember seats"]
    full = ok("log", "--touching", "users:u1:s", cwd=store).out
    assert full.startswith("commit ") and full.count("commit ") == 1 and "    remember seats\n" in full


def test_thread_lists_its_checkpoints_and_the_memory_commits(backend: str, tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", backend)
    chat(store)
    assert subjects(store, "--thread", "t1") == [
        "delete checkpoints of thread t1", "checkpoint t1 step 1 (loop)", "remember seats",
        "checkpoint t1 step 0 (input)", "remember plan"]
    # a commit of memory and another thread's checkpoint is that thread's; filters add up
    assert subjects(store, "--thread", "t2", "-n", "3") == [
        "t2 learns and checkpoints", "remember seats", "checkpoint t2 step 0 (input)"]
    assert "checkpoint t1 step 1 (loop)" in subjects(store, "--thread", "t2", "--touching", ".checkpoint:t1:")
    # a thread's name is escaped as MnemosyneSaver escapes it: "a:b" is not "a", nor is "a" a prefix of "a:b"
    assert subjects(store, "--thread", "a:b", "--touching", "nothing") == [
        "checkpoint a%3Ab step 0 (input)", "remember seats", "remember plan"]
    assert subjects(store, "--thread", "a")[0] == "checkpoint a step 0 (input)"
    assert "checkpoint a%3Ab step 0 (input)" not in subjects(store, "--thread", "a")


def test_a_filter_that_matches_nothing_lists_nothing(backend: str, tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", backend)
    assert ok("log", "--thread", "t1", cwd=store).out == ""
    write(store, "remember plan", 1000, {"users:u1:plan": "pro"})
    assert ok("--json", "log", "--touching", ".checkpoint:", cwd=store).json == []
    assert ok("log", "--touching", ".checkpoint:", cwd=store).out == ""
    assert ok("log", cwd=store).out.count("commit ") == 1  # without a filter, as before
    assert "log-filter" in run_mnem("--version", "--json").json["features"]
