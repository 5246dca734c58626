"""``mnem write --branch NAME``: one commit on another branch than HEAD's, HEAD left where it is.

What a LangGraph run replayed from a past checkpoint (and a checkpointer
keeping its checkpoints apart) needs: its writes go on its own branch while
others keep writing on HEAD's.  A missing branch starts as a root; a bad
name is refused before anything is written; a put's TTL lease is the
written branch's.  Both backends (the ``store`` fixture).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import run_mnem


def mnem_json(store: Path, *args: str, input: str | None = None) -> Any:
    run = run_mnem("--json", *args, cwd=store, input=input)
    assert run.code == 0, run.err
    return json.loads(run.out)


def put(node_id: str, content: Any, **more: Any) -> str:
    return json.dumps({"put": [{"id": node_id, "content": content, **more}]})


def test_write_on_another_branch_leaves_head_and_its_branch_alone(store: Path) -> None:
    first = mnem_json(store, "write", "-m", "on main", input=put("a", {"v": 1}))["commit"]["id"]
    mnem_json(store, "branch", "side")
    side = mnem_json(store, "write", "-m", "on side", "--branch=side", input=put("a", {"v": 2}))["commit"]
    assert side["parents"] == [first]
    status = mnem_json(store, "status")
    assert (status["branch"], status["commit"]) == ("main", first)
    assert dict((b["name"], b["commit"]) for b in mnem_json(store, "branch")) == {"main": first, "side": side["id"]}
    assert mnem_json(store, "show", "--node=a")["content"] == {"v": 1}
    assert mnem_json(store, "show", "--node=a", "--", "side")["content"] == {"v": 2}


def test_a_missing_branch_starts_as_a_root_and_a_bad_name_is_refused(store: Path) -> None:
    mnem_json(store, "write", "-m", "on main", input=put("a", {"v": 1}))
    root = mnem_json(store, "write", "-m", "apart", "--branch=apart/x", input=put("b", {"v": 1}))["commit"]
    assert root["parents"] == []
    assert mnem_json(store, "ls", "--", "apart/x") == ["b"] and mnem_json(store, "ls") == ["a"]
    refused = run_mnem("--json", "write", "-m", "bad", "--branch=.bad", cwd=store, input=put("c", {"v": 1}))
    assert refused.code != 0 and json.loads(refused.out)["error"]["code"] == "invalid_ref"
    assert [b["name"] for b in mnem_json(store, "branch")] == ["apart/x", "main"]


def test_a_put_ttl_is_a_lease_on_the_branch_written(store: Path) -> None:
    mnem_json(store, "write", "-m", "on main", input=put("a", {"v": 1}))
    mnem_json(store, "branch", "side")
    mnem_json(store, "write", "-m", "leased", "--branch=side", input=put("a", {"v": 2}, ttl=60_000))
    assert "expires" not in mnem_json(store, "stamps", "--live", "--node=a")["a"]
    mnem_json(store, "checkout", "side")
    assert mnem_json(store, "stamps", "--live", "--node=a")["a"]["expires"] > 0
