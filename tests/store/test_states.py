"""States stored as changes: every rebuilt state must be the one its id names.

The property test drives a real store in-process through random writes,
staged commits, branches, checkouts and merges, keeps a naive model (each
commit's full node map, replayed from the operations), and checks every
commit against it: the naive map hashes to the commit's state id, a cold
store rebuilds exactly that map, single-node lookups and change kinds agree,
and export -> import -> export is byte-identical.  The other tests damage
what the store keeps to go fast (snapshots, change rows) and require a
correct answer or a ``corrupt_store`` error, never a wrong answer.
"""

from __future__ import annotations

import random
import sqlite3
import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnem_store import porcelain
from mnem_store.errors import CorruptStoreError, InvalidRefError
from mnem_store.graph import Graph
from mnem_store.merge import merge, merge_states, resolve_conflicts
from mnem_store.objects import MemoryNode, State, encode_object
from mnem_store.portable import dump_export
from mnem_store.repo import Repo, diff_nodes
from mnem_store.stateimage import BLOCK, StateImage

#: Short, empty, non-ASCII, NUL-holding and long (one- and two-byte CBOR length) ids: canonical order is length-first.
NODE_IDS = ("a", "b", "é", "", "zz", "nul\x00inside", "a-node-id-longer-than-23-bytes", "k" * 300)
BRANCHES = ("main", "side", "topic")

Model = dict[bytes, dict[str, bytes]]

ids = st.sampled_from(NODE_IDS)
puts = st.dictionaries(ids, st.integers(0, 3), max_size=3)
operation = st.one_of(
    st.tuples(st.just("write"), puts, st.lists(ids, max_size=2)),
    st.tuples(st.just("stage"), puts, st.lists(ids, max_size=2)),
    # a branch from some earlier commit, then checked out: the next writes diverge from the old tip
    st.tuples(st.just("branch"), st.sampled_from(BRANCHES), st.integers(0, 10_000)),
    st.tuples(st.just("checkout"), st.sampled_from(BRANCHES)),
    st.tuples(st.just("merge"), st.sampled_from(BRANCHES)),
)


def node(node_id: str, value: int) -> MemoryNode:
    return MemoryNode(node_id, value)


