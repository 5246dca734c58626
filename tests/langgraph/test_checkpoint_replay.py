"""Checkpoint-coupled memory: a graph replayed from a past checkpoint reads memory as of that checkpoint.

A real ``StateGraph`` compiled with ``MnemosyneSaver(couple_memory=True)``
and a ``MnemosyneStore`` on the same store writes a fact at each of four
steps, the third a mistake.  Replayed from the checkpoint after step 2, its
nodes read the memory of step 2 (the mistake is invisible), their writes go
on a ``replay/...`` branch the replay made, and the original branch, its
log and its memory, is exactly as before; the two compare and merge with
the bridge's ``diff`` and the store's ``merge``.  Looking at a past
checkpoint (``get_state``, the history) makes no branch and no commit, and
without the flag a replay writes where it always did.  Both backends.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pg_stores
import pytest
from conftest import BACKENDS, MNEM, new_store
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

import mnem_bridge
from mnem_langgraph import MnemosyneSaver, MnemosyneStore, checkpoint
from mnem_langgraph.checkpoint import CHECKPOINT_BRANCH
from mnem_langgraph.coupling import CHECKPOINT_MAP_KEY, CHECKPOINTER_KEY, DURABILITY_KEY

#: The ``verbs`` fixture, which counts ``mnem`` calls (tests/langgraph has no conftest.py: see that module).
pytest_plugins = ["langgraph_fixtures"]

PLAN = (("customers", "acme"), "plan")
#: What each step believes; step 3's is the mistake the user rewinds.
BELIEFS = {1: "trial", 2: "pro", 3: "free (misread)", 4: "free (misread), renewal cancelled"}


class Run(TypedDict, total=False):
    seen: Annotated[list[str], operator.add]


def step(number: int, belief: str) -> Any:
    """A node that reads the plan, then writes what it believes now."""
    def node(state: Run, runtime: Runtime) -> Run:
        assert runtime.store is not None
        found = runtime.store.get(*PLAN)
        runtime.store.put(*PLAN, {"plan": belief, "_meta": {"source": "test", "step": number}})
        return {"seen": [f"s{number} saw {found.value['plan'] if found else None}"]}

    async def anode(state: Run, runtime: Runtime) -> Run:
        assert runtime.store is not None
        found = await runtime.store.aget(*PLAN)
        await runtime.store.aput(*PLAN, {"plan": belief, "_meta": {"source": "test", "step": number}})
        return {"seen": [f"s{number} saw {found.value['plan'] if found else None}"]}

    node.__name__, anode.__name__ = f"s{number}", f"s{number}"
    return node, anode


def build(saver: MnemosyneSaver, store: MnemosyneStore, *, asynchronous: bool = False,
          beliefs: dict[int, str] = BELIEFS) -> Any:
    graph = StateGraph(Run)
    for number, belief in beliefs.items():
        graph.add_node(f"s{number}", step(number, belief)[1 if asynchronous else 0])
    graph.add_edge(START, "s1")
    for number in range(1, len(beliefs)):
        graph.add_edge(f"s{number}", f"s{number + 1}")
    graph.add_edge(f"s{len(beliefs)}", END)
    return graph.compile(checkpointer=saver, store=store)


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


@pytest.fixture(params=BACKENDS)
def address(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return pg_stores.address(new_store(tmp_path / "memory", request.param))


@pytest.fixture
def bridge(address: str) -> Iterator[mnem_bridge.Store]:
    opened = mnem_bridge.open(address, client=mnem_bridge.Mnem(MNEM), exact=True)
    try:
        yield opened
    finally:
        opened.client.close()


@pytest.fixture
def coupled(address: str) -> Iterator[MnemosyneSaver]:
    with MnemosyneSaver(address, author="graph", mnem=MNEM, couple_memory=True) as opened:
        yield opened


@pytest.fixture
def mstore(address: str) -> Iterator[MnemosyneStore]:
    with MnemosyneStore(address, author="graph", mnem=MNEM) as opened:
        yield opened


def timeline(bridge: mnem_bridge.Store) -> tuple[str, list[str], dict[str, Any]]:
    """HEAD's branch as the test compares it: its name, its log (commit ids) and its memory (id -> content)."""
    return bridge.head(), [commit.id for commit in bridge.log()], {
        node_id: node.content for node_id, node in bridge.working_memory().items()}


def after_step(app: Any, name: str, number: int) -> Any:
    """The checkpoint saved once step ``number`` ran (the one whose next node is the following step)."""
    return next(snapshot for snapshot in app.get_state_history(thread(name))
                if snapshot.next == (f"s{number + 1}",))


