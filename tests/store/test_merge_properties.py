"""Property tests of the three-way merge over random histories.

The bulk runs the pure engine (``merge_states``/``resolve_conflicts``) on
random state maps; a smaller run builds real stores in-process and merges
with ``mnem_store.merge``; a handful go through the real binary.
"""

from __future__ import annotations

import tempfile
from collections.abc import Hashable
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest
from conftest import BACKENDS, init_repo, run_mnem
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnem_store import porcelain
from mnem_store.errors import InvalidRefError
from mnem_store.merge import SIDES, Conflict, MergeResult, StateMerge, merge_states, preview, resolve_conflicts
from mnem_store.objects import MemoryNode, encode_object
from mnem_store.repo import Repo

T = TypeVar("T", bound=Hashable)
NODE_IDS = ("a", "b", "c", "d", "e", "f")
OBJECTS = tuple(bytes([i]) * 32 for i in range(1, 5))
SWAPPED_KIND = {"delete/edit": "edit/delete", "edit/delete": "delete/edit", "edit/edit": "edit/edit",
                "add/add": "add/add"}


def three_way(values: tuple[T, ...]) -> st.SearchStrategy[tuple[dict[str, T], dict[str, T], dict[str, T]]]:
    """Base, ours and theirs over a few ids; each side often keeps the base so clean cases are common."""
    value = st.one_of(st.none(), st.sampled_from(values))

    @st.composite
    def build(draw: st.DrawFn) -> tuple[dict[str, T], dict[str, T], dict[str, T]]:
        base: dict[str, T] = {}
        ours: dict[str, T] = {}
        theirs: dict[str, T] = {}
        for node_id in NODE_IDS:
            b = draw(value)
            o = draw(st.one_of(st.just(b), value))
            t = draw(st.one_of(st.just(b), value))
            for side, v in ((base, b), (ours, o), (theirs, t)):
                if v is not None:
                    side[node_id] = v
        return base, ours, theirs

    return build()


def swap(conflict: Conflict) -> Conflict:
    return Conflict(conflict.id, SWAPPED_KIND[conflict.kind], conflict.base, conflict.theirs, conflict.ours)  # type: ignore[arg-type]


def every_id(*maps: dict[str, Any]) -> set[str]:
    return set().union(*maps)


# ------------------------------------------------------------------ pure engine

PURE = settings(max_examples=300, deadline=None)


@PURE
@given(three_way(OBJECTS))
def test_merge_is_total_and_partitions_every_id(states):
    base, ours, theirs = states
    result = merge_states(base, ours, theirs)
    conflict_ids = [c.id for c in result.conflicts]
    assert conflict_ids == sorted(conflict_ids)
    assert not set(conflict_ids) & set(result.nodes)
    assert set(result.nodes) | set(conflict_ids) <= every_id(base, ours, theirs)
    for c in result.conflicts:
        assert (c.base, c.ours, c.theirs) == (base.get(c.id), ours.get(c.id), theirs.get(c.id))
        assert c.ours != c.theirs and c.base not in (c.ours, c.theirs)
        expected = ("add/add" if c.base is None else "delete/edit" if c.ours is None
                    else "edit/delete" if c.theirs is None else "edit/edit")
        assert c.kind == expected
    for strategy in ("ours", "theirs"):
        _nodes, unresolved, new_nodes = resolve_conflicts(result, {}, strategy)
        assert unresolved == () and new_nodes == []


@PURE
@given(three_way(OBJECTS))
def test_a_change_on_one_side_only_takes_that_side_and_nothing_unchanged_is_lost(states):
    base, ours, theirs = states
    nodes = merge_states(base, ours, theirs).nodes
    for node_id in every_id(base, ours, theirs):
        b, o, t = base.get(node_id), ours.get(node_id), theirs.get(node_id)
        if o == b:
            assert nodes.get(node_id) == t
        if t == b:
            assert nodes.get(node_id) == o
        if o == t:
            assert nodes.get(node_id) == o


@PURE
@given(three_way(OBJECTS))
def test_swapping_sides_swaps_conflicts_and_nothing_else(states):
    base, ours, theirs = states
    forward = merge_states(base, ours, theirs)
    backward = merge_states(base, theirs, ours)
    assert backward.nodes == forward.nodes
    assert backward.conflicts == tuple(swap(c) for c in forward.conflicts)


