"""``porcelain.timeline``, ``porcelain.changes`` and ``porcelain.log(rev=...)``: what ``mnem ui`` reads.

The timeline is checked against a naive walk that loads every commit of the
first-parent chain, on both backends, through removal, re-adding, a merged
side branch and pagination; its cost is checked structurally: a node that
changed twice in a long history costs a handful of commit reads, not one
per commit.
"""

from __future__ import annotations

from conftest import open_repo

from mnem_store import porcelain
from mnem_store.objects import MemoryNode, Provenance
from mnem_store.repo import Repo


def put(repo: Repo, time: int, *nodes: MemoryNode, delete: tuple[str, ...] = ()) -> bytes:
    written = porcelain.write(repo, list(nodes), list(delete), f"t{time}", "tester", time)
    assert written.commit is not None
    return written.commit[0]


def naive(repo: Repo, node_id: str) -> list[tuple[bytes, object]]:
    """Every first-parent commit whose value of ``node_id`` differs from its first parent's, newest first."""
    out = []
    for raw, commit in porcelain.log(repo, first_parent=True):
        parent = commit.parents[0].hex() if commit.parents else None
        here = porcelain.show_node(repo, node_id, raw.hex())
        before = porcelain.show_node(repo, node_id, parent) if parent else None
        if here != before:
            out.append((raw, here.content if here else None))
    return out


def test_every_value_newest_first_with_kinds_provenance_and_previous(store):
    with open_repo(store) as repo:
        put(repo, 1, MemoryNode("plan", "enterprise", provenance=Provenance(source="ticket-4821")))
        put(repo, 2, MemoryNode("other", 1))
        put(repo, 3, MemoryNode("plan", "pro", provenance=Provenance(source="billing-note-8842", agent_step="step-31")))
        put(repo, 4, delete=("plan",))
        put(repo, 5, MemoryNode("plan", "pro again"))
        found = porcelain.timeline(repo, "plan", limit=50)
        assert [(e.kind, e.value.content if e.value else None) for e in found.entries] == [
            ("added", "pro again"), ("removed", None), ("modified", "pro"), ("added", "enterprise")]
        assert [(e.commit, e.value.content if e.value else None) for e in found.entries] == naive(repo, "plan")
        assert found.next is None
        modified = found.entries[2]
        assert modified.value.provenance.source == "billing-note-8842"
        assert modified.previous.content == "enterprise"
        assert modified.commit_obj.message == "t3" and modified.origin == modified.commit
        assert found.entries[1].previous.content == "pro"


def test_pages_continue_where_the_last_stopped(store):
    with open_repo(store) as repo:
        for time in range(1, 8):
            put(repo, time, MemoryNode("n", time))
        first = porcelain.timeline(repo, "n", limit=3)
        assert [e.value.content for e in first.entries] == [7, 6, 5]
        second = porcelain.timeline(repo, "n", first.next.hex(), limit=3)
        third = porcelain.timeline(repo, "n", second.next.hex(), limit=3)
        assert [e.value.content for e in second.entries + third.entries] == [4, 3, 2, 1]
        assert third.next is None
        assert porcelain.timeline(repo, "ghost", limit=3).entries == []


def test_a_merged_side_branch_value_names_the_side_commit(store):
    with open_repo(store) as repo:
        put(repo, 1, MemoryNode("seats", 35))
        porcelain.checkout(repo, None, create="hypothesis")
        side = put(repo, 2, MemoryNode("seats", 40, provenance=Provenance(source="crm")))
        porcelain.checkout(repo, "main")
        put(repo, 3, MemoryNode("unrelated", 0))
        merged = porcelain.merge(repo, "hypothesis", author="tester", time_ms=4).result.commit
        entries = porcelain.timeline(repo, "seats", limit=10).entries
        assert (entries[0].commit, entries[0].origin, entries[0].value.content) == (merged, side, 40)
        assert entries[0].origin_obj.message == "t2" and len(entries) == 2


def test_cost_follows_the_nodes_changes_not_the_history(sqlite_store, mocker):
    with open_repo(sqlite_store) as repo:
        put(repo, 1, MemoryNode("rare", "a"))
        for time in range(2, 200):
            put(repo, time, MemoryNode("busy", time))
        put(repo, 200, MemoryNode("rare", "b"))
        reads = mocker.spy(repo, "commit_obj")
        assert len(porcelain.timeline(repo, "rare", limit=10).entries) == 2
        assert reads.call_count < 12


def test_changes_pages_a_commits_change_set_with_both_values(store):
    with open_repo(store) as repo:
        put(repo, 1, *(MemoryNode(f"k{i}", i) for i in range(5)))
        raw = put(repo, 2, MemoryNode("k1", "one"), MemoryNode("new", True), delete=("k3",))
        page = porcelain.changes(repo, raw.hex()[:12], 1, 2)
        assert page.total == 3 and page.commit == raw
        assert [(c.id, c.kind, c.old and c.old.content, c.new and c.new.content) for c in page.changes] == [
            ("k3", "removed", 3, None), ("new", "added", None, True)]


def test_log_from_a_rev(store):
    with open_repo(store) as repo:
        first = put(repo, 1, MemoryNode("a", 1))
        put(repo, 2, MemoryNode("a", 2))
        assert [raw for raw, _ in porcelain.log(repo, rev=first.hex())] == [first]
        assert porcelain.head(repo)[0].branch == "main"
