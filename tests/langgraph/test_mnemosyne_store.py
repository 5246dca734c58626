"""MnemosyneStore as a BaseStore: batches are commits, times are history's, ids round-trip."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import pytest
from bridge.support import mnem_workers
from conftest import MNEM
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, PutOp, SearchOp
from manual_clock import ManualClock

import mnem_bridge
from mnem_langgraph import MnemosyneStore, ReadOnlyError
from mnem_langgraph.convert import from_ms

#: The ``store_root`` and ``mstore`` fixtures (tests/langgraph has no conftest.py: see that module).
pytest_plugins = ["langgraph_fixtures"]

U1 = ("memories", "u1")


def commits(store: MnemosyneStore) -> int:
    return len(store.history(limit=1000))


def test_put_get_delete_round_trip(mstore):
    mstore.put(U1, "plan", {"tier": "pro"})
    item = mstore.get(U1, "plan")
    assert (item.namespace, item.key, item.value) == (U1, "plan", {"tier": "pro"})
    mstore.put(U1, "plan", {"tier": "enterprise"})
    assert mstore.get(U1, "plan").value == {"tier": "enterprise"}
    mstore.delete(U1, "plan")
    assert mstore.get(U1, "plan") is None
    assert [c.message for c in mstore.history()] == [
        "delete memories:u1:plan", "put memories:u1:plan", "put memories:u1:plan"]
    assert {c.author for c in mstore.history()} == {"tester"}


def test_a_batch_is_one_commit_with_reads_before_writes_and_last_write_winning(mstore):
    mstore.put(U1, "old", {"v": 0})
    before = commits(mstore)
    results = mstore.batch([
        PutOp(U1, "a", {"v": 1}),
        GetOp(U1, "a"),
        PutOp(U1, "a", {"v": 2}),
        PutOp(U1, "old", None),
        SearchOp(("memories",)),
        ListNamespacesOp(),
        PutOp(("memories", "u2"), "b", {"v": 3}),
    ])
    assert results[0] is None and results[1] is None and results[2] is None and results[3] is None
    assert [i.key for i in results[4]] == ["old"]
    assert results[5] == [U1]
    assert commits(mstore) == before + 1
    assert mstore.get(U1, "a").value == {"v": 2}
    assert mstore.get(U1, "old") is None
    assert mstore.history(limit=1)[0].message == "put memories:u1:a, memories:u2:b; delete memories:u1:old"


def test_a_bad_op_anywhere_in_a_batch_changes_nothing(mstore):
    with pytest.raises(InvalidNamespaceError):
        mstore.batch([PutOp(U1, "a", {"v": 1}), PutOp(("a.b",), "k", {"v": 1})])
    with pytest.raises(InvalidNamespaceError):
        mstore.batch([PutOp(U1, "a", {"v": 1}), PutOp((), "k", {"v": 1})])
    with pytest.raises(InvalidNamespaceError, match='cannot be "langgraph"'):
        mstore.put(("langgraph", "x"), "k", {"v": 1})  # put's rule (batch accepts it, as LangGraph's stores do)
    with pytest.raises(ValueError, match="unknown keys"):
        mstore.put(U1, "a", {"v": 1, "_meta": {"confidence": 1}})
    assert commits(mstore) == 0


def test_deleting_what_does_not_exist_makes_no_commit(mstore):
    mstore.delete(U1, "ghost")
    mstore.delete((), "ghost")  # BaseStore allows it; nothing can live in the empty namespace
    assert commits(mstore) == 0
    mstore.put(U1, "real", {"v": 1})
    mstore.batch([PutOp(U1, "ghost", None), PutOp(U1, "other-ghost", None)])
    assert commits(mstore) == 1


def test_meta_becomes_provenance_and_is_stripped(mstore):
    mstore.put(U1, "plan", {"tier": "pro", "_meta": {"source": "billing-8842", "step": 31, "observation": "invoice"}})
    assert mstore.get(U1, "plan").value == {"tier": "pro"}
    blame = mstore.why(U1, "plan")
    assert blame.provenance.source == "billing-8842"
    assert blame.provenance.agent_step == "31" and blame.provenance.observation == "invoice"
    assert blame.node.content == {"tier": "pro"}


def test_times_come_from_history_not_from_the_read(store_root):
    clock = ManualClock()
    with MnemosyneStore(store_root, author="tester", mnem=MNEM, clock=clock) as mstore:
        mstore.put(U1, "plan", {"tier": "free"})
        first = mstore.get(U1, "plan")
        assert first.created_at == first.updated_at == from_ms(clock.ms)
        clock.advance(minutes=5)
        assert mstore.get(U1, "plan") == first  # reading later does not move either time
        mstore.put(U1, "plan", {"tier": "pro"})
        second = mstore.get(U1, "plan")
        assert second.created_at == first.created_at and second.updated_at == from_ms(clock.ms)
        commit_times = [c.time for c in mstore.history()]
        assert second.updated_at == from_ms(commit_times[0]) and second.created_at == from_ms(commit_times[1])
        assert from_ms(mstore.why(U1, "plan").time) == second.updated_at
        clock.advance(minutes=1)
        mstore.delete(U1, "plan")
        clock.advance(minutes=1)
        mstore.put(U1, "plan", {"tier": "pro"})
        reborn = mstore.get(U1, "plan")
        assert reborn.created_at == reborn.updated_at == from_ms(clock.ms) == from_ms(mstore.history(limit=1)[0].time)


ODD = [
    (("a:b", "c"), "k"),
    (("a", "b:c"), "k"),
    (("a",), "b:c"),
    (("100%",), "%3A"),
    (("%25",), "x%"),
    (("日本語", "ünï:cødé"), "ключ:ключ"),
    (("emoji 🧠",), ""),
]


def test_labels_and_keys_with_separators_and_escapes_round_trip(mstore):
    mstore.batch([PutOp(ns, key, {"ns": list(ns), "key": key}) for ns, key in ODD])
    for ns, key in ODD:
        assert mstore.get(ns, key).value == {"ns": list(ns), "key": key}
    found = {(i.namespace, i.key) for i in mstore.search((), limit=100)}
    assert found == set(ODD)
    assert set(mstore.list_namespaces()) == {ns for ns, _ in ODD}
    assert mstore.list_namespaces(prefix=("a",)) == [("a",), ("a", "b:c")]
    assert [i.key for i in mstore.search(("a:b",))] == ["k"]


def test_plain_ids_are_upstreams(mstore):
    mstore.put(U1, "plan", {"tier": "pro"})
    with mnem_bridge.open(mstore.root, client=mnem_bridge.Mnem(MNEM)) as raw:
        assert list(raw.working_memory()) == ["memories:u1:plan"]


def test_foreign_nodes_are_readable_but_unaddressable_ids_are_skipped(mstore):
    with mnem_bridge.open(mstore.root, client=mnem_bridge.Mnem(MNEM)) as raw:
        raw.write([{"id": "memories:u1:tier", "content": "pro"}, {"id": "plan", "content": 1},
                   {"id": "ns:50%off", "content": 2}], message="other writers")
    assert mstore.get(U1, "tier").value == {"value": "pro"}
    assert [(i.namespace, i.key) for i in mstore.search(())] == [(U1, "tier")]
    assert mstore.list_namespaces() == [U1]


def test_search_filters_query_pagination_and_order(mstore):
    mstore.batch([
        PutOp(("memories", "u2"), "plan", {"tier": "pro", "seats": 40, "meta": {"lvl": 2}}),
        PutOp(U1, "plan", {"tier": "free", "seats": "7", "meta": {"lvl": 1}}),
        PutOp(U1, "note", {"text": "Prefers ENTERPRISE billing"}),
        PutOp(("prefs", "u1"), "lang", {"code": "de"}),
    ])
    assert [(i.namespace, i.key) for i in mstore.search(("memories",))] == [
        (U1, "note"), (U1, "plan"), (("memories", "u2"), "plan")]
    assert [i.namespace for i in mstore.search(("memories",), filter={"tier": "pro"})] == [("memories", "u2")]
    assert [i.key for i in mstore.search((), filter={"seats": {"$gt": 4}})] == ["plan", "plan"]
    assert [i.key for i in mstore.search((), filter={"seats": {"$gte": 8, "$lt": 41}})] == ["plan"]
    assert [i.key for i in mstore.search((), filter={"meta": {"lvl": 1}})] == ["plan"]
    assert [i.key for i in mstore.search((), filter={"tier": {"$ne": "pro"}})] == ["note", "plan", "lang"]
    found = mstore.search((), query="enterprise")  # ADR-0016: a plain substring filter, case ignored
    assert [(i.namespace, i.key, i.score) for i in found] == [(U1, "note", None)]
    assert [i.key for i in mstore.search((), query="u1:")] == ["note", "plan", "lang"]  # node ids match too
    page = mstore.search((), limit=2, offset=1)
    assert [(i.namespace, i.key) for i in page] == [(U1, "plan"), (("memories", "u2"), "plan")]
    assert all(i.score is None for i in page)


def test_each_read_op_is_one_mnem_call_for_the_namespace_it_can_return(mstore, caplog):
    mstore.batch([PutOp(U1, "plan", {"v": 1}), PutOp(("memories", "u10"), "plan", {"v": 2}),
                  PutOp(("other",), "k", {"v": 3})])

    def read_lines(read):
        """What ``read`` returned, and the mnem commands it ran (as echoed, the lines a user reruns)."""
        caplog.clear()
        with caplog.at_level(logging.DEBUG, logger="mnem_bridge"):
            found = read()
        return found, [r.getMessage() for r in caplog.records if " --json " in r.getMessage()]

    found, lines = read_lines(lambda: mstore.search(U1))
    assert [i.namespace for i in found] == [U1] and len(lines) == 1
    assert " search '--namespace=[\"memories\",\"u1\"]' --limit=10 --offset=0 --live --" in lines[0]
    # The gets of a batch are one read, each search one more.
    found, lines = read_lines(lambda: mstore.batch([GetOp(("other",), "k"), SearchOp(("memories", "u10"))]))
    assert found[0].value == {"v": 3} and [i.value for i in found[1]] == [{"v": 2}]
    assert [line.split(" --json ")[1].split()[0] for line in lines] == ["stamps", "search"]
    assert lines[0].endswith(" stamps --live --node=other:k --")
    found, lines = read_lines(lambda: mstore.list_namespaces(prefix=("memories", "*")))
    assert found == [U1, ("memories", "u10")] and len(lines) == 1
    assert " namespaces --limit=100 --offset=0 --live '--prefix=[\"memories\",\"*\"]' --" in lines[0]
    found, lines = read_lines(lambda: mstore.batch([ListNamespacesOp(), SearchOp(("other",))]))
    assert found[0] == [U1, ("memories", "u10"), ("other",)] and [i.key for i in found[1]] == ["k"]
    assert [line.split(" --json ")[1].split()[0] for line in lines] == ["namespaces", "search"]


def test_list_namespaces_has_no_phantoms_and_supports_the_conditions(mstore):
    mstore.get(("ghost",), "k")
    mstore.batch([PutOp(("a", "b", "c"), "k", {}), PutOp(("a", "x", "c"), "k", {}), PutOp(("z",), "k", {}),
                  PutOp(("gone",), "k", {})])
    mstore.delete(("gone",), "k")
    assert mstore.list_namespaces() == [("a", "b", "c"), ("a", "x", "c"), ("z",)]
    assert mstore.list_namespaces(prefix=("a", "*", "c")) == [("a", "b", "c"), ("a", "x", "c")]
    assert mstore.list_namespaces(suffix=("x", "*")) == [("a", "x", "c")]
    assert mstore.list_namespaces(max_depth=1) == [("a",), ("z",)]
    assert mstore.list_namespaces(limit=1, offset=1) == [("a", "x", "c")]


def test_at_reads_the_past_and_refuses_writes(mstore):
    mstore.put(U1, "plan", {"tier": "free"})
    then = mstore.history(limit=1)[0].id
    mstore.put(U1, "plan", {"tier": "pro"})
    mstore.put(U1, "seats", {"n": 3})
    past = mstore.at(then[:10])
    assert past.commit == then
    assert past.get(U1, "plan").value == {"tier": "free"}
    assert past.get(U1, "seats") is None
    assert [i.key for i in past.search(U1)] == ["plan"]
    assert past.list_namespaces() == [U1]
    pinned = mstore.at("main")
    mstore.put(U1, "later", {"v": 1})
    assert pinned.get(U1, "later") is None  # resolved once, when the view was made
    with pytest.raises(ReadOnlyError, match="read-only"):
        past.put(U1, "plan", {"tier": "hacked"})
    with pytest.raises(ReadOnlyError):
        past.delete(U1, "plan")
    assert mstore.get(U1, "plan").value == {"tier": "pro"}


def test_branches_isolate_and_switch_moves_reads_and_writes(mstore):
    mstore.put(U1, "plan", {"tier": "free"})
    assert mstore.branch("hypothesis") == "hypothesis"
    mstore.switch("hypothesis")
    mstore.put(U1, "plan", {"tier": "pro"})
    assert mstore.get(U1, "plan").value == {"tier": "pro"}
    mstore.switch("main")
    assert mstore.get(U1, "plan").value == {"tier": "free"}
    assert mstore.at("hypothesis").get(U1, "plan").value == {"tier": "pro"}


def test_merge_brings_a_branch_in_and_reports_conflicts_by_item(mstore):
    mstore.put(U1, "plan", {"tier": "free"})
    mstore.branch("hypothesis")
    mstore.switch("hypothesis")
    mstore.put(U1, "plan", {"tier": "pro", "_meta": {"source": "hypothesis-check"}})
    written = mstore.get(U1, "plan").updated_at
    mstore.switch("main")
    mstore.put(U1, "seats", {"n": 5})
    result = mstore.merge("hypothesis")
    assert result.ok and result.status == "merged"
    assert mstore.get(U1, "plan").value == {"tier": "pro"}
    assert mstore.get(U1, "plan").updated_at == written  # written on the branch, not at the merge
    assert mstore.why(U1, "plan").provenance.source == "hypothesis-check"
    assert mstore.history(limit=1)[0].author == "tester"

    mstore.branch("other")
    mstore.put(U1, "seats", {"n": 6})
    mstore.switch("other")
    mstore.put(U1, "seats", {"n": 7})
    mstore.switch("main")
    conflicted = mstore.merge("other")
    assert not conflicted.ok and [c.id for c in conflicted.conflicts] == ["memories:u1:seats"]
    assert mstore.get(U1, "seats").value == {"n": 6}  # nothing was written
    resolved = mstore.merge("other", resolutions={(U1, "seats"): {"n": 13}})
    assert resolved.ok and mstore.get(U1, "seats").value == {"n": 13}
    with pytest.raises(ValueError, match="records no provenance"):
        mstore.merge("other", resolutions={(U1, "seats"): {"n": 1, "_meta": {"source": "x"}}})


def test_async_methods_answer_as_the_sync_ones_do(mstore):
    async def scenario():
        await mstore.aput(U1, "plan", {"tier": "pro"})
        item = await mstore.aget(U1, "plan")
        found = await mstore.asearch(("memories",), query="PRO")
        spaces = await mstore.alist_namespaces()
        await mstore.adelete(U1, "plan")
        gone = await mstore.aget(U1, "plan")
        together = await asyncio.gather(*(mstore.aput(U1, f"k{i}", {"i": i}) for i in range(3)))
        return item, found, spaces, gone, together

    item, found, spaces, gone, together = asyncio.run(scenario())
    assert item.value == {"tier": "pro"} and [i.key for i in found] == ["plan"] and spaces == [U1]
    assert gone is None and together == [None, None, None]
    assert sorted(i.key for i in mstore.search(U1)) == ["k0", "k1", "k2"]


def read_bytes(pid: int) -> int:
    """How many bytes process ``pid`` has read so far (``rchar`` in /proc): it grows when a worker reads a request."""
    return int(next(line.split()[1] for line in Path(f"/proc/{pid}/io").read_text().splitlines()
                    if line.startswith("rchar:")))


def test_an_async_write_waiting_for_mnem_leaves_the_event_loop_running(store_root):
    """While ``aput`` waits for ``mnem``, the event loop runs other tasks: here the only one that can end the wait.

    The test holds the store's write lock.  Another task on the loop lets it
    go once the worker has read the write's request, so the write can finish
    only if the loop kept turning while the call waited for ``mnem``; a
    blocked loop would leave the write to fail ``busy``.  Nothing is timed.
    """
    before = mnem_workers()
    with MnemosyneStore(store_root, author="tester", mnem=MNEM) as mstore:
        assert mstore.get(U1, "plan") is None  # starts the store's worker
        [worker] = mnem_workers() - before
        holder = sqlite3.connect(store_root / ".mnem" / "store.sqlite3", isolation_level=None)

        async def scenario():
            idle = read_bytes(worker)

            async def release_once_the_worker_has_the_request():
                while read_bytes(worker) == idle:
                    await asyncio.sleep(0)
                holder.execute("ROLLBACK")

            releaser = asyncio.create_task(release_once_the_worker_has_the_request())
            holder.execute("BEGIN IMMEDIATE")
            await mstore.aput(U1, "plan", {"tier": "pro"})
            await releaser

        try:
            asyncio.run(scenario())
        finally:
            holder.close()
        assert mstore.get(U1, "plan").value == {"tier": "pro"}


def test_async_view(mstore):
    mstore.put(U1, "plan", {"tier": "pro"})
    view = mstore.at("main")
    assert asyncio.run(view.aget(U1, "plan")).value == {"tier": "pro"}


def test_path_none_finds_the_store_from_cwd_or_mnem_store(store_root, tmp_path, monkeypatch):
    (store_root / "deep" / "er").mkdir(parents=True)
    monkeypatch.chdir(store_root / "deep" / "er")
    with MnemosyneStore(mnem=MNEM) as found:
        assert found.root == store_root
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MNEM_STORE", str(store_root))
    with MnemosyneStore(mnem=MNEM) as found:
        assert found.root == store_root
    monkeypatch.delenv("MNEM_STORE")
    with pytest.raises(mnem_bridge.NoStoreError):
        MnemosyneStore(tmp_path, mnem=MNEM)


def test_values_must_be_json(mstore):
    with pytest.raises(ValueError, match="JSON"):
        mstore.put(U1, "k", {"when": object()})
    assert commits(mstore) == 0


def test_close_ends_the_stores_mnem_worker(store_root):
    before = mnem_workers()
    with MnemosyneStore(store_root, mnem=MNEM) as store:
        store.put(U1, "plan", {"tier": "pro"})
        assert store.get(U1, "plan").value == {"tier": "pro"}
        started = mnem_workers() - before
        assert len(started) == 1  # every call went through one worker
    assert not mnem_workers() & started
