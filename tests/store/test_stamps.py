"""``mnem stamps``: created/updated times for many nodes in one invocation.

The CLI tests pin the JSON shape and the linear-history semantics; the
property tests build random histories with merges (and clocks that run
backwards) in process and check every way of answering (the one-pass walk
for every node, the per-node probes for given ids, and a commit's answer
derived from its first parent's) against a naive per-node walk that loads
every parent's state, so each shortcut is proved equivalent to blame's rule.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from conftest import open_repo, run_mnem
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_store import porcelain
from mnem_store.blame import find_blame
from mnem_store.objects import MemoryNode
from mnem_store.repo import Repo
from mnem_store.stamps import node_stamps


def j(*args, cwd, input=None):
    result = run_mnem("--json", *args, cwd=cwd, input=input)
    assert result.code == 0, result.out + result.err
    return result.json


def write(store, time, put=(), delete=()):
    payload = {"put": [dict(p) for p in put], "delete": list(delete)}
    return j("write", "-m", f"t{time}", "--time", str(time), cwd=store, input=json.dumps(payload))["commit"]


def times(doc):
    return {node_id: (entry["created"], entry["updated"]) for node_id, entry in doc.items()}


def test_listed_in_features():
    features = run_mnem("--version", "--json").json["features"]
    assert "stamps" in features and "stamps-prefix" in features


def test_shape_and_linear_semantics(store):
    write(store, 100, [{"id": "a", "content": 1}, {"id": "b", "content": 2, "event_time": 7}])
    write(store, 200, [{"id": "a", "content": 3}])
    write(store, 300, [{"id": "c", "content": 4}], ["b"])
    doc = j("stamps", cwd=store)
    assert list(doc) == ["a", "c"]
    assert list(doc["a"]) == ["node", "created", "updated"]
    assert doc["a"]["node"]["content"] == 3 and doc["a"]["node"]["provenance"]["source"] is None
    assert times(doc) == {"a": (100, 200), "c": (300, 300)}


def test_event_time_wins_and_rebirth_restarts_created(store):
    write(store, 100, [{"id": "a", "content": 1, "event_time": 40}])
    write(store, 200, [{"id": "a", "content": 2}])
    assert times(j("stamps", cwd=store)) == {"a": (40, 200)}
    write(store, 300, delete=["a"])
    write(store, 400, [{"id": "a", "content": 2}])  # the same object as at 200, but a new life
    assert times(j("stamps", cwd=store)) == {"a": (400, 400)}


def test_rev_and_node_filter(store):
    first = write(store, 100, [{"id": "a", "content": 1}, {"id": "b", "content": 2}])
    write(store, 200, [{"id": "a", "content": 5}])
    assert times(j("stamps", first["id"], cwd=store)) == {"a": (100, 100), "b": (100, 100)}
    assert times(j("stamps", "--node", "a", "--node", "ghost", cwd=store)) == {"a": (100, 200)}
    assert times(j("stamps", "main", "--node=b", cwd=store)) == {"b": (100, 100)}


def test_prefix_filter_keeps_a_namespace_and_unites_with_node(store):
    first = write(store, 100, [{"id": "mem:u1:a", "content": 1}, {"id": "mem:u2:b", "content": 2},
                               {"id": "mem:u10:c", "content": 3}, {"id": "other", "content": 4}])
    write(store, 200, [{"id": "mem:u1:a", "content": 5}, {"id": "mem:u1:d", "content": 6}])
    assert times(j("stamps", "--prefix", "mem:u1:", cwd=store)) == {"mem:u1:a": (100, 200), "mem:u1:d": (200, 200)}
    assert times(j("stamps", first["id"], "--prefix=mem:u1:", cwd=store)) == {"mem:u1:a": (100, 100)}
    assert list(j("stamps", "--prefix", "mem:u2:", "--prefix", "oth", "--node", "mem:u1:d", "--node", "ghost",
                  cwd=store)) == ["mem:u1:d", "mem:u2:b", "other"]  # node-id order, both sets
    assert j("stamps", "--prefix", "nothing:", cwd=store) == {}
    assert len(j("stamps", "--prefix", "", cwd=store)) == 5


def test_unborn_branch_is_empty_and_bad_rev_is_invalid_ref(store):
    assert j("stamps", cwd=store) == {}
    assert run_mnem("stamps", cwd=store).out == "(empty)\n"
    bad = run_mnem("--json", "stamps", "nope", cwd=store)
    assert bad.code == 1 and bad.json["error"]["code"] == "invalid_ref"


def test_text_output(store):
    write(store, 86_400_000, [{"id": "a", "content": 1}])
    assert run_mnem("stamps", cwd=store).out == "a\n  created 1970-01-02 00:00:00Z  updated 1970-01-02 00:00:00Z\n"


def test_value_merged_from_a_side_branch_keeps_the_side_commit_time(store):
    write(store, 100, [{"id": "kept", "content": 0}, {"id": "edited", "content": 0}])
    with open_repo(store) as repo:
        porcelain.branch_create(repo, "side")
        porcelain.checkout(repo, "side")
        porcelain.write(repo, [MemoryNode("edited", 1), MemoryNode("new", 1)], [], "side", "t", 200)
        side = repo.branch_tip("side")
        porcelain.checkout(repo, "main")
        porcelain.write(repo, [MemoryNode("ours", 1)], [], "ours", "t", 300)
        merge(repo, "main", side, 400)
    assert times(j("stamps", cwd=store)) == {
        "kept": (100, 100), "edited": (100, 200), "new": (200, 200), "ours": (300, 300),
    }


def test_updated_is_blames_time_after_mnem_merge(store):
    write(store, 100, [{"id": "plan", "content": "free"}, {"id": "seats", "content": 5}])
    j("checkout", "-b", "hypothesis", cwd=store)
    write(store, 200, [{"id": "plan", "content": "pro", "source": "billing"}])
    j("checkout", "main", cwd=store)
    write(store, 300, [{"id": "seats", "content": 6}])
    assert j("merge", "hypothesis", "--time", "400", cwd=store)["status"] == "merged"
    stamped = j("stamps", cwd=store)
    assert times(stamped) == {"plan": (100, 200), "seats": (100, 300)}
    for node_id, entry in stamped.items():
        assert j("blame", node_id, cwd=store)["time"] == entry["updated"]


def merge(repo: Repo, branch: str, theirs: bytes, time: int, pick=None) -> None:
    """A merge commit of ``branch``'s tip and ``theirs``: theirs wins each id (or ``pick`` chooses)."""
    with repo.backend.write():
        ours = repo.branch_tip(branch)
        a, b = repo.commit_nodes(ours), repo.commit_nodes(theirs)
        nodes = {**a, **b} if pick is None else pick(a, b)
        repo.write_commit(branch, (ours, theirs), nodes, "merge", "t", time, ours)