@PURE
@given(three_way(OBJECTS))
def test_merging_itself_or_an_ancestor_changes_nothing(states):
    base, ours, _ = states
    assert merge_states(base, ours, ours) == StateMerge(ours, ())
    # theirs is an ancestor of ours when it is the merge base itself
    assert merge_states(base, ours, base) == StateMerge(ours, ())


@PURE
@given(three_way(OBJECTS), st.sampled_from(("ours", "theirs")))
def test_resolving_every_conflict_one_way_equals_the_strategy(states, side):
    result = merge_states(*states)
    by_strategy = resolve_conflicts(result, {}, side)
    by_hand = resolve_conflicts(result, {c.id: side for c in result.conflicts}, None)
    assert by_hand == by_strategy


@PURE
@given(three_way(OBJECTS), st.data())
def test_any_resolutions_give_a_state_or_a_typed_error(states, data):
    result = merge_states(*states)
    chosen = {c.id: data.draw(st.sampled_from((*SIDES, "unresolved"))) for c in result.conflicts}
    resolutions = {node_id: side for node_id, side in chosen.items() if side != "unresolved"}
    strategy = data.draw(st.sampled_from((None, "ours", "theirs")))
    base_on_add_add = any(resolutions.get(c.id) == "base" and c.kind == "add/add" for c in result.conflicts)
    try:
        nodes, unresolved, _ = resolve_conflicts(result, resolutions, strategy)
    except InvalidRefError as exc:
        assert base_on_add_add and "an add/add conflict has no base" in str(exc)
        return
    assert not base_on_add_add
    if strategy is not None:
        assert unresolved == ()
    for c in result.conflicts:
        side = resolutions.get(c.id, strategy)
        if side is None:
            continue
        expected = {"ours": c.ours, "theirs": c.theirs, "base": c.base, "delete": None}[side]
        assert nodes.get(c.id) == expected


@PURE
@given(three_way(OBJECTS))
def test_a_stale_resolution_is_refused(states):
    result = merge_states(*states)
    clean = [node_id for node_id in NODE_IDS if node_id not in {c.id for c in result.conflicts}]
    if clean:
        try:
            resolve_conflicts(result, {clean[0]: "ours"}, "ours")
        except InvalidRefError as exc:
            assert f'resolution given for "{clean[0]}", which is not a conflict' in str(exc)
        else:
            raise AssertionError("a resolution for a clean id was accepted")


def test_a_set_resolution_stores_a_new_note():
    result = merge_states({"a": OBJECTS[0]}, {"a": OBJECTS[1]}, {"a": OBJECTS[2]})
    node = MemoryNode("a", {"merged": True})
    nodes, unresolved, new_nodes = resolve_conflicts(result, {"a": node}, None)
    assert (nodes, unresolved, new_nodes) == ({"a": encode_object(node)[0]}, (), [node])


# ------------------------------------------------------- real stores, in-process

CONTENTS = ("v1", "v2", "v3", 3)
STORE = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _object_ids(values: dict[str, Any]) -> dict[str, bytes]:
    return {node_id: encode_object(MemoryNode(node_id, content))[0] for node_id, content in values.items()}


def _commit_to(repo: Repo, before: dict[str, Any], after: dict[str, Any], message: str, time_ms: int) -> None:
    """Commit the difference between two memories, or nothing when they are equal."""
    changed = _object_ids(after).items() - _object_ids(before).items()
    puts = [MemoryNode(k, after[k]) for k, _ in sorted(changed)]
    deletes = [k for k in before if k not in after]
    if puts or deletes:
        porcelain.write(repo, puts, deletes, message, "prop", time_ms)


def merge(repo: Repo, theirs: str, **options: Any) -> MergeResult:
    """``mnem_store.merge.merge`` in its own write transaction, as ``mnem merge`` runs it."""
    return porcelain.merge(repo, theirs, **options).result


