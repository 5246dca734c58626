"""Every command answers with exactly one JSON document in the SDK shapes."""

import pg_stores
from conftest import run_mnem

PROV_EMPTY = {"agent_step": None, "observation": None, "tool_call": None, "source": None, "note": None}


def j(*args, cwd, input=None):
    result = run_mnem("--json", *args, cwd=cwd, input=input)
    assert result.code == 0, result.out + result.err
    assert result.err == "" and result.out.endswith("\n") and result.out.count("\n") == 1
    return result.json


def test_self_description():
    doc = run_mnem("--version", "--json").json
    assert doc["name"] == "mnem" and doc["format_version"] == 1 and doc["contract"] == 1
    assert "write" in doc["features"]


def test_init_add_commit_log_show_shapes(tmp_path):
    init = j("init", "s", cwd=tmp_path)
    assert init == {"root": str(tmp_path / "s"), "store": str(tmp_path / "s" / ".mnem")}
    store = tmp_path / "s"
    added = j(
        "add", "plan", "--content-json", '{"tier": "pro"}', "--step", "s1", "--source", "src", "--observation", "obs",
        "--tool-call", "tc", "--note", "nb", "--event-time", "-5", "--content-kind", "claim", cwd=store,
    )
    node = {
        "id": "plan", "content": {"tier": "pro"}, "content_kind": "claim",
        "provenance": {"agent_step": "s1", "observation": "obs", "tool_call": "tc", "source": "src", "note": "nb"},
        "event_time": -5,
    }
    assert added["node"] == node and len(added["object"]) == 64
    commit = j("commit", "-m", "m", "--author", "a", "--time", "7", cwd=store)
    assert list(commit) == ["id", "parents", "state", "message", "author", "time"]
    assert commit["parents"] == [] and commit["message"] == "m" and commit["author"] == "a" and commit["time"] == 7
    assert j("log", cwd=store) == [commit]
    assert j("show", cwd=store) == {"plan": node}
    assert j("show", commit["id"], "--node", "plan", cwd=store) == node
    assert j("show", "--node", "ghost", cwd=store) is None
    assert j("show", commit["id"][:8], "--stat", cwd=store) == {"plan": "added"}
    assert j("resolve", "main", cwd=store) == {"commit": commit["id"]}


def test_status_branch_checkout_diff_shapes(store):
    j("add", "a", "1", cwd=store)
    base = j("commit", "-m", "base", cwd=store)
    j("add", "b", "2", cwd=store)
    j("rm", "a", cwd=store)
    status = j("status", cwd=store)
    assert status["head"] == "ref: main" and status["branch"] == "main" and status["commit"] == base["id"]
    assert [s["id"] for s in status["staged"]] == ["b"] and status["staged_deletions"] == ["a"]
    assert [(c["id"], c["kind"]) for c in status["changes"]] == [("a", "removed"), ("b", "added")]
    removed = status["changes"][0]
    assert removed["old"]["content"] == "1" and removed["new"] is None
    assert j("diff", cwd=store) == status["changes"]
    assert j("unstage", "a", cwd=store) == {"id": "a", "unstaged": True}
    assert j("unstage", "a", cwd=store) == {"id": "a", "unstaged": False}
    assert j("checkout", "-b", "side", "--discard", cwd=store) == {"result": "branch", "head": "ref: side"}
    assert j("branch", cwd=store) == [
        {"name": "main", "commit": base["id"], "current": False},
        {"name": "side", "commit": base["id"], "current": True},
    ]
    assert j("checkout", base["id"], cwd=store) == {"result": "detached", "head": base["id"]}
    assert j("branch", "-d", "side", cwd=store) == {"name": "side", "deleted": True}


def test_write_is_one_commit_and_leaves_staging_alone(store):
    j("add", "staged-only", "x", cwd=store)
    payload = ('{"put": [{"id": "plan", "content": "pro", "step": "s31", "observation": "bill", "event_time": 17}, '
               '{"id": "seats", "content": 40}]}')
    first = j("write", "-m", "remember 2 nodes", "--author", "agent", "--time", "1", cwd=store, input=payload)
    assert first["changes"] == {"plan": "added", "seats": "added"}
    assert first["commit"]["message"] == "remember 2 nodes" and first["commit"]["author"] == "agent"
    second = j("write", "-m", "forget seats", cwd=store, input='{"delete": ["seats"]}')
    assert second["changes"] == {"seats": "removed"} and second["commit"]["parents"] == [first["commit"]["id"]]
    assert j("status", cwd=store)["staged"][0]["id"] == "staged-only"
    assert j("show", "main", cwd=store)["plan"]["provenance"]["observation"] == "bill"
    skipped = j("write", "-m", "noop", "--skip-missing", cwd=store, input='{"delete": ["ghost"]}')
    assert skipped == {"commit": None, "changes": {}}
    empty = j("write", "-m", "remember 0 nodes", cwd=store, input="{}")
    assert empty["changes"] == {} and empty["commit"]["parents"] == [second["commit"]["id"]]
    assert len(j("log", cwd=store)) == 3