def test_a_replay_reads_memory_as_of_its_checkpoint_and_writes_on_a_new_branch(coupled, mstore, bridge):
    app = build(coupled, mstore)
    assert app.invoke({"seen": []}, thread("t1"))["seen"] == [
        "s1 saw None", "s2 saw trial", "s3 saw pro", "s4 saw free (misread)"]
    assert mstore.get(*PLAN).value == {"plan": BELIEFS[4]}
    main_before = timeline(bridge)
    assert main_before[0] == "ref: main" and list(main_before[2]) == ["customers:acme:plan"], "no checkpoint in memory"
    assert len(main_before[1]) == 4, "the memory branch holds the four memory commits, no checkpoint"
    checkpoints = list(app.get_state_history(thread("t1")))

    # Each checkpoint recorded the memory commit it ran with: the one after step 2 holds step 2's belief.
    rewind = after_step(app, "t1", 2)
    pin = coupled.memory_of(rewind.config)
    assert pin is not None and pin.branch is None  # the original timeline is HEAD's branch
    assert pin.commit is not None and mstore.at(pin.commit).get(*PLAN).value == {"plan": "pro"}

    replayed = app.invoke(None, rewind.config)
    assert replayed["seen"] == ["s1 saw None", "s2 saw trial", "s3 saw pro", "s4 saw free (misread)"]

    # The original branch is byte for byte what it was, and HEAD did not move.
    assert timeline(bridge) == main_before and mstore.get(*PLAN).value == {"plan": BELIEFS[4]}

    # The replay's writes are on the branch it made, from step 2's commit: two commits (steps 3 and 4) on it.
    latest = app.get_state(thread("t1"))
    branch = coupled.memory_of(latest.config).branch  # type: ignore[union-attr]
    assert branch is not None and branch.startswith("replay/t1/")
    assert set(dict(bridge.branches())) == {"main", CHECKPOINT_BRANCH, branch}
    assert [change.id for change in bridge.diff(pin.commit, branch)] == ["customers:acme:plan"]
    assert mstore.at(branch).get(*PLAN).value == {"plan": BELIEFS[4]}
    assert [c.id for c in bridge.log()][2:] == main_before[1][2:]

    # LangGraph's history lists both forks of the thread.
    history = list(app.get_state_history(thread("t1")))
    assert {s.config["configurable"]["checkpoint_id"] for s in checkpoints} < {
        s.config["configurable"]["checkpoint_id"] for s in history}

    # The two compare with the bridge's three-dot diff: what the replay did since it left step 2.
    proposed = bridge.diff("main", branch, merge_base=True)
    assert [(change.id, change.by.message) for change in proposed] == [("customers:acme:plan",
                                                                        "put customers:acme:plan")]


def test_the_replay_sees_its_own_writes_and_the_original_keeps_the_mistake(coupled, mstore, bridge):
    app = build(coupled, mstore)
    app.invoke({"seen": []}, thread("t2"))
    rewind = after_step(app, "t2", 2)
    main_before = timeline(bridge)

    fixed = build(coupled, mstore, beliefs={**BELIEFS, 3: "pro (checked)", 4: "pro, renewal on"})
    result = fixed.invoke(None, rewind.config)
    assert result["seen"] == ["s1 saw None", "s2 saw trial", "s3 saw pro", "s4 saw pro (checked)"]

    branch = coupled.memory_of(fixed.get_state(thread("t2")).config).branch  # type: ignore[union-attr]
    assert branch is not None
    assert mstore.at(branch).get(*PLAN).value == {"plan": "pro, renewal on"}
    assert timeline(bridge) == main_before and mstore.get(*PLAN).value == {"plan": BELIEFS[4]}
    assert mstore.why(*PLAN).provenance.agent_step == "4"

    # The thread goes on from its latest checkpoint, on the replay's branch.
    more = fixed.invoke({"seen": []}, thread("t2"))
    assert more["seen"][-4] == "s1 saw pro, renewal on"
    assert timeline(bridge) == main_before

    # And the user merges the corrected timeline back.
    merged = mstore.merge(branch, strategy="theirs")
    assert merged.ok and mstore.get(*PLAN).value == {"plan": "pro, renewal on"}


def test_looking_at_a_past_checkpoint_switches_nothing(coupled, mstore, bridge):
    app = build(coupled, mstore)
    app.invoke({"seen": []}, thread("t3"))
    branches, main_before = bridge.branches(), timeline(bridge)
    rewind = after_step(app, "t3", 2)
    assert app.get_state(rewind.config).values["seen"] == ["s1 saw None", "s2 saw trial"]
    assert coupled.get_tuple(rewind.config) is not None
    assert len(list(app.get_state_history(rewind.config))) > 0
    assert bridge.branches() == branches and timeline(bridge) == main_before