# ---------------------------------------------------------------------------- property: one pass == naive walk

IDS = ["a", "b", "c", "d"]

step = st.one_of(
    st.tuples(
        st.just("write"),
        st.sampled_from(["main", "x", "y"]),
        st.dictionaries(st.sampled_from(IDS), st.integers(0, 2) | st.none(), min_size=1, max_size=3),
        st.none() | st.integers(0, 50),
        st.integers(0, 1000),
    ),
    st.tuples(
        st.just("merge"),
        st.sampled_from(["main", "x", "y"]),
        st.sampled_from(["main", "x", "y"]),
        st.lists(st.sampled_from(["ours", "theirs", "neither"]), min_size=len(IDS), max_size=len(IDS)),
        st.integers(0, 1000),
    ),
)


def naive_stop(repo: Repo, start: bytes, node_id: str, presence: bool) -> bytes:
    target = repo.commit_nodes(start)[node_id]
    current = start
    while True:
        parents = repo.commit_obj(current).parents
        holds = [p for p in parents if (repo.commit_nodes(p).get(node_id) is not None if presence
                                         else repo.commit_nodes(p).get(node_id) == target)]
        if not holds:
            return current
        current = holds[0]


def naive_time(repo: Repo, commit: bytes, node_id: str) -> int:
    node = repo.node(repo.commit_nodes(commit)[node_id])
    return node.event_time if node.event_time is not None else repo.commit_obj(commit).time


