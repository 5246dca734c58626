"""Result dataclasses: exact round trips, and ``to_dict()`` byte-equal to the CLI's ``--json``."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from typing import Any

import orjson
import pytest
from conftest import run_mnem

from mnem_bridge import (
    Blame,
    Commit,
    Conflict,
    MemoryNode,
    MergeResult,
    NodeChange,
    Provenance,
    Store,
    agents,
)
from mnem_bridge.models import PROVENANCE_KEYS, MergeSide, MergeStrategy
from mnem_store import merge as engine_merge

PROV = {"agent_step": "step-31", "observation": "billing-note-8842", "tool_call": None, "source": "s", "note": None}
NODE = {"id": "plan", "content": {"tier": "pro", "seats": [1, 2]}, "content_kind": "claim", "provenance": PROV,
        "event_time": 1_700_000_000_000}
EMPTY = {"id": "x", "content": None, "content_kind": "note",
         "provenance": dict.fromkeys(PROV), "event_time": None}
COMMIT = {"id": "a" * 64, "parents": ["b" * 64, "c" * 64], "state": "d" * 64, "message": "m", "author": "ann",
          "time": 7000}
SHAPES: list[tuple[type[Any], dict[str, Any]]] = [
    (Provenance, PROV),
    (MemoryNode, NODE),
    (MemoryNode, EMPTY),
    (Commit, COMMIT),
    (NodeChange, {"id": "plan", "kind": "modified", "old": EMPTY, "new": NODE}),
    (NodeChange, {"id": "plan", "kind": "added", "old": None, "new": NODE}),
    (Conflict, {"id": "plan", "kind": "delete/edit", "base": NODE, "ours": None, "theirs": EMPTY}),
    (MergeResult, {"status": "conflicts", "commit": None,
                   "conflicts": [{"id": "plan", "kind": "add/add", "base": None, "ours": NODE, "theirs": EMPTY}]}),
    (MergeResult, {"status": "fast-forwarded", "commit": "a" * 64, "conflicts": []}),
    (Blame, {"commit": "a" * 64, "node": NODE, "time": 1_700_000_000_000}),
]


def _cli_json(value: Any) -> str:
    """What ``mnem --json`` prints for ``value``: compact, key order kept, one line."""
    return orjson.dumps(value).decode() + "\n"


@pytest.mark.parametrize(("cls", "shape"), SHAPES, ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(SHAPES)])
def test_round_trip_keeps_keys_and_order(cls: type[Any], shape: dict[str, Any]) -> None:
    value = cls.from_dict(shape)
    assert _cli_json(value.to_dict()) == _cli_json(shape)
    assert cls.from_dict(value.to_dict()) == value


def test_results_are_frozen_with_tuples() -> None:
    commit = Commit.from_dict(COMMIT)
    merge = MergeResult.from_dict(SHAPES[7][1])
    assert isinstance(commit.parents, tuple) and isinstance(merge.conflicts, tuple)
    assert not merge.ok and MergeResult("merged", "a" * 64).ok
    assert Blame.from_dict(SHAPES[9][1]).provenance == Provenance(**PROV)
    with pytest.raises(dataclasses.FrozenInstanceError):
        commit.message = "changed"  # type: ignore[misc]
    assert MemoryNode("n", 1).to_dict() == {**EMPTY, "id": "n", "content": 1}


def test_facade_results_match_the_cli(bstore: Store) -> None:
    c1 = agents.remember(bstore, "plan", "enterprise", source="ticket-4821", time_ms=1)
    bstore.add("plan", {"tier": "pro", "z": 1, "a": [True, None]}, content_kind="claim",
               provenance=Provenance(**PROV), event_time=5)
    c2 = bstore.commit("revise", author="ann", time_ms=2)
    root = bstore.root
    assert run_mnem("--json", "log", cwd=root).out == _cli_json([c.to_dict() for c in bstore.log()])
    assert run_mnem("--json", "show", "--node", "plan", cwd=root).out == _cli_json(bstore.working_node("plan")
                                                                                    .to_dict())  # type: ignore[union-attr]
    assert run_mnem("--json", "show", c1, cwd=root).out == _cli_json(
        {k: n.to_dict() for k, n in bstore.state_at(c1).items()})
    assert run_mnem("--json", "diff", c1, c2, cwd=root).out == _cli_json([c.to_dict() for c in bstore.diff(c1, c2)])


def test_merge_result_matches_the_cli(bstore: Store) -> None:
    base = agents.remember(bstore, "plan", "enterprise", time_ms=1)
    bstore.checkout(create="pro", target=base)
    agents.remember(bstore, "plan", "pro", time_ms=2)
    bstore.checkout("main")
    agents.remember(bstore, "plan", "starter", time_ms=3)
    result = bstore.merge("pro", author="m", time_ms=4)  # conflicts: nothing is written
    cli = run_mnem("--json", "merge", "pro", "--author", "m", "--time", "4", cwd=bstore.root)
    assert cli.code == 0 and cli.out == _cli_json(result.to_dict())
    assert [c.kind for c in result.conflicts] == ["edit/edit"]


def test_blame_matches_the_cli(bstore: Store) -> None:
    agents.remember(bstore, "plan", "pro", source="billing-note-8842", step="step-31", time_ms=2)
    cli = run_mnem("--json", "blame", "plan", cwd=bstore.root).json
    assert cli.pop("author") == "agent"  # the extension beside the SDK's three keys (docs/cli-json.md)
    assert _cli_json(cli) == _cli_json(bstore.blame("plan").to_dict())


def test_provenance_keys_are_what_the_binary_records(bstore: Store) -> None:
    """``PROVENANCE_KEYS``, the bridge's one list of provenance fields, against the real ``mnem``.

    Each key is a key of ``mnem write`` and (spelt as a flag) of ``mnem add``
    that fills its field, and the binary reports exactly ``Provenance``'s
    fields, in their order; ``remember`` takes each key as an argument.
    """
    given = {key: f"{key} given" for key in PROVENANCE_KEYS}
    recorded = {name: given[key] for key, name in PROVENANCE_KEYS.items()}
    bstore.write([{"id": "written", "content": 1, **given}], message="every key")
    agents.remember(bstore, "remembered", 1, **given)
    bstore.add("added", 1, provenance=Provenance(**recorded))
    for node_id in ("written", "remembered", "added"):
        reported = run_mnem("--json", "show", "--node", node_id, cwd=bstore.root).json["provenance"]
        assert list(reported.items()) == [(each.name, recorded[each.name]) for each in dataclasses.fields(Provenance)]
    keywords = [name for name, p in inspect.signature(agents.remember).parameters.items() if p.kind is p.KEYWORD_ONLY]
    assert keywords[:len(PROVENANCE_KEYS)] == list(PROVENANCE_KEYS) == list(agents.ITEM_KEYS)[:len(PROVENANCE_KEYS)]
    assert list(agents.ITEM_KEYS)[len(PROVENANCE_KEYS):] == ["event_time"] and "event_time" in keywords


def test_the_merge_sides_are_the_engines() -> None:
    """``MergeSide``/``MergeStrategy``, named once above the process boundary, are what ``mnem merge`` takes."""
    assert typing.get_args(MergeSide) == engine_merge.SIDES
    assert typing.get_args(MergeStrategy) == engine_merge.STRATEGIES
