"""``MnemosyneSaver`` forgets for real: its deletes and its retention take the bytes out of history.

Real compiled graphs on real stores, through the real ``mnem``.  A value is
looked for as the store keeps it: a node's stored bytes are deflated, so
the plain text alone proves nothing; each test first finds the stored
versions that hold a unique marker, and those bytes in the store's files
(``redaction_support.files``: SQLite's database and WAL, PostgreSQL's table
files), then checks that after the call no object holds the marker and none
of those bytes is left in those files, while
``mnem verify`` passes, every earlier commit keeps its id, and what was not
deleted still reads.  Time is the test's manual clock, never the machine's.
"""

from __future__ import annotations

import json
import logging
import operator
import sqlite3
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pg_stores
import pytest
from conftest import BACKENDS, MNEM, new_store, run_mnem, store_sql
from langchain_core.runnables import RunnableConfig
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt
from manual_clock import ManualClock
from redaction_support import files

import mnem_bridge
from mnem_langgraph import MnemosyneSaver, retention
from mnem_langgraph.checkpoint import CHECKPOINT_BRANCH
from mnem_store.sql.objects import unpack

#: A fragment of stored bytes this long found in a file means the version's bytes are still there.
FRAGMENT = 16


class Notes(TypedDict, total=False):
    notes: Annotated[list[str], operator.add]
    scratch: str


def _fold(state: list[str], writes: list[list[str]]) -> list[str]:
    """``operator.add`` over a batch of writes, as ``DeltaChannel`` wants its reducer."""
    for write in writes:
        state = state + write
    return state


class DeltaNotes(TypedDict, total=False):
    notes: Annotated[list[str], DeltaChannel(_fold, snapshot_frequency=4)]
    scratch: str


def build(saver: Any, schema: type[Any] = Notes, *, ask: bool = False) -> Any:
    """A one-node graph (two with ``ask``: an interrupt first): the node notes the turn."""
    graph = StateGraph(schema)
    graph.add_node("note", lambda state: {"notes": [f"turn {len(state.get('notes', []))}"]})
    if ask:
        graph.add_node("ask", lambda state: {"notes": [f"said {interrupt('go?')}"]})
        graph.add_edge(START, "ask")
        graph.add_edge("ask", "note")
    else:
        graph.add_edge(START, "note")
    return graph.compile(checkpointer=saver)


def thread(name: str) -> RunnableConfig:
    return {"configurable": {"thread_id": name}}


def marker(what: str) -> str:
    return f"{what}-{uuid.uuid4().hex}"


@pytest.fixture(params=BACKENDS)
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A fresh store on each backend, addressed by its folder (``pg_stores``)."""
    return new_store(tmp_path / "memory", request.param)


@pytest.fixture
def sqlite_root(tmp_path: Path) -> Path:
    return new_store(tmp_path / "memory", "sqlite")


def opened(root: Path, **options: Any) -> MnemosyneSaver:
    return MnemosyneSaver(pg_stores.address(root), author="retention-test", mnem=MNEM, **options)


def holding(root: Path, text: str) -> list[bytes]:
    """The stored bytes of every object whose content holds ``text`` (a redacted object holds none)."""
    rows = store_sql(root, "SELECT data FROM objects WHERE data IS NOT NULL")
    return [bytes(data) for (data,) in rows if text.encode() in unpack(bytes(data))]


def in_files(root: Path, stored: list[bytes]) -> bool:
    """Whether the store's files (``redaction_support.files``) hold one of ``stored`` whole."""
    held = files(root)
    return any(data in held for data in stored)


def left_in_files(root: Path, stored: list[bytes]) -> list[bytes]:
    """The fragments of ``stored`` still found in the store's files, but for those a stored object still has.

    Deflate starts alike for nodes whose ids start alike, so a fragment a
    remaining object also holds tells nothing of the removed ones.
    """
    rows = store_sql(root, "SELECT data FROM objects WHERE data IS NOT NULL")
    remaining = b"\0".join(bytes(data) for (data,) in rows)
    held = files(root)
    return [part for data in stored for i in range(0, len(data) - FRAGMENT, FRAGMENT)
            if (part := data[i:i + FRAGMENT]) in held and part not in remaining]