class Driver:
    """Runs operations on a store and on the naive model side by side."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.model: Model = {}
        self.commits: list[bytes] = []
        self.clock = 0

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def head_nodes(self) -> dict[str, bytes]:
        tip = self.repo.head_commit()
        return self.model[tip] if tip is not None else {}

    def record(self, commit: bytes | None, nodes: dict[str, bytes]) -> None:
        if commit is not None:
            self.model.setdefault(commit, nodes)
            assert self.model[commit] == nodes
            self.commits.append(commit)

    def run(self, op: tuple) -> None:
        """One operation, in one write transaction (as one command would run it)."""
        with self.repo.backend.write():
            self._run(op)

    def _run(self, op: tuple) -> None:
        kind = op[0]
        if kind == "write":
            self.write(op[1], op[2])
        elif kind == "stage":
            self.stage_and_commit(op[1], op[2])
        elif kind == "branch" and self.commits and self.repo.branch_tip(op[1]) is None:
            self.repo.create_branch(op[1], self.commits[op[2] % len(self.commits)].hex())
            self.repo.checkout(op[1])
        elif kind == "checkout" and self.repo.branch_tip(op[1]) is not None:
            self.repo.checkout(op[1])
        elif kind == "merge" and self.repo.branch_tip(op[1]) is not None:
            self.merge(op[1])

    def write(self, values: dict[str, int], deletes: list[str]) -> None:
        nodes = dict(self.head_nodes())
        for node_id, value in values.items():
            nodes[node_id] = encode_object(node(node_id, value))[0]
        for node_id in deletes:
            nodes.pop(node_id, None)
        written, changes = self.repo.write(
            [node(k, v) for k, v in values.items()], deletes, "w", "t", self.tick(), skip_missing=True
        )
        commit = None if written is None else written[0]
        self.record(commit, nodes)
        if commit is not None:
            assert changes == diff_nodes(self.head_nodes_before(commit), nodes)

    def head_nodes_before(self, commit: bytes) -> dict[str, bytes]:
        parents = self.repo.commit_obj(commit).parents
        return self.model[parents[0]] if parents else {}

    def stage_and_commit(self, values: dict[str, int], deletes: list[str]) -> None:
        staged: dict[str, bytes] = {}
        tombstones: set[str] = set()
        head = self.head_nodes()
        for node_id, value in values.items():
            staged[node_id] = self.repo.stage(node(node_id, value))
        for node_id in deletes:
            try:
                self.repo.remove(node_id)
            except InvalidRefError:
                assert node_id not in head and node_id not in staged
                continue
            staged.pop(node_id, None)
            if node_id in head:
                tombstones.add(node_id)
        nodes = {k: v for k, v in head.items() if k not in tombstones} | staged
        assert self.repo.working_nodes() == nodes
        for node_id in NODE_IDS:
            assert self.repo.working_node(node_id) == nodes.get(node_id)
        self.record(self.repo.commit("s", "t", self.tick()), nodes)

    def merge(self, theirs: str) -> None:
        ours = self.repo.head_commit()
        try:
            result = merge(self.repo, theirs, strategy="ours", author="t", time_ms=self.tick())
        except InvalidRefError:  # no common ancestor or criss-cross: upstream refuses, nothing written
            return
        if result.status == "merged":
            commit = self.repo.commit_obj(result.commit)
            base = Graph(self.repo).merge_base(commit.parents[0], commit.parents[1])
            state = merge_states(self.model[base], self.model[commit.parents[0]], self.model[commit.parents[1]])
            nodes = resolve_conflicts(state, {}, "ours")[0]
            self.record(result.commit, nodes)
            assert commit.parents[0] == ours


def check_store(root: Path, model: Model) -> None:
    """Every commit of a store, read cold, against the naive model."""
    with Repo.open(root) as repo:
        for commit, nodes in model.items():
            obj = repo.commit_obj(commit)
            assert encode_object(State(nodes))[0] == obj.state  # the naive full state is the one hashed
            assert repo.commit_nodes(commit) == nodes
            assert repo.get(obj.state).nodes == nodes
            for node_id in NODE_IDS:
                assert repo.node_at(commit, node_id) == nodes.get(node_id)
            parent = model[obj.parents[0]] if obj.parents else {}
            assert repo.changes_of(commit) == {c.id: c.kind for c in diff_nodes(parent, nodes)}
            chain = [commit]
            while parents := repo.commit_obj(chain[-1]).parents:
                chain.append(parents[0])
            assert repo.first_parent_chain(commit) == chain
    with Repo.open(root) as repo:  # a cold cache again, newest first: every rebuild starts from a snapshot or the root
        for commit, nodes in reversed(list(model.items())):
            assert repo.commit_nodes(commit) == nodes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, min_size=1, max_size=40))
def test_rebuilt_states_equal_a_naive_replay(ops):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        with Repo.init(root) as repo:
            driver = Driver(repo)
            for op in ops:
                driver.run(op)
            exported = dump_export(porcelain.export(repo))
        check_store(root, driver.model)
        copy_root, _ = porcelain.import_(Path(tmp) / "copy", orjson.loads(exported))
        with Repo.open(copy_root) as copy:
            assert dump_export(porcelain.export(copy)) == exported
        check_store(Path(tmp) / "copy", driver.model)


def random_operation(rng: random.Random) -> tuple:
    """Writes three times as often as anything else, so branches diverge and merges have work to do."""
    kind = rng.choice(["write", "write", "write", "stage", "branch", "checkout", "merge"])
    if kind in ("write", "stage"):
        values = {rng.choice(NODE_IDS): rng.randrange(4) for _ in range(rng.randrange(4))}
        return kind, values, [rng.choice(NODE_IDS) for _ in range(rng.randrange(3))]
    if kind == "branch":
        return kind, rng.choice(BRANCHES), rng.randrange(10_000)
    return kind, rng.choice(BRANCHES)


@pytest.mark.parametrize("seed", range(4))
def test_long_branching_histories_rebuild_exactly(seed, tmp_path):
    """Longer runs than shrinking favours: several lanes, merges, and chains through many snapshots."""
    rng = random.Random(seed)
    with Repo.init(tmp_path / "store") as repo:
        driver = Driver(repo)
        for _ in range(150):
            driver.run(random_operation(rng))
        lanes = repo.backend.db.conn.execute("SELECT count(*) FROM lanes").fetchone()[0]
        merges = sum(len(repo.commit_obj(c).parents) > 1 for c in driver.model)
    assert lanes > 1 and merges > 0
    check_store(tmp_path / "store", driver.model)


def test_reindex_re_derives_links_and_lanes(tmp_path):
    rng = random.Random(11)
    with Repo.init(tmp_path / "store") as repo:
        driver = Driver(repo)
        for _ in range(120):
            driver.run(random_operation(rng))
    sql(tmp_path / "store", "UPDATE commits SET lane = (SELECT min(key) FROM commits), parent = NULL")
    sql(tmp_path / "store", "DELETE FROM lanes")
    with Repo.open(tmp_path / "store") as repo:
        assert porcelain.reindex(repo) == len(driver.model)
    check_store(tmp_path / "store", driver.model)


# ------------------------------------------------------------------ state images


def test_image_edits_match_a_full_encoding():
    nodes = {f"n{i}": bytes([i % 251]) * 32 for i in range(5 * BLOCK)}
    image = StateImage.empty().apply(nodes)
    for step in range(40):
        keys = [f"n{(step * 37 + j) % (6 * BLOCK)}" for j in range(step * 7)]
        changes = {key: (bytes([step]) * 32 if j % 3 else None) for j, key in enumerate(keys)}
        image = image.apply(changes)
        for key, raw in changes.items():
            if raw is None:
                nodes.pop(key, None)
            else:
                nodes[key] = raw
        raw_id, data = encode_object(State(nodes))
        assert image.encoding() == data and image.state_id() == raw_id
        assert StateImage.from_canonical(data, raw_id).encoding() == data


def test_an_image_refuses_bytes_that_are_not_its_id():
    raw_id, data = encode_object(State({"a": bytes(32)}))
    with pytest.raises(CorruptStoreError):
        StateImage.from_canonical(data.replace(bytes(32), b"\x01" * 32), raw_id)


# -------------------------------------------------------------------- damage


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, list[bytes], list[dict[str, bytes]]]:
    """Twelve commits over a five-node memory (snapshots every few commits), with each commit's map."""
    root = tmp_path / "store"
    commits, states = [], []
    with Repo.init(root) as repo:
        for step in range(12):
            porcelain.write(repo, [node(f"n{(step * 3 + j) % 5}", step) for j in range(2)], [], f"c{step}", "t", step)
            commits.append(repo.head_commit())
            states.append(repo.commit_nodes(repo.head_commit()))
    return root, commits, states