@pytest.mark.parametrize("backend", BACKENDS)
@STORE
@given(three_way(CONTENTS), st.sampled_from(("ours", "theirs")))
def test_real_store_merges_match_the_pure_engine(backend, states, side):
    base, ours, theirs = ({"root": 0} | state for state in states)
    with tempfile.TemporaryDirectory() as tmp, init_repo(Path(tmp) / "s", backend) as repo:
        _commit_to(repo, {}, base, "base", 1000)
        base_tip = repo.head_commit()
        porcelain.branch_create(repo, "side")
        _commit_to(repo, base, ours, "ours", 2000)
        ours_tip = repo.head_commit()
        porcelain.branch_create(repo, "by-hand")
        porcelain.checkout(repo, "side")
        _commit_to(repo, base, theirs, "theirs", 3000)
        theirs_tip = repo.head_commit()
        forward_from_theirs = preview(repo, "main")
        porcelain.checkout(repo, "main")
        previewed = preview(repo, "side")
        before = porcelain.export(repo)
        result = merge(repo, "side", strategy=None, author="prop", time_ms=4000)

        if theirs_tip == base_tip:
            assert result.status == previewed.status == "up-to-date" and result.commit is None
            assert porcelain.export(repo) == before
            return
        if ours_tip == base_tip:
            assert result.status == previewed.status == "fast-forwarded"
            assert result.commit == previewed.commit == repo.branch_tip("main") == theirs_tip
            return
        expected = merge_states(_object_ids(base), _object_ids(ours), _object_ids(theirs))
        assert forward_from_theirs.conflicts == tuple(swap(c) for c in expected.conflicts)
        if not expected.conflicts:
            assert result.status == previewed.status == "merged" and result.commit == repo.branch_tip("main")
            tip = repo.commit_obj(result.commit)
            assert tip.parents == (ours_tip, theirs_tip)
            assert repo.get(tip.state).nodes == expected.nodes
            return
        assert result.status == previewed.status == "conflicts"
        assert result.conflicts == previewed.conflicts == expected.conflicts
        assert porcelain.export(repo) == before
        by_strategy = merge(repo, "side", strategy=side, author="prop", time_ms=5000)
        porcelain.checkout(repo, "by-hand")
        by_hand = merge(repo, "side", resolutions={c.id: side for c in expected.conflicts}, author="prop",
                        time_ms=5000)
        assert by_strategy.commit is not None and by_hand.commit is not None
        assert repo.commit_obj(by_strategy.commit).state == repo.commit_obj(by_hand.commit).state


# ------------------------------------------------------------ the real binary

BINARY = settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("backend", BACKENDS)
@BINARY
@given(three_way(CONTENTS))
def test_the_binary_reports_what_the_engine_decides(backend, states):
    base, ours, theirs = ({"root": 0} | state for state in states)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "s"
        with init_repo(store, backend) as repo:
            _commit_to(repo, {}, base, "base", 1000)
            porcelain.branch_create(repo, "side")
            _commit_to(repo, base, ours, "ours", 2000)
            porcelain.checkout(repo, "side")
            _commit_to(repo, base, theirs, "theirs", 3000)
            porcelain.checkout(repo, "main")
            expected = preview(repo, "side")
        before = run_mnem("export", cwd=store).out
        result = run_mnem("--json", "merge", "side", "--time", "4000", cwd=store)
        assert result.code == 0
        doc = result.json
        assert doc["status"] == expected.status
        assert [(c["id"], c["kind"]) for c in doc["conflicts"]] == [(c.id, c.kind) for c in expected.conflicts]
        if expected.conflicts:
            assert run_mnem("export", cwd=store).out == before
            text = run_mnem("merge", "side", cwd=store)
            assert text.code == 1 and text.out.startswith(f"Merge conflict in {len(expected.conflicts)} node(s):\n")
        elif expected.status == "merged":
            contents = {_object_ids({k: v})[k]: v for side in (base, ours, theirs) for k, v in side.items()}
            merged = merge_states(_object_ids(base), _object_ids(ours), _object_ids(theirs)).nodes
            shown = orjson.loads(run_mnem("--json", "show", cwd=store).out)
            assert {k: v["content"] for k, v in shown.items()} == {k: contents[oid] for k, oid in merged.items()}