def commits(root: Path) -> list[str]:
    """HEAD's history, newest first."""
    listed = run_mnem("--json", "log", cwd=root)
    assert listed.code == 0, listed.err
    return [entry["id"] for entry in json.loads(listed.out)]


def verified(root: Path) -> None:
    checked = run_mnem("--json", "verify", cwd=root)
    assert checked.code == 0, checked.out + checked.err


def redactions(root: Path) -> list[dict[str, Any]]:
    listed = run_mnem("--json", "redactions", cwd=root)
    assert listed.code == 0, listed.err
    records: list[dict[str, Any]] = json.loads(listed.out)["redactions"]
    return records


def test_delete_thread_takes_every_byte_of_the_thread_out_of_history_and_nothing_else(root: Path) -> None:
    secret, other = marker("secret"), marker("other")
    with opened(root) as saver:
        app = build(saver)
        app.invoke({"notes": [secret]}, thread("erase-me"))
        app.invoke({"scratch": f"{secret} again"}, thread("erase-me"))
        app.invoke({"notes": [other]}, thread("stays"))
        stored = holding(root, secret)
        assert stored and in_files(root, stored)  # there before, in the form looked for
        before = commits(root)

        saver.delete_thread("erase-me")
        assert saver.get_tuple(thread("erase-me")) is None and list(saver.list(thread("erase-me"))) == []
        assert app.get_state(thread("stays")).values == {"notes": [other, "turn 1"]}
    assert left_in_files(root, stored) == [] and secret.encode() not in files(root)
    assert holding(root, secret) == [] and holding(root, other)  # gone, and only what was the thread's
    assert commits(root)[1:] == before  # the delete's commit on top; every earlier commit keeps its id
    verified(root)
    records = redactions(root)
    assert records and {record["by"] for record in records} == {"retention-test"}
    assert all(record["reason"].startswith("MnemosyneSaver.delete_thread") and "erase-me" in record["reason"]
               and record["id"].startswith(".checkpoint:erase-me:") for record in records)


def test_prune_keep_latest_reclaims_the_bytes_of_every_checkpoint_but_the_latest(sqlite_root: Path) -> None:
    root = sqlite_root
    olds, last = [marker(f"old{i}") for i in range(3)], marker("last")
    with opened(root) as saver:
        app = build(saver)
        for text in [*olds, last]:
            app.invoke({"scratch": text}, thread("long"))
        stored = [data for text in olds for data in holding(root, text)]
        assert stored and in_files(root, stored)
        before = commits(root)

        saver.prune(["long"])
        assert len(list(saver.list(thread("long")))) == 1
        assert app.get_state(thread("long")).values == {"scratch": last, "notes": [f"turn {i}" for i in range(4)]}
        assert app.invoke({"scratch": "next"}, thread("long"))["notes"][-1] == "turn 4"  # it runs on from there
    assert left_in_files(root, stored) == [] and all(holding(root, text) == [] for text in olds)
    assert holding(root, last)
    assert commits(root)[-len(before):] == before
    verified(root)
    assert {record["reason"].split(":")[0] for record in redactions(root)} == {"MnemosyneSaver.prune"}


def described(snapshots: list[Any]) -> list[tuple[Any, ...]]:
    """What a LangGraph user reads of each state in a history (ids differ between savers)."""
    return [(s.values, s.next, s.metadata["step"], s.metadata["source"], [t.name for t in s.tasks]) for s in snapshots]