def sql(root: Path, statement: str, *args: object) -> list[tuple]:
    db = sqlite3.connect(root / ".mnem" / "store.sqlite3")
    try:
        with db:
            return db.execute(statement, args).fetchall()
    finally:
        db.close()


def test_a_damaged_snapshot_is_skipped_not_trusted(history):
    root, commits, states = history
    snapshots = sql(root, "SELECT o.key FROM commits c JOIN objects o ON o.key = c.state WHERE c.since = 0")
    assert len(snapshots) >= 2
    # swap in another state's (valid, canonical) bytes, and blank one out
    first, second = snapshots[0][0], snapshots[1][0]
    sql(root, "UPDATE objects SET data = (SELECT data FROM objects WHERE key = ?) WHERE key = ?", second, first)
    sql(root, "UPDATE objects SET data = NULL WHERE key = ?", second)
    with Repo.open(root) as repo:
        assert [repo.commit_nodes(c) for c in commits] == states


def test_a_damaged_change_row_is_reported_never_answered(history):
    root, commits, _ = history
    # point one change at another node object: the rebuilt state no longer hashes to its id
    sql(root, """UPDATE changes SET object = (SELECT key FROM objects WHERE kind = 0 ORDER BY key LIMIT 1)
                 WHERE commit_key = (SELECT max(key) FROM commits) AND object IS NOT NULL""")
    sql(root, "UPDATE commits SET since = 1 WHERE since = 0")  # no snapshot to hide behind
    with Repo.open(root) as repo, pytest.raises(CorruptStoreError, match="does not rebuild to its id"):
        repo.commit_nodes(commits[-1])


def test_each_process_cache_is_keyed_by_state_id(history):
    """A cached image answers only for the state it hashed to, so a commit written elsewhere is rebuilt."""
    root, commits, states = history
    with Repo.open(root) as reader:
        assert reader.commit_nodes(commits[-1]) == states[-1]
        with Repo.open(root) as writer:
            porcelain.write(writer, [node("n0", 99)], [], "elsewhere", "t", 99)
            newest = writer.head_commit()
            expected = writer.commit_nodes(newest)
        assert reader.commit_nodes(newest) == expected != states[-1]


# ---------------------------------------------------------------- storage size


def test_a_commit_costs_what_it_changed_not_the_memory_size(tmp_path):
    root = tmp_path / "store"
    with Repo.init(root) as repo:
        porcelain.write(repo, [node(f"node-{i:05d}", i) for i in range(3000)], [], "bulk", "t", 0)
        full_state = len(encode_object(State(repo.commit_nodes(repo.head_commit())))[1])

        def stored() -> int:
            repo.backend.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return (root / ".mnem" / "store.sqlite3").stat().st_size

        before = stored()
        for step in range(100):
            porcelain.write(repo, [node(f"node-{step * 29 % 3000:05d}", -step)], [], f"c{step}", "t", step + 1)
        grown = stored() - before
    # full states would add 100 x ~130 KB; changes add ~100 small rows plus at most a snapshot or two
    assert grown < 3 * full_state, (grown, full_state)


def test_older_schemas_are_refused(tmp_path):
    root = tmp_path / "store"
    Repo.init(root).close()
    sql(root, "UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    with pytest.raises(CorruptStoreError, match="schema is version 1"):
        Repo.open(root)