def test_without_the_flag_a_replay_writes_on_the_memory_branch_as_before(address, mstore, bridge):
    with MnemosyneSaver(address, author="graph", mnem=MNEM) as plain:
        app = build(plain, mstore)
        app.invoke({"seen": []}, thread("t4"))
        rewind = after_step(app, "t4", 2)
        assert plain.memory_of(rewind.config) is None
        assert app.invoke(None, rewind.config)["seen"][2] == f"s3 saw {BELIEFS[4]}"  # today's memory, not step 2's
        assert [name for name, _ in bridge.branches()] == ["main"]
        assert any(node_id.startswith(".checkpoint:") for node_id in bridge.node_ids())


def test_an_async_replay_is_coupled_too(coupled, mstore, bridge):
    app = build(coupled, mstore, asynchronous=True)

    async def run() -> tuple[tuple[str, list[str], dict[str, Any]], dict[str, Any], Any]:
        await app.ainvoke({"seen": []}, thread("t5"))
        before = timeline(bridge)
        async for rewind in app.aget_state_history(thread("t5")):
            if rewind.next == ("s3",):
                break
        return before, await app.ainvoke(None, rewind.config), (await app.aget_state(thread("t5"))).config

    main_before, result, latest = asyncio.run(run())
    assert result["seen"][2:] == ["s3 saw pro", "s4 saw free (misread)"]
    branch = coupled.memory_of(latest).branch  # type: ignore[union-attr]
    assert branch is not None and mstore.at(branch).get(*PLAN).value == {"plan": BELIEFS[4]}
    assert timeline(bridge) == main_before


def test_an_interrupt_and_its_resume_stay_on_the_original_branch(coupled, mstore, bridge):
    def ask(state: Run, runtime: Runtime) -> Run:
        answer = interrupt("which plan?")
        assert runtime.store is not None
        runtime.store.put(*PLAN, {"plan": answer})
        return {"seen": [f"user said {answer}"]}

    graph = StateGraph(Run)
    graph.add_node("s1", step(1, "trial")[0])
    graph.add_node("ask", ask)
    graph.add_edge(START, "s1")
    graph.add_edge("s1", "ask")
    app = graph.compile(checkpointer=coupled, store=mstore)
    assert app.invoke({"seen": []}, thread("t10"))["__interrupt__"][0].value == "which plan?"
    assert app.invoke(Command(resume="pro"), thread("t10"))["seen"] == ["s1 saw None", "user said pro"]
    assert set(dict(bridge.branches())) == {"main", CHECKPOINT_BRANCH}  # a resume at the latest is no fork
    assert mstore.get(*PLAN).value == {"plan": "pro"}
    assert coupled.memory_of(app.get_state(thread("t10")).config) == (None, bridge.head_commit())


def test_durability_sync_and_exit(coupled, mstore, bridge):
    app = build(coupled, mstore)
    app.invoke({"seen": []}, thread("t6"), durability="sync")
    rewind = after_step(app, "t6", 2)
    assert app.invoke(None, rewind.config, durability="sync")["seen"][2] == "s3 saw pro"
    # With "exit" no checkpoint is stored during the run: nothing to wait for, memory stays on HEAD's branch.
    app.invoke({"seen": []}, thread("t7"), durability="exit")
    assert coupled.memory_of(app.get_state(thread("t7")).config) is not None


def test_the_config_keys_the_store_reads_are_where_langgraph_puts_them(coupled, mstore):
    seen: dict[str, Any] = {}

    def look(state: Run) -> Run:
        seen.update(get_config()["configurable"])
        return {}

    graph = StateGraph(Run)
    graph.add_node("look", look)
    graph.add_edge(START, "look")
    app = graph.compile(checkpointer=coupled, store=mstore)
    app.invoke({"seen": []}, thread("t8"))
    assert seen[CHECKPOINTER_KEY] is coupled and DURABILITY_KEY not in seen  # absent means LangGraph's "async"
    assert seen[CHECKPOINT_MAP_KEY][""] == coupled.get_tuple(thread("t8")).parent_config[  # type: ignore[union-attr]
        "configurable"]["checkpoint_id"]
    app.invoke({"seen": []}, thread("t8"), durability="exit")
    assert seen[DURABILITY_KEY] == "exit"


