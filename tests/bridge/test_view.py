"""``Store.on(branch)``: every public method of ``Store`` honours the view's branch or refuses; none reads HEAD's.

The store has two diverged branches: ``main`` (checked out) and ``side``.
A method that honours the branch answers on a view of ``side`` what the
store itself answers with ``side`` checked out, and not what it answers on
``main``; one that refuses raises ``UsageError`` and changes nothing; one
about the whole store answers as the store does.  The walk fails if
``Store`` gains a public method this file does not classify.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import MNEM

import mnem_bridge
from mnem_bridge import MemoryNode, Store, UsageError
from mnem_bridge.store import pack_vector

MODEL = "m"
VECTOR, ASKEW = {"content": pack_vector([1.0, 0.0])}, {"content": pack_vector([0.0, 1.0])}
LATER = 4_000_000_000_000  # a valid time after every commit

#: Reads that honour the branch: the view on ``side`` answers as the store with ``side`` checked out.
HONOURS: dict[str, Callable[[Store], Any]] = {
    "head": lambda s: s.head(),
    "head_commit": lambda s: s.head_commit(),
    "log": lambda s: s.log(),
    "log_attributed": lambda s: s.log_attributed(),
    "working_memory": lambda s: s.working_memory(),
    "memory_page": lambda s: s.memory_page(limit=10).document,
    "whole_memory": lambda s: s.whole_memory().document,
    "working_node": lambda s: s.working_node("plan"),
    "node_ids": lambda s: s.node_ids(),
    "node_objects": lambda s: s.node_objects(),
    "node_times": lambda s: s.node_times(),
    "memory_valid_at": lambda s: s.memory_valid_at(LATER),
    "node_valid_at": lambda s: s.node_valid_at("plan", LATER),
    "valid_times": lambda s: s.valid_times(LATER),
    "similar": lambda s: s.similar(MODEL, [1.0, 0.0]),
    "diff": lambda s: s.diff("main"),
    "blame": lambda s: s.blame("plan"),
    "blame_with_author": lambda s: s.blame_with_author("plan"),
    "blame_attributed": lambda s: s.blame_attributed("plan"),
    "bisect": lambda s: s.bisect(node="plan", equals=2),
    "bisect_explain": lambda s: s.bisect_explain("plan", equals=2),
    "embed": lambda s: s.embed(MODEL, {"extra": VECTOR}),  # ``extra`` is only on ``side``
    "search": lambda s: s.search(("users",)),
    "namespaces": lambda s: s.namespaces(),
}

#: Calls a view refuses: each acts on HEAD's branch only.
REFUSES: dict[str, Callable[[Store], Any]] = {
    "add": lambda s: s.add("x", 1),
    "add_node": lambda s: s.add_node(MemoryNode("x", 1)),
    "rm": lambda s: s.rm("plan"),
    "staged": lambda s: s.staged(),
    "staged_deletions": lambda s: s.staged_deletions(),
    "unstage": lambda s: s.unstage("plan"),
    "commit": lambda s: s.commit("c"),
    "checkout": lambda s: s.checkout("side"),
    "branch": lambda s: s.branch("new"),
    "merge": lambda s: s.merge("main"),
    "pull": lambda s: s.pull("origin"),
    "touch": lambda s: s.touch(["plan"]),
    "expire": lambda s: s.expire(),
    "revert": lambda s: s.revert(source="anything"),
}

#: Reads given ``live=True``, which a view refuses (``mnem`` applies leases to HEAD's branch only).
LIVE: list[Callable[[Store], Any]] = [
    lambda s: s.node_ids(live=True), lambda s: s.node_times(live=True), lambda s: s.node_objects(live=True),
    lambda s: s.similar(MODEL, [1.0, 0.0], live=True), lambda s: s.search(live=True),
    lambda s: s.namespaces(live=True),
]

#: About the whole store: a view answers as the store itself does.
WHOLE: dict[str, Callable[[Store], Any]] = {
    "branches": lambda s: s.branches(),
    "resolve": lambda s: s.resolve("main"),
    "state_at": lambda s: s.state_at("main"),
    "changed_by": lambda s: s.changed_by("main"),
    "format_version": lambda s: s.format_version,
    "export": lambda s: s.export(),
    "remotes": lambda s: s.remotes(),
    "advertise": lambda s: s.advertise(),
    "upload_pack": lambda s: s.upload_pack([s.resolve("side")], []),
    "client": lambda s: s.client,
    "view_branch": lambda s: s.view_branch is None or s.view_branch == "side",
    "redactions": lambda s: s.redactions(),
    "redact": lambda s: s.redact(nodes=["plan"], reason="erasure request", dry_run=True).to_dict(),
    "gc": lambda s: (lambda done: (done.commits, done.objects))(s.gc(dry_run=True)),  # not the files' sizes
    "redaction_ranges": lambda s: s.redaction_ranges(["", "a"]),
}

#: Writes, and the rest: each checked by its own test below.
OTHERS = {"write", "new_branch", "push", "fetch", "remote_add", "remote_remove", "delete_branch", "receive_pack",
          "upload_pack_to", "import_", "close", "last_command", "on", "receive_redactions"}


@pytest.fixture
def diverged(tmp_path: Path) -> Iterator[Store]:
    """``main``: plan=1, then only=4; ``side`` from the first commit: plan=2, extra=3. ``main`` checked out."""
    with mnem_bridge.Mnem(MNEM) as client, mnem_bridge.init(tmp_path / "store", client=client) as store:
        store.write([{"id": "plan", "content": 1}], message="one", time_ms=1_000)
        store.new_branch("side")
        store.write([{"id": "plan", "content": 2}, {"id": "extra", "content": 3}], message="two", time_ms=2_000,
                     branch="side")
        store.write([{"id": "only", "content": 4}], message="four", time_ms=3_000)
        store.embed(MODEL, {"plan": ASKEW}, at="main")
        store.embed(MODEL, {"plan": VECTOR}, at="side")
        store.write([{"id": "users:a", "content": {"n": 1}}], message="item", time_ms=2_500, branch="side")
        yield store


def _on_side(store: Store, call: Callable[[Store], Any]) -> Any:
    store.checkout("side")
    try:
        return call(store)
    finally:
        store.checkout("main")


def _answer(store: Store, call: Callable[[Store], Any]) -> Any:
    """What ``call`` answers, or the error it raises (``main`` cannot answer some questions ``side`` can)."""
    try:
        return call(store)
    except mnem_bridge.MnemError as exc:
        return exc


def test_every_public_method_is_classified() -> None:
    public = {name for name, _ in inspect.getmembers(Store) if not name.startswith("_")}
    classified = [*HONOURS, *REFUSES, *WHOLE, *OTHERS]
    assert len(classified) == len(set(classified))
    assert public == set(classified)


@pytest.mark.parametrize("name", sorted(HONOURS))
def test_a_read_on_a_view_answers_as_its_branch_checked_out_would(diverged: Store, name: str) -> None:
    view = diverged.on("side")
    got = HONOURS[name](view)
    assert diverged.head() == "ref: main"  # the view moved nothing
    assert got == _on_side(diverged, HONOURS[name])
    assert got != _answer(diverged, HONOURS[name])  # and is not what HEAD's branch answers


@pytest.mark.parametrize("name", sorted(REFUSES))
def test_a_call_only_heads_branch_can_answer_is_refused_on_a_view(diverged: Store, name: str) -> None:
    before = diverged.export()
    with pytest.raises(UsageError) as caught:
        REFUSES[name](diverged.on("side"))
    assert caught.value.code == "usage" and "a view on branch 'side' (Store.on) cannot" in caught.value.message
    assert diverged.export() == before and diverged.head() == "ref: main"


@pytest.mark.parametrize("index", range(len(LIVE)))
def test_a_live_read_is_refused_on_a_view(diverged: Store, index: int) -> None:
    with pytest.raises(UsageError, match="mnem applies TTL leases only to reads of HEAD's branch"):
        LIVE[index](diverged.on("side"))
    LIVE[index](diverged)  # the store itself reads live


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_a_whole_store_call_answers_as_on_the_store(diverged: Store, name: str) -> None:
    assert WHOLE[name](diverged.on("side")) == WHOLE[name](diverged)


def test_a_write_lands_on_the_views_branch_and_another_branch_is_refused(diverged: Store) -> None:
    main = diverged.resolve("main")
    view = diverged.on("side")
    commit, changes = view.write([{"id": "new", "content": 5}], message="w")
    assert commit is not None and changes == {"new": "added"}
    assert diverged.resolve("side") == commit.id and diverged.resolve("main") == main
    with pytest.raises(UsageError, match="writes on that branch, not on 'main'"):
        view.write([{"id": "new", "content": 6}], message="w", branch="main")
    assert view.write([{"id": "new", "content": 6}], message="w", branch="side")[0] is not None


def test_a_branch_that_does_not_exist_reads_as_empty_and_its_first_write_creates_it(diverged: Store) -> None:
    view = diverged.on("fork")
    assert (view.head_commit(), view.log(), view.working_memory(), view.node_ids(), view.node_times()) == (
        None, [], {}, [], {})
    assert view.memory_page(limit=5).document == {"memory": {}, "next_cursor": None}
    assert (view.whole_memory().json, view.whole_memory().document) == (b"{}", {})
    assert (view.working_node("plan"), view.similar(MODEL, [1.0, 0.0]), view.node_objects()) == (None, {}, (
        None, {}, []))
    commit, _ = view.write([{"id": "a", "content": 1}], message="first")
    assert commit is not None and view.head_commit() == commit.id and view.node_ids() == ["a"]
    with pytest.raises(mnem_bridge.InvalidRefError):  # a revision the caller names is not the view's to excuse
        view.node_ids(at="nope")


def test_new_branch_starts_at_the_views_branch(diverged: Store) -> None:
    diverged.on("side").new_branch("from-side")
    assert diverged.resolve("from-side") == diverged.resolve("side")


def test_remote_verbs_act_on_the_store_and_push_defaults_to_the_views_branch(diverged: Store, tmp_path: Path) -> None:
    with mnem_bridge.init(tmp_path / "remote", client=diverged.client) as remote:
        view = diverged.on("side")
        view.remote_add("origin", remote.root)
        assert [r.name for r in diverged.remotes()] == ["origin"]
        view.push("origin")
        assert remote.branches() == [("side", diverged.resolve("side"))]
        view.fetch("origin")
        assert diverged.remotes()[0].branches == {"origin/side": diverged.resolve("side")}
        assert view.remote_remove("origin").name == "origin" and diverged.remotes() == []


def test_serving_and_branch_verbs_act_on_the_whole_store(diverged: Store, tmp_path: Path) -> None:
    view = diverged.on("side")
    tip = diverged.resolve("side")
    assert view.upload_pack_to(tmp_path / "pack", [tip], [])["commits"] == len(diverged.on("side").log())
    view.receive_pack(tmp_path / "pack", "copy", None, tip)
    assert diverged.resolve("copy") == tip
    assert view.delete_branch("copy") and "copy" not in dict(diverged.branches())
    copy = view.import_(tmp_path / "copy", view.export(), client=diverged.client)
    assert copy.branches() == diverged.branches()


def test_a_view_shares_its_stores_client_and_closing_it_leaves_that_open(diverged: Store) -> None:
    view = diverged.on("side")
    view.node_ids()
    assert view.last_command == diverged.last_command and view.client is diverged.client
    view.close()
    assert diverged.node_ids() == ["only", "plan"]
    assert view.on("main").head() == "ref: main" and repr(view) == f"<mnem.Store root={str(view.root)!r} on='side'>"
    with pytest.raises(UsageError, match="needs a branch name"):
        diverged.on("")
