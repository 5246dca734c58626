"""``Store.diff(a, b, merge_base=True)``: a branch reviewed through the bridge, typed, and rerunnable from its echo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import run_mnem

import mnem_bridge
from mnem_bridge import ChangedBy, InvalidRefError, NodeChange, ProposedChange, Store, UsageError, agents
from mnem_bridge.errors import ContractError

from .support import fake_mnem, paste

NODE = {"id": "plan", "content": "enterprise", "content_kind": "note",
        "provenance": {"agent_step": None, "observation": None, "tool_call": None, "source": "ticket-4821",
                       "note": None}, "event_time": None}
BY = {"commit": "a" * 64, "author": "agent-a", "message": "upgrade\n\nper ticket-4821", "time": 7000}
SHAPES = [
    {"id": "plan", "kind": "modified", "old": {**NODE, "content": "pro"}, "new": NODE, "by": BY},
    {"id": "plan", "kind": "added", "old": None, "new": NODE, "by": None},
]


def _cli_json(value: Any) -> str:
    return orjson.dumps(value).decode() + "\n"


@pytest.mark.parametrize("shape", SHAPES, ids=["modified", "unattributed"])
def test_the_documented_shape_round_trips_with_keys_in_order(shape: dict[str, Any]) -> None:
    """docs/cli-json.md's ``ProposedChange``: NodeChange's four keys, then ``by``."""
    change = ProposedChange.from_dict(shape)
    assert _cli_json(change.to_dict()) == _cli_json(shape)
    assert ProposedChange.from_dict(change.to_dict()) == change
    assert isinstance(change, NodeChange)  # code written for diff's changes reads a review unchanged
    assert NodeChange.from_dict(shape) == NodeChange(change.id, change.kind, change.old, change.new)
    assert change.by is None or change.by == ChangedBy("a" * 64, "agent-a", "upgrade\n\nper ticket-4821", 7000)


def _diverged(store: Store) -> dict[str, str]:
    """main and hyp part after ``start``; hyp changes plan and adds note, main adds other."""
    ids = {"start": agents.remember(store, "plan", "pro", time_ms=1000)}
    store.new_branch("hyp")
    store.checkout("hyp")
    ids["upgrade"] = agents.remember(store, "plan", "enterprise", source="ticket-4821", time_ms=2000)
    store.add("note", "n")
    ids["note"] = store.commit("note it", author="agent-b", time_ms=3000)
    store.checkout("main")
    agents.remember(store, "other", 1, time_ms=2500)
    return ids


def test_merge_base_diff_is_typed_and_is_the_clis_document(bstore: Store) -> None:
    ids = _diverged(bstore)
    proposed = bstore.diff("main", "hyp", merge_base=True)
    assert [(c.id, c.kind) for c in proposed] == [("note", "added"), ("plan", "modified")]
    assert all(isinstance(c, ProposedChange) and isinstance(c.by, ChangedBy) for c in proposed)
    note, plan = proposed
    assert (note.by and (note.by.commit, note.by.author, note.by.message, note.by.time)) == (
        ids["note"], "agent-b", "note it", 3000)
    assert plan.by is not None and plan.by.commit == ids["upgrade"]
    assert plan.new is not None and plan.new.provenance.source == "ticket-4821"
    cli = run_mnem("--json", "diff", "main...hyp", cwd=bstore.root)
    assert cli.out == _cli_json([c.to_dict() for c in proposed])
    # both sides default to HEAD, as git's empty side does: HEAD is main
    assert bstore.diff(to="hyp", merge_base=True) == proposed
    assert bstore.diff("hyp", merge_base=True) == bstore.diff("hyp", "main", merge_base=True)
    # without merge_base, unchanged: main's own change (other) shows as undone
    assert [c.id for c in bstore.diff("main", "hyp")] == ["note", "other", "plan"]


def test_the_echoed_command_reruns_to_the_same_document(bstore: Store, tmp_path: Path) -> None:
    _diverged(bstore)
    proposed = bstore.diff("main", "hyp", merge_base=True)
    assert bstore.last_command is not None and "main...hyp" in bstore.last_command
    assert paste(bstore.last_command, tmp_path) == [c.to_dict() for c in proposed]


def test_refusals_are_typed(bstore: Store) -> None:
    _diverged(bstore)
    with pytest.raises(InvalidRefError, match="no branch named"):
        bstore.diff("main", "nope", merge_base=True)
    with pytest.raises(UsageError, match="not a range"):
        bstore.diff("main..hyp", merge_base=True)


def test_a_binary_without_the_feature_is_a_contract_error(tmp_path: Path) -> None:
    binary = fake_mnem(tmp_path, "print('[]')")
    (tmp_path / "store" / ".mnem").mkdir(parents=True)
    with mnem_bridge.Mnem(binary) as client, mnem_bridge.open(tmp_path / "store", client=client) as store:
        with pytest.raises(ContractError, match="diff-range"):
            store.diff("main", "hyp", merge_base=True)
        assert store.diff("main", "hyp") == []  # the two-state form needs no feature
