"""A saver's delete and its erasure are one transaction: killed anywhere, a thread is whole or its bytes are gone.

``MnemosyneSaver.delete_thread`` is one ``mnem write`` that deletes the
thread's nodes and, in the same transaction, redacts every version they
ever had (``--erase-deleted``).  The test records that one call as the
saver makes it (the bridge's echo of it), then runs it again on copies of
the same store under ``killpoints``, SIGKILLed at steps of its own run
(program state, never time), and checks each copy: either the thread is
whole (every node at the tip, every stored version's bytes there, no
record) or it is gone with its bytes (no node, no object holding them,
every version recorded); never deleted with its bytes kept.  ``verify``
passes either way, and the other thread is untouched.
"""

from __future__ import annotations

import json
import logging
import random
import shlex
import shutil
import uuid
from pathlib import Path
from typing import Annotated, Any, TypedDict

import killpoints
import pytest
from conftest import MNEM, new_store, store_sql
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, StateGraph
from mnem_history import ok

from mnem_langgraph import MnemosyneSaver
from mnem_store.sql.objects import unpack

#: Runs killed (and some that finish); a quarter are drawn from the whole run, start-up included.
KILLS = 16
#: The function whose span the kills aim at: the whole write, its transaction and the WAL's truncation after it.
MARKER = "mnem_store/porcelain/writing.py:write"


def _joined(state: list[str], new: list[str]) -> list[str]:
    return state + new


class Notes(TypedDict, total=False):
    notes: Annotated[list[str], _joined]


def thread(name: str) -> RunnableConfig:
    return {"configurable": {"thread_id": name}}


def holding(root: Path, text: str) -> list[bytes]:
    """The stored bytes of every object whose content holds ``text`` (a redacted object holds none)."""
    rows = store_sql(root, "SELECT data FROM objects WHERE data IS NOT NULL")
    return [bytes(data) for (data,) in rows if text.encode() in unpack(bytes(data))]


def nodes_of(root: Path, name: str) -> list[str]:
    """The ids of a thread's nodes at the tip."""
    return sorted(ok("--json", "ls", "--prefix", f".checkpoint:{name}:", cwd=root).json)


def records_of(root: Path, name: str) -> list[dict[str, Any]]:
    """The redaction records of a thread's versions."""
    listed = ok("--json", "redactions", cwd=root).json["redactions"]
    return [record for record in listed if record["id"].startswith(f".checkpoint:{name}:")]


def recorded_call(lines: list[str]) -> tuple[list[str], str]:
    """The one ``mnem write`` among the bridge's echoed lines: its arguments after the store's, and its payload."""
    writes = [line for line in lines if " write " in line.split("\n", 1)[0]]
    assert len(writes) == 1, lines  # the delete and its erasure: one call
    assert not [line for line in lines if " redact " in line.split("\n", 1)[0]], lines
    head, body = writes[0].split("\n", 1)
    words = shlex.split(head)[:-1]  # the heredoc's <<DELIM ends it
    payload = body.rsplit("\n", 1)[0]  # then its delimiter line
    return words[words.index("--json"):], payload


@pytest.fixture
def template(tmp_path: Path) -> tuple[Path, str]:
    """A SQLite store holding two threads of a real graph; the one to delete holds a unique marker."""
    root = new_store(tmp_path / "template", "sqlite")
    secret = f"secret-{uuid.uuid4().hex}"
    graph = StateGraph(Notes)
    graph.add_node("note", lambda state: {"notes": [f"turn {len(state.get('notes', []))}"]})
    graph.add_edge(START, "note")
    with MnemosyneSaver(root, author="kill-test", mnem=MNEM) as saver:
        app = graph.compile(checkpointer=saver)
        app.invoke({"notes": [secret]}, thread("gone"))
        app.invoke({"notes": [f"{secret} again"]}, thread("gone"))
        app.invoke({"notes": ["other"]}, thread("kept"))
    return root, secret


def copy_of(template: Path, where: Path) -> Path:
    shutil.copytree(template, where)
    return where


def test_a_delete_thread_killed_anywhere_leaves_the_thread_whole_or_its_bytes_gone(
        template: tuple[Path, str], tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root, secret = template
    whole, stored, kept = nodes_of(root, "gone"), holding(root, secret), nodes_of(root, "kept")
    assert whole and stored and kept
    measured = copy_of(root, tmp_path / "measured")
    with (MnemosyneSaver(measured, author="kill-test", mnem=MNEM) as saver,
          caplog.at_level(logging.DEBUG, logger="mnem_bridge.echo")):
        caplog.clear()
        saver.delete_thread("gone")
    args, payload = recorded_call([record.getMessage() for record in caplog.records
                                   if record.name == "mnem_bridge.echo"])
    assert nodes_of(measured, "gone") == [] and holding(measured, secret) == []  # the call, run whole, erases
    (tmp_path / "payload.json").write_text(payload, encoding="utf-8")
    command = ["-C", "{store}", *args, "--file", str(tmp_path / "payload.json")]

    def on(store: Path) -> list[str]:
        return [str(store) if word == "{store}" else word for word in command]

    run = killpoints.measure(on(copy_of(root, tmp_path / "counted")), marker=MARKER)
    outcomes = {"whole": 0, "erased": 0}
    inside = 0
    for n, stop in enumerate(killpoints.aimed(run, KILLS, random.Random(47))):
        store = copy_of(root, tmp_path / f"kill{n}")
        inside += killpoints.kill(on(store), stop, marker=MARKER).inside
        ok("verify", cwd=store)
        assert nodes_of(store, "kept") == kept
        left, held, records = nodes_of(store, "gone"), holding(store, secret), records_of(store, "gone")
        if left:
            assert (left, sorted(held), records) == (whole, sorted(stored), []), f"kill {n} at step {stop}"
            outcomes["whole"] += 1
        else:
            assert held == [] and records, f"kill {n} at step {stop}: the thread went but its bytes stayed"
            assert json.loads(payload)["delete"] == whole
            outcomes["erased"] += 1
    assert inside >= KILLS // 2  # most kills fell inside the write
    assert outcomes["whole"] and outcomes["erased"]  # both ends were reached: the check can tell them apart