def test_coupling_costs_what_the_docs_say(coupled, mstore, verbs):
    calls: dict[str, list[str]] = {}

    def look(state: Run, runtime: Runtime) -> Run:
        assert runtime.store is not None
        verbs.seen.clear()
        runtime.store.get(*PLAN)
        calls["get"] = list(verbs.seen)
        return {}

    graph = StateGraph(Run)
    graph.add_node("look", look)
    graph.add_edge(START, "look")
    app = graph.compile(checkpointer=coupled, store=mstore)
    app.invoke({"seen": []}, thread("t11"), durability="sync")
    assert calls["get"] == ["stamps"], "the pin of the step's checkpoint is kept: no call to find the branch"

    verbs.seen.clear()
    latest = coupled.get_tuple(thread("t11"))
    assert latest is not None
    verbs.seen.clear()
    checkpoint = {**latest.checkpoint, "id": empty_checkpoint()["id"]}  # the next checkpoint: a later id
    assert checkpoint["id"] > latest.checkpoint["id"]
    coupled.put(latest.config, checkpoint, {"source": "update", "step": 9}, {})  # type: ignore[arg-type]
    assert verbs.seen == ["show", "status", "write"], (
        "a coupled put: one page read for a later checkpoint than its parent, the memory commit, the write")


def test_checkpoints_live_on_their_own_branch(coupled, mstore, bridge):
    build(coupled, mstore).invoke({"seen": []}, thread("t9"))
    assert CHECKPOINT_BRANCH in dict(bridge.branches())
    assert all(node_id.startswith(".checkpoint:") for node_id in bridge.node_ids(at=CHECKPOINT_BRANCH))
    assert not any(node_id.startswith(".checkpoint:") for node_id in bridge.node_ids())


def test_deleting_or_pruning_a_thread_lets_go_of_its_pins(coupled, mstore, address):
    """A deleted checkpoint has no pin (``memory_pin``: None for one not stored), nor does the saver keep one."""
    app = build(coupled, mstore)
    app.invoke({"seen": []}, thread("gone"))
    app.invoke({"seen": []}, thread("pruned"))
    gone, pruned = list(app.get_state_history(thread("gone"))), list(app.get_state_history(thread("pruned")))
    assert all(coupled.memory_of(snapshot.config) is not None for snapshot in gone + pruned)

    coupled.delete_thread("gone")
    assert [coupled.memory_of(snapshot.config) for snapshot in gone] == [None] * len(gone)
    assert not [place for place in coupled._pins if place[0] == "gone"]

    coupled.prune(["pruned"])  # keeps the latest checkpoint, and so its pin
    latest, *older = pruned
    assert coupled.memory_of(latest.config) is not None
    assert [coupled.memory_of(snapshot.config) for snapshot in older] == [None] * len(older)
    assert [place[1] for place in coupled._pins if place[0] == "pruned"] == [
        latest.config["configurable"]["checkpoint_id"]]
    with MnemosyneSaver(address, author="graph", mnem=MNEM, couple_memory=True) as fresh:
        assert fresh.memory_of(latest.config) == coupled.memory_of(latest.config)


def test_a_long_run_keeps_a_bounded_number_of_pins_and_reads_a_dropped_one_again(coupled, mstore, address,
                                                                                 monkeypatch):
    """The saver keeps at most ``KEPT_PINS`` pins; a pin it let go is read again from its checkpoint node."""
    monkeypatch.setattr(checkpoint, "KEPT_PINS", 4)
    beliefs = {number: f"belief {number}" for number in range(1, 13)}
    app = build(coupled, mstore, beliefs=beliefs)
    app.invoke({"seen": []}, thread("long"))
    history = list(app.get_state_history(thread("long")))
    assert len(history) > 12 and len(coupled._pins) <= 4
    with MnemosyneSaver(address, author="graph", mnem=MNEM, couple_memory=True) as fresh:
        expected = [fresh.memory_of(snapshot.config) for snapshot in history]
    assert all(pin is not None for pin in expected)
    assert [coupled.memory_of(snapshot.config) for snapshot in history] == expected
    assert len(coupled._pins) <= 4

    # A replay from the first step's checkpoint, long dropped, still reads memory as of that checkpoint.
    first = after_step(app, "long", 1)
    assert app.invoke(None, first.config)["seen"][1] == "s2 saw belief 1"


def test_a_coupled_saver_passes_the_conformance_suite(address: str) -> None:
    where = address

    @checkpointer_test(name="CoupledSaver")
    async def savers() -> AsyncGenerator[MnemosyneSaver, None]:
        saver = MnemosyneSaver(where, author="tester", mnem=MNEM, couple_memory=True)
        try:
            yield saver
        finally:
            saver.close()

    report = asyncio.run(validate(savers))
    assert {name: result.failures for name, result in report.results.items() if not result.passed} == {}
