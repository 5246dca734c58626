"""Every ``Store`` method against the real ``mnem``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import MNEM

import mnem_bridge
from mnem_bridge import (
    InvalidRefError,
    MemoryNode,
    Mnem,
    NoStoreError,
    Provenance,
    Store,
    StoreExistsError,
    agents,
)

HEX = re.compile(r"[0-9a-f]{64}")


def test_open_walks_up_as_upstream_and_create_is_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = Mnem(MNEM)
    store = mnem_bridge.init(tmp_path / "agent", client=client)
    assert store.root == tmp_path / "agent" and (store.root / ".mnem").is_dir()
    assert repr(store) == f"<mnem.Store root={str(tmp_path / 'agent')!r}>"  # upstream's repr
    assert store.format_version == 1
    deep = tmp_path / "agent" / "a" / "b"
    deep.mkdir(parents=True)
    assert mnem_bridge.open(store.root / ".mnem", client=client).root == store.root
    assert mnem_bridge.open(deep, client=client).root == store.root  # upstream's mnem.open: discovery, like git
    with pytest.raises(NoStoreError) as inside:  # create=True (MnemosyneStore, mnem-mcp --store) is exact
        mnem_bridge.open(deep, client=client, create=True)
    assert "is inside the store at" in str(inside.value) and not (deep / ".mnem").exists()
    monkeypatch.chdir(deep)  # no path: discovery from the current folder walks up
    assert mnem_bridge.open(client=client).root == store.root
    with pytest.raises(StoreExistsError) as exists:
        mnem_bridge.init(store.root, client=client)
    assert exists.value.code == "store_exists"
    with pytest.raises(NoStoreError) as missing:
        mnem_bridge.open(tmp_path / "elsewhere", client=client)
    assert missing.value.command is not None and missing.value.command.endswith("--json status")


def test_default_binary_is_the_one_beside_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no mnem on PATH
    with mnem_bridge.init(tmp_path / "s") as store:
        assert store.client.path == MNEM
        assert store.head() == "ref: main"


def test_staging_commit_and_log(bstore: Store) -> None:
    prov = Provenance(agent_step="step-1", source="ticket-1", note="n")
    obj = bstore.add("plan", {"tier": "enterprise"}, content_kind="claim", provenance=prov,
                     event_time=1_700_000_000_000)
    assert HEX.fullmatch(obj)
    bstore.add("temp", "x")
    assert bstore.staged() == [("plan", obj), ("temp", bstore.staged()[1][1])]
    assert bstore.unstage("temp") is True and bstore.unstage("temp") is False
    assert bstore.head_commit() is None and bstore.log() == []
    first = bstore.commit("open the account", author="agent", time_ms=2000)
    assert bstore.staged() == []
    [commit] = bstore.log()
    assert (commit.id, commit.parents, commit.message, commit.author, commit.time) == (
        first, (), "open the account", "agent", 2000)
    assert bstore.head() == "ref: main" and bstore.head_commit() == first
    assert bstore.resolve(first[:8]) == first and bstore.resolve("main") == first
    node = bstore.working_node("plan")
    assert node == MemoryNode("plan", {"tier": "enterprise"}, "claim", prov, 1_700_000_000_000)
    assert bstore.add_node(node) == obj  # the same node is the same object
    bstore.rm("plan")
    assert bstore.staged_deletions() == ["plan"] and bstore.working_node("plan") is None
    second = bstore.commit("drop the plan", author="agent", time_ms=3000)
    assert [c.id for c in bstore.log()] == [second, first]
    assert [c.id for c in bstore.log(first_parent=True, limit=1)] == [second]
    with pytest.raises(InvalidRefError, match="no node"):
        bstore.rm("plan")
    with pytest.raises(ValueError, match="content_kind"):
        bstore.add("x", 1, content_kind="fact")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="JSON"):
        bstore.add("x", float("nan"))


def test_author_falls_back_like_upstream_sdk(bstore: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEM_AUTHOR", "")  # the CLI would record "" verbatim; the SDK treats it as unset
    bstore.add("a", 1)
    bstore.commit("one")
    monkeypatch.setenv("MNEM_AUTHOR", "bob")
    bstore.add("a", 2)
    bstore.commit("two")
    bstore.add("a", 3)
    bstore.commit("three", author="carol")
    assert [c.author for c in bstore.log(first_parent=True)] == ["carol", "bob", "unknown"]


def test_branches_and_checkout(bstore: Store) -> None:
    base = agents.remember(bstore, "plan", "enterprise", time_ms=1)
    bstore.new_branch("exp")
    bstore.new_branch("-dash", start=base)  # a name that looks like a flag
    assert bstore.branches() == [("-dash", base), ("exp", base), ("main", base)]
    bstore.checkout("exp")
    assert bstore.head() == "ref: exp"
    bstore.add("plan", "pro")
    with pytest.raises(InvalidRefError, match="checkout refused"):
        bstore.checkout("main")
    bstore.checkout("main", discard=True)
    assert bstore.head() == "ref: main" and bstore.staged() == []
    bstore.checkout(base)
    assert bstore.head() == base
    bstore.checkout("main", create="side")
    assert bstore.head() == "ref: side"
    with pytest.raises(ValueError):
        bstore.checkout()
    with pytest.raises(InvalidRefError):
        bstore.delete_branch("side")  # the current branch
    assert bstore.delete_branch("-dash") is True
    assert bstore.delete_branch("-dash") is False


def test_branch_context_manager_returns_even_on_error(bstore: Store) -> None:
    agents.remember(bstore, "plan", "enterprise", time_ms=1)
    with bstore.branch("hypothesis") as on_branch:
        assert on_branch is bstore and bstore.head() == "ref: hypothesis"
        agents.remember(bstore, "plan", "churned", time_ms=2)
        bstore.add("scratch", "uncommitted")
    assert bstore.head() == "ref: main" and bstore.staged() == []
    assert bstore.working_node("plan").content == "enterprise"  # type: ignore[union-attr]
    assert bstore.state_at("hypothesis")["plan"].content == "churned"
    with pytest.raises(RuntimeError), bstore.branch("doomed"):
        bstore.add("scratch", 1)
        raise RuntimeError("boom")
    assert bstore.head() == "ref: main" and bstore.staged() == []
    assert [name for name, _ in bstore.branches()] == ["doomed", "hypothesis", "main"]


def test_reading_memory_and_diffs(bstore: Store) -> None:
    c1 = agents.remember_many(bstore, [{"id": "plan", "content": "enterprise"}, {"id": "owner", "content": "ann"}],
                              time_ms=1)
    c2 = agents.remember_many(bstore, [{"id": "plan", "content": "pro"}, {"id": "region", "content": "eu"}],
                              time_ms=2)
    agents.forget(bstore, "owner", time_ms=3)
    bstore.add("plan", "starter")
    memory = bstore.working_memory()
    assert list(memory) == ["plan", "region"] and memory["plan"].content == "starter"
    assert {k: n.content for k, n in bstore.state_at(c1).items()} == {"owner": "ann", "plan": "enterprise"}
    assert [(c.id, c.kind) for c in bstore.diff()] == [("plan", "modified")]
    assert [(c.id, c.kind) for c in bstore.diff(c1, c2)] == [("plan", "modified"), ("region", "added")]
    assert [(c.id, c.kind) for c in bstore.diff(c1)] == [("owner", "removed"), ("plan", "modified"),
                                                         ("region", "added")]
    [change] = bstore.diff(to=c2)  # from HEAD (owner deleted) to c2
    assert (change.id, change.kind, change.old, change.new.content) == ("owner", "added", None, "ann")  # type: ignore[union-attr]
    assert bstore.changed_by(c2) == {"plan": "modified", "region": "added"}


def test_diff_to_a_commit_from_an_unborn_branch(bstore: Store, tmp_path: Path) -> None:
    tip = agents.remember(bstore, "plan", "pro", time_ms=1)
    # HEAD on a branch with no commits while the export holds commits: allowed only while there are no refs at all
    unborn = Store.import_(tmp_path / "unborn", {**bstore.export(), "head": "ref: fresh", "refs": {}},
                           client=bstore.client)
    assert unborn.head() == "ref: fresh" and unborn.head_commit() is None
    [change] = unborn.diff(to=tip)
    assert (change.id, change.kind, change.old, change.new) == ("plan", "added", None, bstore.working_node("plan"))


def test_write_is_one_commit_and_leaves_staging_alone(bstore: Store) -> None:
    agents.remember(bstore, "old", 1, time_ms=1)
    bstore.add("staged", "keep me")
    commit, changes = bstore.write(
        [{"id": "plan", "content": None, "source": "s", "step": "p", "observation": "o", "tool_call": "t",
          "note": "n", "content_kind": "claim", "event_time": 5}],
        ["old"], message="batch", author="w", time_ms=7,
    )
    assert commit is not None and (commit.message, commit.author, commit.time) == ("batch", "w", 7)
    assert changes == {"old": "removed", "plan": "added"}
    node = bstore.state_at(commit.id)["plan"]
    assert node == MemoryNode("plan", None, "claim", Provenance("p", "o", "t", "s", "n"), 5)
    assert [node_id for node_id, _ in bstore.staged()] == ["staged"]
    assert bstore.write([], ["gone"], message="nothing", skip_missing=True) == (None, {})
    with pytest.raises(InvalidRefError):
        bstore.write([], ["gone"], message="nothing")


def test_export_and_import_keep_commit_ids(bstore: Store, tmp_path: Path) -> None:
    tip = agents.remember(bstore, "deploy-plan", {"steps": ["a", "b"], "note": "ünïcode"}, time_ms=1)
    exported = bstore.export()
    fork = Store.import_(tmp_path / "fork", exported, client=bstore.client)
    assert fork.root == tmp_path / "fork"
    assert fork.head_commit() == tip and fork.export() == exported


def test_merge_outcomes_and_resolutions(bstore: Store) -> None:
    base = agents.remember(bstore, "plan", "enterprise", time_ms=1)
    bstore.new_branch("pro")
    bstore.checkout("pro")
    theirs = agents.remember(bstore, "plan", "pro", time_ms=2)
    bstore.checkout("main")
    assert bstore.merge("pro", author="m", time_ms=3) == mnem_bridge.MergeResult("fast-forwarded", theirs, ())
    assert bstore.merge("pro", author="m", time_ms=4).status == "up-to-date"
    bstore.checkout(create="starter", target=base)
    agents.remember(bstore, "plan", "starter", time_ms=5)
    clash = bstore.merge("main", author="m", time_ms=6)
    assert not clash.ok and clash.commit is None
    [conflict] = clash.conflicts
    assert (conflict.id, conflict.kind) == ("plan", "edit/edit")
    assert (conflict.base.content, conflict.ours.content, conflict.theirs.content) == (  # type: ignore[union-attr]
        "enterprise", "starter", "pro")
    resolved = bstore.merge("main", resolutions={"plan": "theirs"}, author="m", time_ms=7)
    assert resolved.ok and resolved.status == "merged"
    [merge_commit] = bstore.log(limit=1)
    assert merge_commit.message == "merge main into starter" and len(merge_commit.parents) == 2
    bstore.checkout(create="custom", target=base)
    agents.remember(bstore, "plan", "starter", time_ms=8)
    custom = bstore.merge("main", resolutions={"plan": MemoryNode("plan", {"tier": "custom"})},
                          message="pick custom", author="m", time_ms=9)
    assert custom.status == "merged" and bstore.working_node("plan").content == {"tier": "custom"}  # type: ignore[union-attr]
    bstore.checkout(create="strategy", target=base)
    agents.remember(bstore, "plan", "starter", time_ms=10)
    assert bstore.merge("main", strategy="ours", author="m", time_ms=11).status == "merged"
    assert bstore.working_node("plan").content == "starter"  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        bstore.merge("main", strategy="mine")  # type: ignore[arg-type]


def test_blame_names_the_introducing_commit(bstore: Store) -> None:
    c1 = agents.remember(bstore, "plan", "enterprise", source="ticket-1", time_ms=2000)
    agents.remember(bstore, "contact", "ann", time_ms=3000)
    c3 = agents.remember(bstore, "plan", "pro", source="billing-note-8842", step="step-31", time_ms=4000)
    blame = bstore.blame("plan")
    assert (blame.commit, blame.node.content, blame.time) == (c3, "pro", 4000)
    assert blame.provenance == Provenance(agent_step="step-31", source="billing-note-8842")
    assert bstore.blame("plan", c1).commit == c1
    with pytest.raises(InvalidRefError):
        bstore.blame("nobody")


def test_blame_with_author_names_who_wrote_the_value_beside_upstreams_blame(bstore: Store) -> None:
    c1 = agents.remember(bstore, "plan", "enterprise", author="intake-agent", time_ms=2000)
    agents.remember(bstore, "plan", "pro", author="billing-agent", time_ms=3000)
    blame, author = bstore.blame_with_author("plan")
    assert (blame, author) == (bstore.blame("plan"), "billing-agent")
    assert list(blame.to_dict()) == ["commit", "node", "time"]  # upstream's shape, unchanged
    assert bstore.blame_with_author("plan", c1)[1] == "intake-agent"
    with pytest.raises(InvalidRefError):
        bstore.blame_with_author("nobody")
