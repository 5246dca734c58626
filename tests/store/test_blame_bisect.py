"""``blame``, ``bisect`` and ``show --stat`` through the real binary.

The centrepiece is upstream's buggy run: ten commits by a support agent, one
of which (commit 6) downgrades the plan from billing data; bisect must land
on it and blame must explain it with its provenance.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BACKENDS, new_store, run_mnem
from mnem_history import ok, write

from mnem_store.bisect import INCLUDE_ROOT

NO_PROVENANCE = {"agent_step": None, "observation": None, "tool_call": None, "source": None, "note": None}

#: (time, {node: content}, extra ``add`` flags, message) for each commit of the buggy run.
BUGGY_RUN = [
    (2000, {"account": "acme-corp", "plan": "enterprise"}, (), "open the account"),
    (3000, {"primary-contact": "alice@acme"}, (), "learn the primary contact"),
    (4000, {"open-tickets": "2"}, (), "count the open tickets"),
    (5000, {"seat-count": "240"}, (), "record the seat count"),
    (6000, {"renewal": "2027-01"}, (), "note the renewal date"),
    (7000, {"plan": "pro"}, ("--step", "step-31", "--observation", "billing-note-8842",
                             "--event-time", "1700000000000"), "update the plan tier from billing"),
    (8000, {"discount-band": "pro-tier"}, (), "apply the pro-tier discount band"),
    (9000, {"open-tickets": "3"}, (), "a new ticket comes in"),
    (10000, {"primary-contact": "alice@acme, bob@acme"}, (), "add a second contact"),
    (11000, {"escalation": "billing mismatch flagged"}, (), "escalate the billing mismatch"),
]


@pytest.fixture(scope="module", params=BACKENDS)
def buggy_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Upstream's scenario, built with ``add`` and ``commit --time --author`` on each backend; commit ids oldest
    first."""
    store = new_store(tmp_path_factory.mktemp("buggy") / "store", request.param)
    commits = []
    for time, nodes, flags, message in BUGGY_RUN:
        for node_id, content in nodes.items():
            ok("add", node_id, content, *flags, cwd=store)
        done = ok("--json", "commit", "-m", message, "--author", "support-agent", "--time", str(time), cwd=store)
        commits.append(done.json["id"])
    return store, commits


# ------------------------------------------------------------------ buggy run


def test_bisect_lands_on_the_plan_downgrade(buggy_run):
    store, commits = buggy_run
    bad = commits[5]
    result = ok("bisect", "--node", "plan", "--equals", '"pro"', cwd=store)
    assert result.out == (f"{bad[:12]}  update the plan tier from billing\n"
                          "  plan set here, from step step-31, observation billing-note-8842\n")
    doc = ok("--json", "bisect", "--node", "plan", "--equals", '"pro"', cwd=store).json
    assert doc == {"commit": bad, "blame": {"commit": bad, "time": 1700000000000, "node": {
        "id": "plan", "content": "pro", "content_kind": "note", "event_time": 1700000000000,
        "provenance": NO_PROVENANCE | {"agent_step": "step-31", "observation": "billing-note-8842"}}}}


def test_blame_explains_the_plan_with_its_provenance_and_event_time(buggy_run):
    store, commits = buggy_run
    bad = commits[5]
    assert ok("blame", "plan", cwd=store).out == (
        f"{bad[:12]}  2023-11-14 22:13:20Z\n"
        "  commit:  update the plan tier from billing\n"
        '  content: "pro"\n'
        "  step: step-31\n"
        "  observation: billing-note-8842\n"
    )
    doc = ok("--json", "blame", "plan", cwd=store).json
    assert (doc["commit"], doc["time"], doc["node"]["content"]) == (bad, 1700000000000, "pro")
    assert doc["node"]["provenance"]["agent_step"] == "step-31"
    assert list(doc) == ["commit", "node", "time", "author"]  # the SDK's Blame, then who wrote the commit
    assert doc["author"] == "support-agent"


def test_show_stat_marks_the_plan_modified(buggy_run):
    store, commits = buggy_run
    assert ok("show", commits[5], "--stat", cwd=store).out == "~ plan\n"
    assert ok("--json", "show", commits[5][:10], "--stat", cwd=store).json == {"plan": "modified"}
    assert ok("show", commits[0], "--stat", cwd=store).out == "+ account\n+ plan\n"


def test_bisect_present_agrees_with_blame(buggy_run):
    store, commits = buggy_run
    found = ok("--json", "bisect", "--node", "discount-band", "--present", cwd=store).json
    blamed = ok("--json", "blame", "discount-band", cwd=store).json
    assert found["commit"] == blamed["commit"] == commits[6]
    assert ok("bisect", "--node", "discount-band", "--present", cwd=store).out == (
        f"{commits[6][:12]}  apply the pro-tier discount band\n  discount-band set here, no provenance recorded\n")


