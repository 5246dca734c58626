"""``mnem verify`` passes a whole store and names every problem in a damaged one, changing nothing."""

import json

import pytest
from conftest import run_mnem, store_fingerprint, store_sql

sql = store_sql


@pytest.fixture
def history(store):
    """A branching history with a merge, a deletion and a snapshot-free tip."""
    for node, value in (("plan", "enterprise"), ("seats", "40")):
        run_mnem("add", node, value, cwd=store)
    run_mnem("commit", "-m", "one", "--time", "1", cwd=store)
    run_mnem("checkout", "-b", "side", cwd=store)
    run_mnem("write", "-m", "side", "--time", "2", cwd=store, input='{"put": [{"id": "owner", "content": "ann"}]}')
    run_mnem("checkout", "main", cwd=store)
    run_mnem("write", "-m", "drop seats", "--time", "3", cwd=store, input='{"delete": ["seats"]}')
    assert run_mnem("merge", "side", "--time", "4", cwd=store).code == 0
    return store


def test_a_whole_store_verifies(history):
    result = run_mnem("verify", cwd=history)
    assert result.code == 0 and result.out.endswith("the store is whole\n")
    doc = run_mnem("--json", "verify", cwd=history).json
    assert doc["ok"] is True and doc["problems"] == [] and doc["commits"] == 4 and doc["refs"] == 2


def test_an_empty_store_verifies(store):
    assert run_mnem("--json", "verify", cwd=store).json["objects"] == 0


def damaged(store, *statements):
    for statement, *args in statements:
        sql(store, statement, *args)
    before = store_fingerprint(store)
    as_json = run_mnem("--json", "verify", cwd=store)
    as_text = run_mnem("verify", cwd=store)
    assert as_json.code == 1 and as_text.code == 1
    error = as_json.json["error"]
    assert error["code"] == "corrupt_store" and error["problems"]
    assert as_text.err.startswith("Error: corrupt store: ") and "Traceback" not in as_text.err
    assert len(as_text.out.splitlines()) == len(error["problems"])
    assert store_fingerprint(store) == before  # verify only reads
    return error["problems"]


def test_a_tampered_node_is_named(history):
    problems = damaged(history, (
        "UPDATE objects SET data = ? WHERE key = (SELECT min(key) FROM objects WHERE kind = 0)", b"\xa0"))
    assert any(p["what"] == "object" and "does not hash to its id" in p["message"] for p in problems)


def test_a_ref_to_nothing_and_a_detached_head_at_a_node_are_named(history):
    node = bytes(sql(history, "SELECT id FROM objects WHERE kind = 0 LIMIT 1")[0][0])
    problems = damaged(history, ("UPDATE meta SET value = ? WHERE key = 'head'", node.hex()),
                       ("UPDATE refs SET target = ? WHERE name = 'side'", b"\x01" * 32))
    assert {"what": "ref", "id": "side", "message": f"points at {'01' * 32}, missing"} in problems
    assert any(p["what"] == "head" and "a memory_node" in p["message"] for p in problems)


def test_a_damaged_change_row_is_named(history):
    problems = damaged(history, (
        "UPDATE changes SET object = (SELECT key FROM objects WHERE kind = 0 ORDER BY key LIMIT 1) "
        "WHERE commit_key = (SELECT max(commit_key) FROM changes)",),
        ("UPDATE commits SET since = 1 WHERE since = 0",))
    assert any(p["what"] in ("state", "index") for p in problems)


def test_a_commit_missing_from_the_graph_is_named(history):
    problems = damaged(history, ("DELETE FROM commits WHERE key = (SELECT max(key) FROM commits)",))
    assert any(p["what"] == "commit" and p["message"] == "is not in the commit graph" for p in problems)


def test_a_graph_link_that_disagrees_with_the_commit_is_named(history):
    problems = damaged(history, ("UPDATE commits SET parent = NULL WHERE key = (SELECT max(key) FROM commits)",))
    assert any(p["what"] == "index" and "disagrees with the commit's parents" in p["message"] for p in problems)


def test_a_change_row_that_changes_nothing_is_named(history):
    """A row claiming a node changed when the state says it did not is a wrong index entry, even if it rebuilds."""
    problems = damaged(history, (
        "INSERT INTO changes (commit_key, name, kind, object) SELECT c.key, ch.name, 1, ch.object "
        "FROM commits c, changes ch WHERE c.key = (SELECT max(key) FROM commits) "
        "AND ch.commit_key = (SELECT min(key) FROM commits) AND ch.name NOT IN "
        "(SELECT name FROM changes WHERE commit_key = c.key) LIMIT 1",))
    assert any(p["what"] == "index" and "change index says" in p["message"] for p in problems)


def test_a_wrong_corrected_time_is_named_and_reindex_repairs_it(history):
    # The merge's corrected time set below its parents' would list it after them in `log`.
    problems = damaged(history, ("UPDATE commits SET corrected = ? WHERE key = (SELECT max(key) FROM commits)",
                                 (0).to_bytes(9, "big")))
    assert any(p["what"] == "index" and "corrected time 0 should be 4" in p["message"] for p in problems)
    assert run_mnem("reindex", cwd=history).code == 0
    assert run_mnem("verify", cwd=history).code == 0
    assert run_mnem("--json", "log", "-n", "1", cwd=history).json[0]["message"] == "merge side into main"


def test_a_tracking_branch_to_nothing_or_to_a_node_is_named(history, tmp_path):
    """Tracking branches live in the remotes setting, not the refs table; verify checks them as refs."""
    tips = {row["name"]: row["commit"] for row in run_mnem("--json", "branch", cwd=history).json}
    node = bytes(sql(history, "SELECT id FROM objects WHERE kind = 0 LIMIT 1")[0][0]).hex()
    assert run_mnem("remote", "add", "origin", str(tmp_path / "elsewhere"), cwd=history).code == 0
    planted = {"origin": {"url": str(tmp_path / "elsewhere"),
                          "branches": {"gone": "01" * 32, "main": tips["main"], "node": node}}}
    problems = damaged(history, ("UPDATE meta SET value = ? WHERE key = 'setting:remotes'",
                                 json.dumps(planted, separators=(",", ":"))))
    assert problems == [
        {"what": "tracking", "id": "origin/gone", "message": f"points at {'01' * 32}, missing"},
        {"what": "tracking", "id": "origin/node", "message": f"points at {node}, a memory_node"},
    ]
    assert run_mnem("--json", "verify", cwd=history).json["error"]["refs"] == 5  # 2 branches, 3 tracking


def test_a_damaged_remotes_setting_is_named(history, tmp_path):
    assert run_mnem("remote", "add", "origin", str(tmp_path / "elsewhere"), cwd=history).code == 0
    problems = damaged(history, ("UPDATE meta SET value = ? WHERE key = 'setting:remotes'", '{"origin": 1}'))
    assert [(p["what"], p["id"]) for p in problems] == [("tracking", "remotes")]
    assert "remotes setting is damaged" in problems[0]["message"]