def test_export_import_round_trip_is_byte_identical(store, tmp_path):
    j("add", "a", "--content-json", '{"z": 1, "é": [1.5, null]}', "--source", "s", cwd=store)
    j("commit", "-m", "one", "--time", "5", cwd=store)
    j("add", "orphan", "never committed", cwd=store)
    j("branch", "side", cwd=store)
    exported = run_mnem("export", cwd=store).out
    (tmp_path / "dump.json").write_text(exported)
    imported = j("import", str(tmp_path / "dump.json"), str(tmp_path / "copy"), cwd=tmp_path)
    assert imported["objects"] == 4
    assert run_mnem("export", cwd=tmp_path / "copy").out == exported
    assert j("show", "side", "--stat", cwd=tmp_path / "copy") == {"a": "added"}


def test_export_matches_upstreams_format(store):
    j("add", "greeting", "hello", cwd=store)
    j("commit", "-m", "first commit", "--author", "agent", "--time", "1757000000000", cwd=store)
    assert run_mnem("export", cwd=store).out == EXPECTED_EXPORT


EXPECTED_EXPORT = """{
  "format_version": 1,
  "hash_algo": "blake3",
  "default_branch": "main",
  "head": "ref: main",
  "refs": {
    "main": "925570c5e44700e4e36d74cffeaa010cbf3caeecb364a383f955ff835d088814"
  },
  "objects": {
    "5107a6e4f686efec31950bf3171e7b4affd3c83697e8ab5182dc4a5f867cce10": {
      "kind": "memory_node",
      "id": "greeting",
      "content": "hello",
      "content_kind": "note"
    },
    "925570c5e44700e4e36d74cffeaa010cbf3caeecb364a383f955ff835d088814": {
      "kind": "commit",
      "parents": [],
      "state": "d1cdd28f6540e9e7a344554add2bd056bbf3717e7680833582fc463435446991",
      "message": "first commit",
      "author": "agent",
      "time": 1757000000000
    },
    "d1cdd28f6540e9e7a344554add2bd056bbf3717e7680833582fc463435446991": {
      "kind": "state",
      "nodes": {
        "greeting": "5107a6e4f686efec31950bf3171e7b4affd3c83697e8ab5182dc4a5f867cce10"
      }
    }
  }
}
"""


def test_store_option_and_environment_select_the_store(store, tmp_path):
    where = pg_stores.address(store)
    j("-C", where, "add", "a", "1", cwd=tmp_path)
    assert j("status", "-C", where, cwd=tmp_path)["staged"][0]["id"] == "a"
    env_result = run_mnem("--json", "status", cwd=tmp_path, env={"MNEM_STORE": where})
    assert env_result.json["staged"][0]["id"] == "a"
    (store / "deep" / "er").mkdir(parents=True)
    assert j("status", cwd=store / "deep" / "er")["staged"][0]["id"] == "a"


def test_ids_that_look_like_options_pass_after_double_dash(store):
    j("add", "--", "-weird id", "-content", cwd=store)
    assert j("show", cwd=store)["-weird id"]["content"] == "-content"


def test_completions_need_no_store(tmp_path):
    for shell in ("bash", "zsh", "fish", "powershell", "elvish"):
        doc = j("completions", shell, cwd=tmp_path)
        assert doc["shell"] == shell and "mnem" in doc["script"] and "commit" in doc["script"]


def test_values_that_are_exactly_double_dash_survive(store):
    """Python 3.11's argparse drops every "--"; ours drops only the separator."""
    j("add", "--source=--", "--", "--", "--", cwd=store)
    j("add", "--", "x", "--", cwd=store)
    commit = j("commit", "--message=--", "--author=--", cwd=store)
    assert (commit["message"], commit["author"]) == ("--", "--")
    node = j("show", "--node=--", cwd=store)
    assert (node["content"], node["provenance"]["source"]) == ("--", "--")
    assert j("show", "--node", "x", cwd=store)["content"] == "--"