def test_blame_without_provenance_uses_the_commit_time(buggy_run):
    store, commits = buggy_run
    assert ok("blame", "account", cwd=store).out == (
        f"{commits[0][:12]}  1970-01-01 00:00:02Z\n"
        "  commit:  open the account\n"
        '  content: "acme-corp"\n'
        "  (no provenance recorded)\n"
    )
    # as of an older revision, the plan was still the root's
    assert ok("--json", "blame", "plan", commits[4], cwd=store).json["commit"] == commits[0]
    assert ok("--json", "blame", "open-tickets", commits[8][:6], cwd=store).json["commit"] == commits[7]


def test_bisect_with_explicit_ends(buggy_run):
    store, commits = buggy_run
    doc = ok("--json", "bisect", "--node", "open-tickets", "--equals", '"3"', "--good", commits[2], commits[8],
             cwd=store).json
    assert doc["commit"] == commits[7]
    assert ok("--json", "bisect", "--node", "escalation", "--present", "--good", commits[8], cwd=store).json[
        "commit"] == commits[9]


def test_blame_and_show_stat_after_export_and_import(buggy_run, tmp_path):
    """Import replays every commit into change rows, which blame and ``--stat`` read back."""
    store, commits = buggy_run
    copy = tmp_path / "copy"
    ok("import", "-", str(copy), cwd=tmp_path, input=ok("export", cwd=store).out)
    assert ok("show", commits[5], "--stat", cwd=copy).out == "~ plan\n"
    assert ok("--json", "blame", "plan", cwd=copy).json["commit"] == commits[5]
    assert ok("--json", "blame", "account", cwd=copy).json["commit"] == commits[0]


# ------------------------------------------------------------- blame & merges


def test_blame_follows_a_value_to_the_side_branch_that_wrote_it(store):
    write(store, "root", 1000, {"a": "root"})
    ok("branch", "side", cwd=store)
    write(store, "main work", 2000, {"m": "main"})
    ok("checkout", "side", cwd=store)
    side = write(store, "side sets v", 3000, {"v": "from side"})
    write(store, "side more", 4000, {"w": "w"})
    ok("checkout", "main", cwd=store)
    merged = ok("--json", "merge", "side", "--time", "5000", cwd=store).json["commit"]
    write(store, "after the merge", 6000, {"z": "z"})
    assert ok("--json", "blame", "v", cwd=store).json["commit"] == side
    assert ok("--json", "blame", "v", merged, cwd=store).json["commit"] == side
    assert ok("--json", "blame", "m", cwd=store).json["time"] == 2000
    # bisect stays on the first-parent chain: the merge is where v arrived on main
    found = ok("--json", "bisect", "--node", "v", "--present", cwd=store).json
    assert found["commit"] == merged and found["blame"]["commit"] == side


def test_blame_of_an_identically_restated_value_is_the_older_commit(store):
    older = write(store, "first", 1000, {"v": "same", "x": 1})
    write(store, "restate", 2000, {"v": "same", "x": 2})
    assert ok("--json", "blame", "v", cwd=store).json["commit"] == older
    ok("branch", "side", cwd=store)
    ok("checkout", "side", cwd=store)
    write(store, "side restates too", 3000, {"v": "same", "y": 1})
    ok("checkout", "main", cwd=store)
    write(store, "main moves on", 4000, {"z": 1})
    ok("merge", "side", "--time", "5000", cwd=store)
    assert ok("--json", "blame", "v", cwd=store).json["commit"] == older


def test_blame_through_a_merge_that_took_theirs(store):
    write(store, "root", 1000, {"v": "old"})
    ok("branch", "side", cwd=store)
    write(store, "main", 2000, {"v": "ours"})
    ok("checkout", "side", cwd=store)
    theirs = write(store, "side", 3000, {"v": "theirs"})
    ok("checkout", "main", cwd=store)
    merged = ok("--json", "merge", "side", "--resolve", "v=theirs", "--time", "4000", cwd=store).json["commit"]
    assert ok("--json", "blame", "v", cwd=store).json["commit"] == theirs
    assert ok("--json", "blame", "v", merged, cwd=store).json["commit"] == theirs


def test_blame_of_a_node_set_by_resolve_json_is_the_merge(store):
    write(store, "root", 1000, {"v": "old"})
    ok("branch", "side", cwd=store)
    write(store, "main", 2000, {"v": "ours"})
    ok("checkout", "side", cwd=store)
    write(store, "side", 3000, {"v": "theirs"})
    ok("checkout", "main", cwd=store)
    merged = ok("--json", "merge", "side", "--resolve-json", "v=\"both\"", "--time", "4000", cwd=store).json["commit"]
    assert ok("blame", "v", cwd=store).out == (
        f"{merged[:12]}  1970-01-01 00:00:04Z\n  commit:  merge side into main\n"
        '  content: "both"\n  (no provenance recorded)\n')


# ------------------------------------------------------------- type-aware equals


