"""Time travel by the clock through the real binary, on both backends: ``BRANCH@{TIME}``, ``log --since/--until``,
and valid time (``show`` / ``stamps --valid-at``).

Every commit is dated by hand (``write --time``), so each answer below follows from the dates written here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import new_store, run_mnem
from mnem_history import export, ok


def ms(text: str) -> int:
    """An ISO date or time (UTC when it names no offset) in Unix ms, as the tests write times."""
    parsed = datetime.fromisoformat(text)
    return int((parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp() * 1000)


def put(store: Path, message: str, when: str, *items: dict[str, Any], delete: tuple[str, ...] = (),
        branch: str | None = None) -> str:
    """One commit dated ``when`` that puts ``items`` (with any ``event_time``) and deletes ``delete``; its id."""
    args = ["--json", "write", "-m", message, "--time", str(ms(when)), *(["--branch", branch] if branch else [])]
    payload = orjson.dumps({"put": list(items), "delete": list(delete)})
    return str(ok(*args, cwd=store, input=payload).json["commit"]["id"])


def resolve(store: Path, rev: str) -> str:
    return str(ok("--json", "resolve", rev, cwd=store).json["commit"])


def refused(store: Path, *args: str) -> tuple[int, str, str]:
    """A command that must fail with --json: its exit status, error code and message."""
    result = run_mnem("--json", *args, cwd=store)
    assert result.code != 0 and result.err == "", (args, result.out, result.err)
    error = result.json["error"]
    return result.code, error["code"], error["message"]


@pytest.fixture
def plan_store(backend: str, tmp_path: Path) -> dict[str, Any]:
    """The customer of docs/time.md, with a side branch merged back and a removal.

    main: Jan 10 the plan is Enterprise; May 20 the agent learns it became Pro in March (event time March 1);
    June 30 a merge brings in `side`'s seats (recorded there on April 2); Aug 1 the plan is removed.
    """
    store = new_store(tmp_path / "store", backend)
    jan = put(store, "open the case", "2026-01-10", {"id": "plan", "content": "enterprise"})
    ok("branch", "side", cwd=store)
    side = put(store, "count seats", "2026-04-02", {"id": "seats", "content": 40}, branch="side")
    may = put(store, "reconcile the plan", "2026-05-20",
              {"id": "plan", "content": "pro", "event_time": ms("2026-03-01")})
    merged = ok("--json", "merge", "side", "-m", "merge side", "--time", str(ms("2026-06-30")), cwd=store).json
    removed = put(store, "close the account", "2026-08-01", delete=("plan",))
    return {"store": store, "jan": jan, "side": side, "may": may, "merge": merged["commit"], "removed": removed}


def test_branch_at_a_time_is_the_lines_newest_commit_by_then(plan_store: dict[str, Any]) -> None:
    store = plan_store["store"]
    assert resolve(store, "main@{2026-04-15}") == plan_store["jan"]  # side's April commit is not on main's line
    assert resolve(store, "main@{2026-05-20}") == plan_store["may"]  # a whole day's date is its first instant...
    assert resolve(store, "main@{2026-05-19}") == plan_store["jan"]
    assert resolve(store, f"main@{{{ms('2026-05-20')}}}") == plan_store["may"]  # ...and Unix ms are inclusive
    assert resolve(store, "main@{2026-05-20T01:00:00+02:00}") == plan_store["jan"]  # 23:00 UTC the day before
    assert resolve(store, "main@{2026-05-20T00:00}") == plan_store["may"]  # no offset: UTC
    assert resolve(store, "@{2026-07-01}") == plan_store["merge"]  # @{T} alone: HEAD's line
    assert resolve(store, "HEAD@{2026-07-01}") == plan_store["merge"]
    assert resolve(store, "main@{2026-07-01}~1") == plan_store["may"]  # ancestry applies after the time
    assert resolve(store, "side@{2026-12-31}") == plan_store["side"]
    assert resolve(store, f"{plan_store['merge'][:12]}@{{2026-06-01}}") == plan_store["may"]
    # every command that takes a commit-ish takes the form: reads, log, diff
    node = ok("--json", "show", "main@{2026-04-15}", "--node", "plan", cwd=store).json
    assert node["content"] == "enterprise"
    assert ok("--json", "show", "main@{2026-06-01}", cwd=store).json["plan"]["content"] == "pro"
    assert [c["message"] for c in ok("--json", "log", "main@{2026-06-01}", cwd=store).json] == [
        "reconcile the plan", "open the case"]
    changes = ok("--json", "diff", "main@{2026-02-01}", "main@{2026-06-01}", cwd=store).json
    assert [(c["id"], c["kind"]) for c in changes] == [("plan", "modified")]


def test_a_time_before_the_first_commit_names_the_fix_and_changes_nothing(plan_store: dict[str, Any]) -> None:
    store = plan_store["store"]
    before = export(store)
    code, kind, message = refused(store, "show", "main@{2025-12-31}")
    assert (code, kind) == (1, "invalid_ref")
    assert f"its first commit, {plan_store['jan'][:12]}, is from 2026-01-10T00:00:00.000Z" in message
    assert "give a time at or after it" in message
    # git's @{N} is a reflog entry; here it is a time, and the message says how to go N commits back
    assert "BRANCH~N" in refused(store, "show", "main@{1}")[2]
    for bad in ("main@{yesterday}", "main@{2026-13-01}", "main@{}", "nope@{2026-06-01}"):
        assert refused(store, "show", bad)[1] == "invalid_ref", bad
    assert "not a time" in refused(store, "resolve", "main@{last tuesday}")[2]
    # a write given a bad time is refused before anything is written
    assert refused(store, "branch", "old", "main@{2025-01-01}")[1] == "invalid_ref"
    assert refused(store, "checkout", "main@{soon}")[1] == "invalid_ref"
    assert export(store) == before


def test_log_since_and_until_keep_the_commits_dated_in_the_range(plan_store: dict[str, Any]) -> None:
    store = plan_store["store"]

    def subjects(*args: str) -> list[str]:
        return [commit["message"] for commit in ok("--json", "log", *args, cwd=store).json]

    everything = subjects()
    assert subjects("--since", "2026-04-02") == ["close the account", "merge side", "reconcile the plan",
                                                 "count seats"]
    assert subjects("--since", "2026-04-02", "--first-parent") == ["close the account", "merge side",
                                                                   "reconcile the plan"]
    assert subjects("--until", "2026-05-20") == ["reconcile the plan", "count seats", "open the case"]
    assert subjects("--since", "2026-04-01", "--until", str(ms("2026-06-30"))) == [
        "merge side", "reconcile the plan", "count seats"]
    assert subjects("--since", "2026-04-01", "-n", "2") == ["close the account", "merge side"]
    assert subjects("side", "--until", "2026-03-01") == ["open the case"]
    assert subjects("--since", "2027-01-01") == [] and subjects("--until", "2025-01-01") == []
    assert subjects("--since", "2025-01-01") == everything
    assert subjects("--since", "2026-06-01", "--touching", "plan") == ["close the account"]  # filters narrow it
    assert ok("log", "--since", "2027-01-01", cwd=store).out == ""  # nothing listed: nothing printed
    code, kind, message = refused(store, "log", "--since", "last week")
    assert (code, kind) == (2, "usage") and "not a time" in message


def test_valid_at_answers_by_event_time_and_as_known_by_commit_time(plan_store: dict[str, Any]) -> None:
    """docs/time.md's example: the plan changed in March and the agent learnt it in May."""
    store = plan_store["store"]

    def plans(*args: str) -> Any:
        node = ok("--json", "show", *args, "--node", "plan", cwd=store).json
        return None if node is None else node["content"]

    assert plans("main@{2026-04-15}") == "enterprise"  # as known in April
    assert plans("--valid-at", "2026-04-15") == "pro"  # valid in April, by today's knowledge
    assert plans("main@{2026-04-15}", "--valid-at", "2026-04-15") == "enterprise"  # valid in April, as known then
    assert plans("--valid-at", "2026-02-15") == "enterprise"
    assert plans("--valid-at", "2026-08-02") is None  # the removal (dated by its commit) ended it
    assert plans("--valid-at", "2025-12-31") is None  # nothing was true before the first fact
    memory = ok("--json", "show", "--valid-at", "2026-04-15", cwd=store).json
    assert {key: node["content"] for key, node in memory.items()} == {"plan": "pro", "seats": 40}
    assert list(ok("--json", "show", "--valid-at", "2026-09-01", cwd=store).json) == ["seats"]
    # the seats came with the merge; without an event time they count from when blame says they were
    # written, side's April 2 commit, not from the merge that carried them over
    assert "seats" not in ok("--json", "show", "--valid-at", "2026-04-01", cwd=store).json
    text = ok("show", "--valid-at", "2026-04-15", cwd=store).out
    assert text.startswith("plan\n") and '"pro"' in text
    # stamps: the same nodes, their times in valid time (the run since the node last did not exist)
    stamped = ok("--json", "stamps", "--valid-at", "2026-04-15", cwd=store).json
    assert stamped["plan"]["created"] == ms("2026-01-10") and stamped["plan"]["updated"] == ms("2026-03-01")
    assert ok("--json", "stamps", "--valid-at", "2026-04-15", "--node", "plan", cwd=store).json == {
        "plan": stamped["plan"]}  # one node by the index's probes answers as the whole walk does
    assert list(ok("--json", "stamps", "--valid-at", "2026-07-01", "--prefix", "se", cwd=store).json) == ["seats"]


