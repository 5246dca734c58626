"""Every answer of ``mnem ui`` is bounded: structural checks, not timings.

A store with many facts and a long history is built in process; each
query is then run with the store's reads counted (``Repo.commit_obj`` and
``Repo.node``), and the counts must follow the page asked for, not the
size of the memory or the length of the history.  The time to first paint
at 10k facts and 10k commits is measured by ``benchmarks/ui_first_paint.py``.
"""

from __future__ import annotations

import pytest
from conftest import open_repo

from mnem_store import porcelain
from mnem_store.objects import MemoryNode
from mnem_store.ui import params, queries

FACTS = 1_000
COMMITS = 400


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ui-scale") / "store"
    from mnem_store.repo import Repo

    with Repo.init(root) as repo:
        porcelain.write(repo, [MemoryNode(f"fact-{i:05d}", i) for i in range(FACTS)], [], "import", "loader", 1)
        porcelain.write(repo, [MemoryNode("rare", "first")], [], "rare first", "agent", 2)
        for step in range(COMMITS):
            porcelain.write(repo, [MemoryNode(f"fact-{step % 50:05d}", -step)], [], f"step {step}", "agent", 3 + step)
        porcelain.write(repo, [MemoryNode("rare", "second")], [], "rare second", "agent", 10_000)
    return root


@pytest.fixture
def counted(big, mocker):
    with open_repo(big) as repo:
        yield repo, mocker.spy(repo, "commit_obj"), mocker.spy(repo, "node")


def test_a_page_of_memory_reads_the_page_only(counted):
    repo, commits, nodes = counted
    page = queries.facts(repo, None, "", 0, 50)  # the 50 facts every step rewrites: each changed 8 times
    assert page["total"] == FACTS + 1 and len(page["facts"]) == 50
    assert page["facts"][0]["set_by"]["message"] == "step 350"
    assert nodes.call_count <= 50 and commits.call_count <= 51


def test_a_page_of_history_reads_about_its_commits(counted):
    repo, commits, _ = counted
    page = queries.history(repo, None, 0, 50)
    assert len(page["commits"]) == 50 and page["more"]
    assert commits.call_count <= 51 + 2


def test_a_page_of_every_branch_reads_about_its_commits_per_branch(counted):
    repo, commits, _ = counted
    page = queries.history(repo, None, 0, 50, every=True)
    assert len(page["commits"]) == 50 and page["more"]
    assert commits.call_count <= 51 + 3  # one branch here: its walk, and its tip's message in the branch list
    assert page["commits"] == queries.history(repo, None, 0, 50)["commits"]


def test_a_timeline_follows_the_facts_changes_not_the_history(counted):
    repo, commits, nodes = counted
    steps = queries.timeline(repo, "rare", None, 20)["entries"]
    assert [s["value"]["content"] for s in steps] == ["second", "first"]
    assert commits.call_count <= 12 and nodes.call_count <= 8


def test_a_large_change_set_comes_a_page_at_a_time(counted):
    repo, _, nodes = counted
    first = porcelain.log(repo, first_parent=True)[-1][0].hex()
    page = queries.commit_changes(repo, first, 100, 50)
    assert page["total"] == FACTS and len(page["changes"]) == 50
    assert nodes.call_count <= 2 * 50


def test_no_page_is_larger_than_the_bound():
    assert params.page_size({"limit": str(params.MAX_PAGE)}, 50) == params.MAX_PAGE
    with pytest.raises(Exception, match="limit must be"):
        params.page_size({"limit": str(params.MAX_PAGE + 1)}, 50)