@pytest.mark.parametrize("keep", [1, 3])
def test_retention_keeps_exactly_the_last_n_checkpoints_and_the_graph_reads_them_as_it_would_all(
        root: Path, keep: int) -> None:
    texts = [marker(f"step{i}") for i in range(5)]
    reference = build(InMemorySaver())
    with opened(root, keep_last=keep) as saver:
        app = build(saver)
        for text in texts:
            assert app.invoke({"scratch": text}, thread("kept")) == reference.invoke({"scratch": text}, thread("kept"))
        history = list(app.get_state_history(thread("kept")))
        everything = list(reference.get_state_history(thread("kept")))
        assert len(everything) > keep and described(history) == described(everything[:keep])
        listed = [item.config["configurable"]["checkpoint_id"] for item in saver.list(thread("kept"))]
        assert listed == [s.config["configurable"]["checkpoint_id"] for s in history]
        latest = saver.get_tuple(thread("kept"))
        assert latest is not None and latest.checkpoint["id"] == listed[0]
        oldest = saver.get_tuple(history[-1].config)
        assert oldest is not None and oldest.checkpoint["id"] == listed[-1]
        # The oldest kept checkpoint replays as LangGraph replays it from a saver that kept everything.
        assert app.invoke(None, history[-1].config) == reference.invoke(None, everything[keep - 1].config)
    assert all(holding(root, text) == [] for text in texts[:-2]) and holding(root, texts[-1])
    verified(root)
    reasons = {record["reason"] for record in redactions(root)}
    assert reasons and all(f"retention (keep_last={keep})" in reason for reason in reasons)


def test_retention_keeps_a_stopped_checkpoint_and_its_pending_writes_so_the_run_resumes(root: Path) -> None:
    reference = build(InMemorySaver(), ask=True)
    with opened(root, keep_last=1) as saver:
        app = build(saver, ask=True)
        for name in ("first", "second"):
            stopped = app.invoke({"scratch": name}, thread("asks"))
            expected = reference.invoke({"scratch": name}, thread("asks"))
            assert [i.value for i in stopped.pop("__interrupt__")] == [i.value for i in expected.pop("__interrupt__")]
            assert stopped == expected and app.get_state(thread("asks")).next == ("ask",)
            assert len(list(saver.list(thread("asks")))) == 1
            resumed = app.invoke(Command(resume=name), thread("asks"))
            assert resumed == reference.invoke(Command(resume=name), thread("asks"))
        assert resumed["notes"] == ["said first", "turn 1", "said second", "turn 3"]