def test_a_value_re_added_after_a_removal_starts_a_new_run(backend: str, tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", backend)
    put(store, "a", "2026-01-01", {"id": "k", "content": 1})
    put(store, "gone", "2026-02-01", delete=("k",))
    put(store, "back", "2026-03-01", {"id": "k", "content": 2})
    put(store, "backdated", "2026-04-01", {"id": "k", "content": 3, "event_time": ms("2026-03-15")})
    stamped = ok("--json", "stamps", "--valid-at", "2026-05-01", cwd=store).json["k"]
    assert stamped["node"]["content"] == 3
    assert (stamped["created"], stamped["updated"]) == (ms("2026-03-01"), ms("2026-03-15"))
    assert ok("--json", "show", "--valid-at", "2026-02-15", cwd=store).json == {}
    # a tie goes to the version recorded later, the newer knowledge
    put(store, "same instant", "2026-06-01", {"id": "k", "content": 4, "event_time": ms("2026-03-15")})
    assert ok("--json", "show", "--valid-at", "2026-03-15", "--node", "k", cwd=store).json["content"] == 4


def test_valid_at_refuses_what_it_cannot_answer(backend: str, tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", backend)
    assert ok("--json", "show", "--valid-at", "2026-01-01", cwd=store).json == {}  # an unborn branch holds nothing
    put(store, "a", "2026-01-01", {"id": "k", "content": 1})
    assert refused(store, "show", "--valid-at", "soon")[:2] == (2, "usage")
    assert refused(store, "show", "--valid-at", "2026-01-01", "--limit", "5")[:2] == (2, "usage")
    assert refused(store, "stamps", "--valid-at", "2026-01-01", "--live")[:2] == (2, "usage")
    features = run_mnem("--version", "--json").json["features"]
    assert {"rev-time", "log-time", "valid-at"} <= set(features)


def test_add_takes_an_event_time_in_iso_8601(backend: str, tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", backend)
    staged = ok("--json", "add", "plan", "pro", "--event-time", "2026-03-01T01:00:00+01:00", cwd=store).json
    assert staged["node"]["event_time"] == ms("2026-03-01")
    assert ok("--json", "add", "seats", "40", "--event-time", "-5", cwd=store).json["node"]["event_time"] == -5
    code, kind, message = refused(store, "add", "tier", "gold", "--event-time", "March")
    assert (code, kind) == (2, "usage") and "not a time" in message
    assert [entry["id"] for entry in ok("--json", "status", cwd=store).json["staged"]] == ["plan", "seats"]