def naive_stamps(repo: Repo, commit: bytes) -> dict[str, tuple[int, int]]:
    """``{node id: (created, updated)}`` at ``commit`` by the naive walks."""
    return {
        node_id: (naive_time(repo, naive_stop(repo, commit, node_id, True), node_id),
                  naive_time(repo, naive_stop(repo, commit, node_id, False), node_id))
        for node_id in sorted(repo.commit_nodes(commit))
    }


def build(repo: Repo, steps, after: Callable[[Repo, str], None] | None = None) -> None:
    """The history ``steps`` describe; ``after(repo, branch)`` runs after each step that moved ``branch``."""
    porcelain.write(repo, [MemoryNode("a", 0)], [], "root", "t", 500)
    for branch in ("x", "y"):
        porcelain.branch_create(repo, branch)
    for kind, branch, *rest in steps:
        porcelain.checkout(repo, branch)
        if kind == "write":
            changes, event_time, time = rest
            puts = [MemoryNode(i, v, event_time=event_time) for i, v in changes.items() if v is not None]
            deletes = [i for i, v in changes.items() if v is None]
            porcelain.write(repo, puts, deletes, "w", "t", time, skip_missing=True)
            if after is not None:
                after(repo, branch)
        else:
            other, picks, time = rest
            if other == branch:
                continue

            def pick(a, b, picks=picks):
                chosen = {}
                for node_id, how in zip(IDS, picks, strict=True):
                    side = a if how == "ours" else b if how == "theirs" else {}
                    if node_id in side:
                        chosen[node_id] = side[node_id]
                return chosen

            merge(repo, branch, repo.branch_tip(other), time, pick)
            if after is not None:
                after(repo, branch)


@settings(max_examples=60, deadline=None)
@given(st.lists(step, max_size=14))
def test_one_pass_matches_the_naive_per_node_walk(steps):
    with tempfile.TemporaryDirectory() as tmp, Repo.init(Path(tmp)) as repo:
        build(repo, steps)
        for branch in ("main", "x", "y"):
            tip = repo.branch_tip(branch)
            walked = node_stamps(repo, tip)
            probed = node_stamps(repo, tip, [*repo.commit_nodes(tip), "absent"])
            assert walked == probed
            for prefix in ("a", "b", "zz"):  # a prefix's walk follows only its nodes, with the same answers
                assert node_stamps(repo, tip, prefixes=[prefix]) == {
                    n: s for n, s in walked.items() if n.startswith(prefix)}
            assert {n: (s.created, s.updated) for n, s in walked.items()} == naive_stamps(repo, tip)
            assert all(find_blame(repo, n, tip).time == s.updated for n, s in walked.items())
            assert all(s.object == repo.commit_nodes(tip)[n] for n, s in walked.items())


def check_derived(repo: Repo, branch: str) -> None:
    """The new tip's answer, derived from its first parent's (stamped just before), is the naive walk's."""
    tip = repo.branch_tip(branch)
    parents = repo.commit_obj(tip).parents
    if not parents:
        return
    expected = naive_stamps(repo, tip)
    for prefixes in (None, ["a", "c"]):
        node_stamps(repo, parents[0], prefixes=prefixes)  # kept, so the tip's is derived from it
        got = node_stamps(repo, tip, prefixes=prefixes)
        assert {n: (s.created, s.updated) for n, s in got.items()} == {
            n: t for n, t in expected.items() if prefixes is None or n.startswith(tuple(prefixes))}
        assert all(s.object == repo.commit_nodes(tip)[n] for n, s in got.items())


@settings(max_examples=60, deadline=None)
@given(st.lists(step, max_size=14))
def test_a_commit_s_answer_derived_from_its_parent_s_matches_the_naive_walk(steps):
    """Stamping each new commit after its parent, as a worker does while an agent writes and searches."""
    with tempfile.TemporaryDirectory() as tmp, Repo.init(Path(tmp)) as repo:
        build(repo, steps, after=check_derived)