@pytest.mark.parametrize("keep_history", [True, False], ids=["history", "no-history"])
def test_retention_by_age_lets_go_of_what_the_store_clock_says_is_that_old(root: Path, keep_history: bool) -> None:
    """Without history a root restarts the branch's history: each checkpoint's put time goes with it (event_time)."""
    clock = ManualClock()
    with opened(root, max_age=timedelta(minutes=10), clock=clock, keep_history=keep_history) as saver:
        app = build(saver)

        def ids() -> list[str]:
            return [item.checkpoint["id"] for item in saver.list(thread("aged"))]

        app.invoke({"scratch": "at 0"}, thread("aged"))
        first = ids()
        clock.advance(minutes=6)
        app.invoke({"scratch": "at 6"}, thread("aged"))
        second = ids()
        assert len(first) == 3 and second[3:] == first  # six minutes old: kept
        if not keep_history:
            for i in range(retention.ROOT_EVERY // 4):  # another thread's turns: the branch is written as a root
                app.invoke({"scratch": f"pad {i}"}, thread("pad"))
            log = run_mnem("--json", "log", CHECKPOINT_BRANCH, cwd=root)
            assert log.code == 0 and len(json.loads(log.out)) < retention.ROOT_EVERY
        clock.advance(minutes=4)
        app.invoke({"scratch": "at 10"}, thread("aged"))
        assert ids()[3:] == second[:3]  # ten minutes old by their puts: no longer younger than ten minutes, gone
        assert app.get_state(thread("aged")).values == {"scratch": "at 10", "notes": ["turn 0", "turn 1", "turn 2"]}


def test_retention_keeps_the_ancestors_a_delta_channel_is_rebuilt_from(root: Path) -> None:
    reference = build(InMemorySaver(), DeltaNotes)
    with opened(root, keep_last=2) as saver:
        app = build(saver, DeltaNotes)
        for i in range(9):
            assert app.invoke({"notes": [f"said {i}"]}, thread("delta")) == reference.invoke(
                {"notes": [f"said {i}"]}, thread("delta"))
        assert app.get_state(thread("delta")).values == reference.get_state(thread("delta")).values
        kept = len(list(saver.list(thread("delta"))))
        # Kept back to a snapshot (every 4th update), not everything: 27 checkpoints were put.
        assert 2 < kept < len(list(reference.get_state_history(thread("delta"))))
    verified(root)


@pytest.mark.parametrize("options", [{"keep_last": 0}, {"keep_last": True}, {"keep_last": 2.0},
                                     {"max_age": timedelta(0)}, {"max_age": 60}])
def test_a_retention_option_out_of_range_is_refused_before_anything_is_made(tmp_path: Path,
                                                                             options: dict[str, Any]) -> None:
    with pytest.raises(mnem_bridge.UsageError) as refused:
        MnemosyneSaver(tmp_path / "never", mnem=MNEM, **options)
    assert next(iter(options)) in refused.value.message
    assert not (tmp_path / "never").exists()


def test_delete_for_runs_takes_the_runs_bytes_out_of_history(sqlite_root: Path) -> None:
    root = sqlite_root
    secret, other = marker("run-secret"), marker("run-other")
    doomed, kept = str(uuid.uuid4()), str(uuid.uuid4())
    with opened(root) as saver:
        app = build(saver)
        app.invoke({"scratch": secret}, {"configurable": {"thread_id": "one-run", "run_id": doomed}})
        app.invoke({"scratch": other}, {"configurable": {"thread_id": "other-run", "run_id": kept}})
        stored = holding(root, secret)
        assert stored and in_files(root, stored)

        saver.delete_for_runs([doomed])
        assert list(saver.list(thread("one-run"))) == [] and len(list(saver.list(thread("other-run")))) == 3
    assert left_in_files(root, stored) == [] and holding(root, secret) == [] and holding(root, other)
    verified(root)
    assert {record["reason"].split(":")[0] for record in redactions(root)} == {"MnemosyneSaver.delete_for_runs"}


def test_retention_on_a_coupled_saver_keeps_the_pins_of_the_kept_checkpoints_only(root: Path) -> None:
    with opened(root, couple_memory=True, keep_last=2) as saver:
        app = build(saver)
        app.invoke({"scratch": "first"}, thread("pinned"))
        everything = list(app.get_state_history(thread("pinned")))
        app.invoke({"scratch": "second"}, thread("pinned"))
        kept = list(app.get_state_history(thread("pinned")))
        assert len(kept) == 2 and all(saver.memory_of(snapshot.config) is not None for snapshot in kept)
        assert [saver.memory_of(snapshot.config) for snapshot in everything] == [None] * len(everything)
        assert not [place for place in saver._pins if place[1] in {s.config["configurable"]["checkpoint_id"]
                                                                   for s in everything}]
        with opened(root, couple_memory=True) as fresh:
            assert [fresh.memory_of(s.config) for s in kept] == [saver.memory_of(s.config) for s in kept]


def test_a_delete_another_reader_holds_up_warns_and_running_it_again_finishes_the_erasure(
        sqlite_root: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    root = sqlite_root
    monkeypatch.setenv("MNEM_BUSY_TIMEOUT_MS", "1")  # the saver's worker waits the least for the reader
    secret = marker("held")
    with opened(root) as saver:
        build(saver).invoke({"scratch": secret}, thread("held"))
        stored = holding(root, secret)
        reader = sqlite3.connect(root / ".mnem" / "store.sqlite3")
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM objects").fetchone()
        try:
            with caplog.at_level(logging.WARNING, logger="mnem_bridge.store"):  # the write's warning
                saver.delete_thread("held")
        finally:
            reader.rollback()
            reader.close()
        warned = [record.getMessage() for record in caplog.records if record.name == "mnem_bridge.store"]
        assert len(warned) == 1 and "MnemosyneSaver.delete_thread" in warned[0] and "again" in warned[0]
        assert holding(root, secret) == []  # gone from every read already
        caplog.clear()
        saver.delete_thread("held")  # nothing left to delete; the erasure finishes
        assert not [record for record in caplog.records if record.name == "mnem_bridge.store"]
    assert left_in_files(root, stored) == []
    verified(root)


def test_retention_removes_writes_that_landed_after_their_checkpoint_went(root: Path) -> None:
    late = marker("late")
    with opened(root, keep_last=2) as saver:
        app = build(saver)
        app.invoke({"scratch": "one"}, thread("late"))
        # An id older than every kept checkpoint's, not stored: a removed one's, as far as the store can tell.
        gone: RunnableConfig = {"configurable": {"thread_id": "late", "checkpoint_ns": "",
                                                 "checkpoint_id": "00000000-0000-6000-8000-000000000000"}}
        assert saver.get_tuple(gone) is None
        saver.put_writes(gone, [("scratch", late)], "slow-task")  # a task's writes that arrive after it went
        assert holding(root, late)
        app.invoke({"scratch": "two"}, thread("late"))
        assert holding(root, late) == [] and len(list(saver.list(thread("late")))) == 2
    verified(root)


def test_prune_keep_latest_keeps_what_a_delta_channel_is_rebuilt_from(sqlite_root: Path) -> None:
    reference = build(InMemorySaver(), DeltaNotes)
    with opened(sqlite_root) as saver:
        app = build(saver, DeltaNotes)
        for i in range(9):
            app.invoke({"notes": [f"said {i}"]}, thread("delta"))
            reference.invoke({"notes": [f"said {i}"]}, thread("delta"))
        saver.prune(["delta"])
        assert 1 < len(list(saver.list(thread("delta")))) < len(list(reference.get_state_history(thread("delta"))))
        assert app.get_state(thread("delta")).values == reference.get_state(thread("delta")).values
        assert app.invoke({"notes": ["after"]}, thread("delta")) == reference.invoke({"notes": ["after"]},
                                                                                     thread("delta"))
    verified(sqlite_root)


# ------------------------------------------------------------------ keep_history=False: a steady size
def rows_of(root: Path) -> tuple[int, int]:
    """How many commits and objects the store holds."""
    ((commits,),) = store_sql(root, "SELECT count(*) FROM commits")
    ((objects,),) = store_sql(root, "SELECT count(*) FROM objects")
    return int(commits), int(objects)


def test_without_history_the_store_stays_bounded_and_the_graph_reads_as_with_every_checkpoint(root: Path) -> None:
    """Roots every ``ROOT_EVERY`` writes, each followed by a collection: rows stay bounded however long it runs."""
    reference = build(InMemorySaver())
    first = marker("first")
    peaks: list[tuple[int, int]] = []
    with opened(root, keep_last=3, keep_history=False) as saver:
        app = build(saver)
        assert app.invoke({"scratch": first}, thread("long")) == reference.invoke({"scratch": first}, thread("long"))
        stored = holding(root, first)
        assert stored
        for rounds in (40, 80):  # 4 writes a turn: several roots, then as many again
            most = (0, 0)
            for i in range(rounds):
                text = f"turn {rounds}-{i}"
                assert app.invoke({"scratch": text}, thread("long")) == reference.invoke({"scratch": text},
                                                                                          thread("long"))
                most = max(most, rows_of(root))
            peaks.append(most)
        history = list(app.get_state_history(thread("long")))
        assert described(history) == described(list(reference.get_state_history(thread("long")))[:3])
    commits, objects = zip(*peaks, strict=True)
    assert max(commits) <= retention.ROOT_EVERY + 1  # the branch's history since its last root, no more
    assert peaks[1][1] <= peaks[0][1] + 10  # twice the turns, not twice the rows
    assert max(objects) <= 8 * retention.ROOT_EVERY
    # The first turn's checkpoint went with the first collection: no row and no file of the store holds it.
    assert holding(root, first) == [] and left_in_files(root, stored) == []
    assert redactions(root) == []  # letting go of history needs no record: nothing reaches those versions
    verified(root)
    log = run_mnem("--json", "log", CHECKPOINT_BRANCH, cwd=root)
    assert log.code == 0 and 1 <= len(json.loads(log.out)) <= retention.ROOT_EVERY
