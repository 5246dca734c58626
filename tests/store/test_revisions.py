"""git's revision forms (``HEAD``, ``HEAD~1``, ``main~2``, ``main^2``) wherever a command takes a commit-ish.

Upstream's commit-ish (an exact branch name, else a commit id prefix) is
unchanged: branch names cannot hold ``~`` or ``^``, and no branch can be
named ``HEAD``, so the forms only add meanings to specs that were errors.
"""

from __future__ import annotations

import json
from pathlib import Path

import pg_stores
import pytest
from conftest import run_mnem
from mcp_support import call, connect

import mnem_bridge


def ok(*args: str, cwd: Path) -> str:
    result = run_mnem(*args, cwd=cwd)
    assert result.code == 0, result.err
    return result.out


def refused(*args: str, cwd: Path) -> dict[str, str]:
    result = run_mnem("--json", *args, cwd=cwd)
    assert result.code == 1, result.out
    error: dict[str, str] = result.json["error"]
    return error


@pytest.fixture
def line(store: Path) -> tuple[Path, list[str]]:
    """Three commits of ``plan`` on main (v1, v2, v3) and a merge of a side branch; the ids, oldest first."""
    for value in ("v1", "v2", "v3"):
        ok("add", "plan", "--content-json", json.dumps(value), cwd=store)
        ok("commit", "-m", value, cwd=store)
    commits = [c["id"] for c in reversed(run_mnem("--json", "log", cwd=store).json)]
    return store, commits


def test_head_and_ancestry_in_show_log_diff_blame_and_checkout(line: tuple[Path, list[str]]) -> None:
    store, (v1, v2, v3) = line
    assert ok("show", "HEAD", cwd=store) == 'plan\n  "v3"\n'
    assert ok("show", "HEAD~1", cwd=store) == 'plan\n  "v2"\n'
    assert ok("show", "main~2", cwd=store) == ok("show", "main^^", cwd=store) == 'plan\n  "v1"\n'
    assert ok("show", f"{v3[:8]}~1", cwd=store) == ok("show", "HEAD^1", cwd=store) == 'plan\n  "v2"\n'
    assert ok("show", "HEAD^0", cwd=store) == 'plan\n  "v3"\n'
    assert ok("show", "HEAD~1", "--stat", cwd=store) == "~ plan\n"
    assert [c["id"] for c in run_mnem("--json", "log", "HEAD~1", cwd=store).json] == [v2, v1]
    assert ok("diff", "HEAD~2", "HEAD", "--name-only", cwd=store) == "plan\n"
    assert run_mnem("--json", "blame", "plan", "HEAD~1", cwd=store).json["commit"] == v2
    assert run_mnem("--json", "resolve", "main~2", cwd=store).json["commit"] == v1
    ok("checkout", "HEAD~1", cwd=store)
    assert run_mnem("--json", "status", cwd=store).json["head"] == v2  # detached there


def test_a_step_past_the_first_commit_or_a_missing_parent_is_refused(line: tuple[Path, list[str]]) -> None:
    store, (v1, _, _) = line
    assert refused("show", "HEAD~3", cwd=store) == {
        "code": "invalid_ref",
        "message": f'invalid ref: "HEAD~3" goes back past the first commit of the line, {v1[:12]}',
        "detail": f'"HEAD~3" goes back past the first commit of the line, {v1[:12]}'}
    assert "has 1 parent(s), not a parent 2" in refused("show", "HEAD^2", cwd=store)["message"]
    assert refused("log", "nosuch~1", cwd=store)["code"] == "invalid_ref"


def test_head_on_an_empty_store_says_there_is_no_commit_yet(store: Path) -> None:
    assert refused("show", "HEAD", cwd=store)["detail"] == "HEAD does not point at a commit yet; record one first"


def test_a_second_parent_is_the_merged_branch(store: Path) -> None:
    ok("add", "a", "--content-json", "1", cwd=store)
    ok("commit", "-m", "base", cwd=store)
    ok("checkout", "-b", "side", cwd=store)
    ok("add", "b", "--content-json", "2", cwd=store)
    ok("commit", "-m", "side", cwd=store)
    side = run_mnem("--json", "resolve", "side", cwd=store).json["commit"]
    ok("checkout", "main", cwd=store)
    ok("add", "c", "--content-json", "3", cwd=store)
    ok("commit", "-m", "main", cwd=store)
    ok("merge", "side", cwd=store)
    assert run_mnem("--json", "resolve", "HEAD^2", cwd=store).json["commit"] == side


def test_show_of_a_fact_id_hints_at_node(line: tuple[Path, list[str]]) -> None:
    store, _ = line
    error = refused("show", "plan", cwd=store)
    assert error["code"] == "invalid_ref"
    assert error["message"].endswith("'plan' is a fact in memory: to see it, run mnem show --node plan")
    assert "is a fact" not in refused("show", "ghost", cwd=store)["message"]


def test_the_bridge_and_recall_at_take_the_forms(line: tuple[Path, list[str]]) -> None:
    store, (v1, v2, _) = line
    with mnem_bridge.open(pg_stores.address(store), exact=True) as sdk:
        assert sdk.resolve("HEAD~2") == v1
        assert sdk.state_at("main~1")["plan"].content == "v2"
        assert sdk.blame("plan", at="HEAD^").commit == v2


@pytest.mark.anyio
async def test_recall_at_over_mcp_takes_head_tilde(line: tuple[Path, list[str]]) -> None:
    store, _ = line
    async with connect("in-process", pg_stores.address(store)) as client:
        assert (await call(client, "recall_at", commit="HEAD~1", id="plan"))["content"] == "v2"
        assert (await call(client, "whats_new", commit="HEAD~2")) == {"plan": "added"}