def test_equals_is_type_aware(store):
    write(store, "float", 1000, {"n": 1.0, "b": 1})
    as_int = write(store, "int", 2000, {"n": 1, "b": True})
    assert ok("--json", "bisect", "--node", "n", "--equals", "1", cwd=store).json["commit"] == as_int
    assert ok("--json", "bisect", "--node", "b", "--equals", "true", cwd=store).json["commit"] == as_int
    already = run_mnem("bisect", "--node", "n", "--equals", "1.0", cwd=store)
    assert already.err.startswith("Error: invalid ref: bisect: the predicate is already true at good")


def test_bisect_absent_explains_absence(store):
    write(store, "add", 1000, {"gone": "x", "other": 1})
    write(store, "keep", 2000, {"other": 2})
    removed = write(store, "remove", 3000, delete=["gone"])
    write(store, "after", 4000, {"other": 3})
    assert ok("bisect", "--node", "gone", "--absent", cwd=store).out == (
        f"{removed[:12]}  remove\n  gone is absent here\n")
    assert ok("--json", "bisect", "--node", "gone", "--absent", cwd=store).json == {"commit": removed, "blame": None}


def test_bisect_line_two_lists_only_step_observation_and_source(store):
    write(store, "root", 1000, {"other": 1})
    ok("add", "v", "val", "--source", "ticket-9", "--tool-call", "search", "--note", "n", cwd=store)
    done = ok("--json", "commit", "-m", "set v", "--time", "2000", cwd=store).json["id"]
    assert ok("bisect", "--node", "v", "--present", cwd=store).out == (
        f"{done[:12]}  set v\n  v set here, from source ticket-9\n")
    assert ok("blame", "v", cwd=store).out == (
        f"{done[:12]}  1970-01-01 00:00:02Z\n  commit:  set v\n  content: \"val\"\n"
        "  tool_call: search\n  source: ticket-9\n  note: n\n")


# ----------------------------------------------------------------------- errors


def test_blame_errors(store):
    assert run_mnem("blame", "x", cwd=store).err == "Error: invalid ref: cannot blame: HEAD has no commit\n"
    head = write(store, "root", 1000, {"a": 1})
    result = run_mnem("blame", 'no"pe', cwd=store)
    assert (result.code, result.err) == (1, f'Error: invalid ref: blame: "no\\"pe" is not in memory at {head}\n')
    doc = run_mnem("--json", "blame", "nope", cwd=store)
    assert doc.json["error"]["code"] == "invalid_ref"


def test_bisect_errors(store):
    assert run_mnem("bisect", "--node", "a", "--present", cwd=store).err == (
        "Error: invalid ref: cannot bisect: HEAD has no commit\n")
    root = write(store, "root", 1000, {"a": 1})
    same = run_mnem("bisect", "--node", "a", "--present", cwd=store)  # the root holds: the fix is named
    assert same.err == f"Error: invalid ref: bisect: good and bad are the same commit{INCLUDE_ROOT}\n"
    same_false = run_mnem("bisect", "--node", "zzz", "--present", cwd=store)  # it does not: upstream's text alone
    assert same_false.err == "Error: invalid ref: bisect: good and bad are the same commit\n"
    ok("checkout", "-b", "side", cwd=store)
    side = write(store, "side", 2000, {"s": 1})
    ok("checkout", "main", cwd=store)
    head = write(store, "main", 3000, {"b": 1})
    off_chain = run_mnem("bisect", "--node", "b", "--present", "--good", "side", cwd=store)
    assert off_chain.err == f"Error: invalid ref: bisect: {side} is not on {head}'s first-parent history\n"
    true_at_good = run_mnem("bisect", "--node", "a", "--present", cwd=store)
    assert true_at_good.err == (
        f"Error: invalid ref: bisect: the predicate is already true at good ({root}){INCLUDE_ROOT}\n")
    given_good = run_mnem("bisect", "--node", "a", "--present", "--good", root, cwd=store)  # no opt-in with --good
    assert given_good.err == f"Error: invalid ref: bisect: the predicate is already true at good ({root})\n"
    false_at_bad = run_mnem("bisect", "--node", "zzz", "--present", cwd=store)
    assert false_at_bad.err == f"Error: invalid ref: bisect: the predicate is false at bad ({head})\n"
    none = run_mnem("bisect", "--node", "a", cwd=store)
    assert (none.code, none.err) == (1, "Error: bisect needs one of --equals <json>, --absent or --present\n")
    bad_json = run_mnem("bisect", "--node", "a", "--equals", "{nope", cwd=store)
    assert bad_json.code == 1
    assert bad_json.err.startswith('Error: --equals "{nope" is not valid JSON\n\nCaused by:\n    ')


@pytest.mark.parametrize("argv", [
    ("--equals", "1", "--absent"), ("--equals", "1", "--present"), ("--absent", "--present"),
])
def test_bisect_flag_conflicts_are_usage_errors(store, argv):
    result = run_mnem("bisect", "--node", "a", *argv, cwd=store)
    assert result.code == 2 and "cannot be used with" in result.err
    assert run_mnem("--json", "bisect", "--node", "a", *argv, cwd=store).json["error"]["code"] == "usage"
