"""``mnem_bridge.agents``: one atomic commit per call, golden ids, bounded retry on a lost race."""

from __future__ import annotations

import sqlite3
from typing import Any

import blake3
import cbor2
import pytest

from mnem_bridge import BusyError, ConflictError, InvalidRefError, Provenance, Store, agents

GOLDEN = "925570c5e44700e4e36d74cffeaa010cbf3caeecb364a383f955ff835d088814"


def _object_id(value: dict[str, Any]) -> bytes:
    """The golden-vector rule: BLAKE3 over canonical CBOR of the object map."""
    return blake3.blake3(cbor2.dumps(value, canonical=True)).digest()


def _node_id(node_id: str, content: Any, **provenance: str) -> bytes:
    value: dict[str, Any] = {"kind": "memory_node", "id": node_id, "content": content, "content_kind": "note"}
    if provenance:
        value["provenance"] = provenance
    return _object_id(value)


class Replay:
    """Recomputes commit ids independently of any store, as upstream's format defines them."""

    def __init__(self) -> None:
        self.nodes: dict[str, bytes] = {}
        self.parent: bytes | None = None

    def commit(self, message: str, author: str, time: int) -> str:
        state = _object_id({"kind": "state", "nodes": dict(self.nodes)})
        parents = [] if self.parent is None else [self.parent]
        self.parent = _object_id({"kind": "commit", "parents": parents, "state": state, "message": message,
                                  "author": author, "time": time})
        return self.parent.hex()


def test_golden_first_commit(bstore: Store) -> None:
    got = agents.remember(bstore, "greeting", "hello", summary="first commit", time_ms=1757000000000)
    assert got == GOLDEN


def test_replayed_run_matches_ids_computed_from_the_format(bstore: Store) -> None:
    replay = Replay()
    got, expected = [], []
    got.append(agents.remember(bstore, "plan", "enterprise", source="ticket-4821", author="support", time_ms=1000))
    replay.nodes["plan"] = _node_id("plan", "enterprise", source="ticket-4821")
    expected.append(replay.commit("remember plan", "support", 1000))
    got.append(agents.remember_many(bstore, [{"id": "seats", "content": {"count": 240, "ok": True}},
                                             {"id": "contact", "content": ["ann", "bob"], "step": "s2"}],
                                    author="support", time_ms=2000))
    replay.nodes["seats"] = _node_id("seats", {"count": 240, "ok": True})
    replay.nodes["contact"] = _node_id("contact", ["ann", "bob"], agent_step="s2")
    expected.append(replay.commit("remember 2 nodes", "support", 2000))
    got.append(agents.remember(bstore, "plan", "pro", source="billing-note-8842", step="step-31",
                               observation="billing says pro", summary="revise plan", author="support", time_ms=3000))
    replay.nodes["plan"] = _node_id("plan", "pro", agent_step="step-31", observation="billing says pro",
                                    source="billing-note-8842")
    expected.append(replay.commit("revise plan", "support", 3000))
    got.append(agents.forget(bstore, "seats", author="support", time_ms=4000))
    del replay.nodes["seats"]
    expected.append(replay.commit("forget seats", "support", 4000))
    assert got == expected


def test_each_call_is_one_commit_and_staging_is_untouched(bstore: Store) -> None:
    staged = bstore.add("draft", "work in progress")
    agents.remember(bstore, "customer-4821", "on the Enterprise plan", source="ticket-4821", tool_call="crm.get",
                    note="first look")
    agents.remember_many(bstore, [{"id": "a", "content": 1, "ignored": "x"}])
    agents.forget(bstore, "a")
    empty = agents.remember_many(bstore, [])  # upstream records an empty commit too
    log = bstore.log(first_parent=True)  # chain order: these commits may share a millisecond
    assert [c.message for c in log] == ["remember 0 nodes", "forget a", "remember 1 node", "remember customer-4821"]
    assert log[0].id == empty and log[0].state == log[1].state
    assert {c.author for c in log} == {"agent"}
    assert bstore.staged() == [("draft", staged)]
    assert bstore.state_at(log[3].id)["customer-4821"].provenance == Provenance(
        source="ticket-4821", tool_call="crm.get", note="first look")


def test_forget_of_a_missing_node_is_not_retried(bstore: Store, mocker: Any) -> None:
    sleep = mocker.patch("mnem_bridge.agents.time").sleep
    with pytest.raises(InvalidRefError, match='no node "ghost"'):
        agents.forget(bstore, "ghost")
    sleep.assert_not_called()


@pytest.mark.parametrize("lost", [BusyError("store busy: another writer"),
                                  ConflictError('the branch moved under you: branch "main" moved during commit')])
def test_a_lost_race_is_retried_four_times_then_raised_without_a_last_sleep(
    bstore: Store, mocker: Any, lost: Exception
) -> None:
    write = mocker.patch.object(Store, "write", side_effect=lost)
    sleep = mocker.patch("mnem_bridge.agents.time").sleep
    with pytest.raises(type(lost)):
        agents.remember(bstore, "a", 1)
    assert write.call_count == 4
    assert [c.args[0] for c in sleep.call_args_list] == pytest.approx([0.025, 0.05, 0.075])


def test_busy_then_success_returns_after_the_third_attempt(bstore: Store, mocker: Any) -> None:
    real_write = Store.write
    outcomes = iter([ConflictError("the branch moved under you"), BusyError("busy")])

    def flaky(self: Store, *args: Any, **kwargs: Any) -> Any:
        failure = next(outcomes, None)
        if failure is not None:
            raise failure
        return real_write(self, *args, **kwargs)

    write = mocker.patch.object(Store, "write", autospec=True, side_effect=flaky)
    mocker.patch("mnem_bridge.agents.time")  # no real sleeping
    assert agents.remember(bstore, "greeting", "hello", summary="first commit", time_ms=1757000000000) == GOLDEN
    assert write.call_count == 3


def test_a_real_busy_store(impatient_bstore: Store, mocker: Any) -> None:
    bstore = impatient_bstore  # its worker runs with MNEM_BUSY_TIMEOUT_MS=0: it gives up at once, not after 10 s
    sleep = mocker.patch("mnem_bridge.agents.time").sleep
    holder = sqlite3.connect(bstore.root / ".mnem" / "store.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        with pytest.raises(BusyError) as caught:
            agents.remember(bstore, "a", 1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert caught.value.code == "busy" and sleep.call_count == 3
    assert "write" in (caught.value.command or "")
    assert agents.remember(bstore, "a", 1)
