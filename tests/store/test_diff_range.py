"""``mnem diff A..B`` and ``A...B`` through the real binary, on both backends: a branch reviewed before merging.

Three dots are what merging B into A would propose: B's changes since the merge base, each with the commit on
B that gave the fact its value (author, message, time), so a reviewer sees which beliefs change and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pg_stores
from conftest import new_store, run_mnem, store_fingerprint
from mnem_history import ok, write

from mnem_store.cli.render import fmt_time


def commit_of(store: Path, rev: str) -> dict[str, Any]:
    """The commit ``rev`` names, as ``log`` prints it."""
    found: dict[str, Any] = ok("--json", "log", "-n", "1", rev, cwd=store).json[0]
    return found


def by(commit: dict[str, Any]) -> dict[str, Any]:
    """The ``by`` key a change made by ``commit`` carries."""
    return {"commit": commit["id"], "author": commit["author"], "message": commit["message"], "time": commit["time"]}


def diverged(store: Path) -> dict[str, str]:
    """main and hyp parted after ``start``: hyp changes plan twice, removes seats, adds note; main adds other."""
    ids = {"start": write(store, "start", 1000, {"plan": "pro", "seats": 3, "keep": "k"}, author="ann")}
    ok("checkout", "-b", "hyp", cwd=store)
    ids["upgrade"] = write(store, "upgrade: ticket-4821 says enterprise", 2000, {"plan": "enterprise"},
                           author="agent-a")
    ids["tidy"] = write(store, "tidy", 3000, {"note": "n"}, delete=["seats"], author="agent-b")
    ids["final"] = write(store, "plan: enterprise-plus\n\nper the renewal", 4000, {"plan": "enterprise-plus"},
                         author="agent-c")
    ok("checkout", "main", cwd=store)
    ids["main"] = write(store, "main side", 2500, {"other": 1, "keep": "k2"}, author="ann")
    return ids


def test_the_binary_lists_the_feature() -> None:
    assert "diff-range" in run_mnem("--version", "--json").json["features"]


def test_three_dots_show_only_the_branch_side_with_the_commit_that_made_each_change(store: Path) -> None:
    ids = diverged(store)
    proposed = ok("--json", "diff", "main...hyp", cwd=store).json
    assert [(c["id"], c["kind"]) for c in proposed] == [("note", "added"), ("plan", "modified"), ("seats", "removed")]
    made = {c["id"]: c["by"] for c in proposed}
    assert made == {"note": by(commit_of(store, ids["tidy"])), "plan": by(commit_of(store, ids["final"])),
                    "seats": by(commit_of(store, ids["tidy"]))}
    assert [list(c) for c in proposed] == [["id", "kind", "old", "new", "by"]] * 3
    # Without ``by``, exactly the two-state diff from the merge base: A's own changes (other, keep) are left out.
    plain = ok("--json", "diff", ids["start"], "hyp", cwd=store).json
    assert [{k: v for k, v in c.items() if k != "by"} for c in proposed] == plain
    assert plain[1]["old"]["content"] == "pro"
    # The other way round: what merging main into hyp would bring.
    back = ok("--json", "diff", "hyp...main", cwd=store).json
    assert [(c["id"], c["kind"], c["by"]["author"]) for c in back] == [("keep", "modified", "ann"),
                                                                     ("other", "added", "ann")]


def test_the_text_names_the_base_and_a_by_line_per_change(store: Path) -> None:
    ids = diverged(store)
    final, tidy = commit_of(store, ids["final"]), commit_of(store, ids["tidy"])
    shown = ok("diff", "main...hyp", cwd=store).out
    assert shown.splitlines() == [
        f"Changes on hyp since the merge base {ids['start'][:12]}:",
        "+ note",
        '  + "n"',
        f"  by agent-b in {ids['tidy'][:12]} ({fmt_time(tidy['time'])}): tidy",
        "~ plan",
        '  - "pro"',
        '  + "enterprise-plus"',
        f"  by agent-c in {ids['final'][:12]} ({fmt_time(final['time'])}): plan: enterprise-plus",
        "- seats",
        "  - 3",
        f"  by agent-b in {ids['tidy'][:12]} ({fmt_time(tidy['time'])}): tidy",
    ]
    stat = ok("diff", "--stat", "main...hyp", cwd=store).out.splitlines()
    assert stat == [line for line in shown.splitlines() if not line.startswith(("  +", "  -"))]
    assert ok("diff", "--name-only", "main...hyp", cwd=store).out == "note\nplan\nseats\n"
    assert ok("diff", "hyp...hyp", cwd=store).out == "no changes\n"
    assert ok("--json", "diff", "hyp...hyp", cwd=store).json == []


def test_two_dots_are_the_two_revision_form_and_an_empty_side_is_head(store: Path) -> None:
    diverged(store)
    for flags in ((), ("--stat",), ("--name-only",), ("--json",)):
        two = run_mnem(*flags, "diff", "main", "hyp", cwd=store)
        assert run_mnem(*flags, "diff", "main..hyp", cwd=store) == two
        assert run_mnem(*flags, "diff", "hyp..", cwd=store) == run_mnem(*flags, "diff", "hyp", "HEAD", cwd=store)
    assert ok("diff", "..hyp", cwd=store).out == ok("diff", "HEAD", "hyp", cwd=store).out
    assert ok("diff", "...hyp", cwd=store).out == ok("diff", "main...hyp", cwd=store).out  # HEAD is main


def test_a_value_a_merge_carried_in_names_the_commit_that_wrote_it(store: Path) -> None:
    ids = diverged(store)
    ok("checkout", "hyp", cwd=store)
    ok("checkout", "-b", "side", cwd=store)
    side = write(store, "side: evidence", 5000, {"evidence": "e", "plan": "starter"}, author="agent-s")
    ok("checkout", "hyp", cwd=store)
    write(store, "hyp again", 5500, {"plan": "pro-max"}, author="agent-c")
    merged = ok("--json", "merge", "side", "--resolve", "plan=theirs", "--author", "reviewer", "--time", "6000",
                cwd=store).json["commit"]
    write(store, "after the merge", 7000, {"late": 1}, author="agent-d")
    made = {c["id"]: c["by"]["commit"] for c in ok("--json", "diff", "main...hyp", cwd=store).json}
    # evidence and plan (resolved to the side's value) come from the side commit, not from the merge
    assert made == {"evidence": side, "late": made["late"], "note": ids["tidy"], "plan": side, "seats": ids["tidy"]}
    assert merged not in made.values()
    # a value only the merge wrote (a resolution to new content) names the merge
    ok("checkout", "-b", "side2", "side", cwd=store)
    write(store, "side2", 8000, {"late": 2}, author="agent-s")
    ok("checkout", "hyp", cwd=store)
    write(store, "hyp late", 8500, {"late": 3}, author="agent-d")
    again = ok("--json", "merge", "side2", "--resolve-json", "late=4", "--author", "reviewer", "--time", "9000",
               cwd=store).json["commit"]
    late = {c["id"]: c["by"] for c in ok("--json", "diff", "main...hyp", cwd=store).json}["late"]
    assert (late["commit"], late["author"]) == (again, "reviewer")


def test_a_branch_that_merged_main_shows_only_its_own_changes(store: Path) -> None:
    ids = diverged(store)
    ok("checkout", "hyp", cwd=store)
    ok("merge", "main", "--author", "agent-a", "--time", "4500", cwd=store)
    proposed = ok("--json", "diff", "main...hyp", cwd=store).json  # main is now an ancestor of hyp: the base
    assert {c["id"]: c["by"]["commit"] for c in proposed} == {"note": ids["tidy"], "plan": ids["final"],
                                                               "seats": ids["tidy"]}


def test_a_remote_tracking_branch_is_reviewed_after_a_fetch(backend: str, tmp_path: Path) -> None:
    shared = new_store(tmp_path / "shared", backend)
    write(shared, "start", 1000, {"plan": "pro"}, author="ann")
    ok("clone", pg_stores.address(shared), str(tmp_path / "laptop"), cwd=tmp_path)
    laptop = tmp_path / "laptop"
    ok("checkout", "-b", "agent/hypothesis", cwd=shared)
    proposal = write(shared, "hypothesis: enterprise", 2000, {"plan": "enterprise"}, author="agent-a")
    ok("fetch", cwd=laptop)
    proposed = ok("--json", "diff", "main...origin/agent/hypothesis", cwd=laptop).json
    assert [(c["id"], c["new"]["content"], c["by"]["commit"], c["by"]["author"]) for c in proposed] == [
        ("plan", "enterprise", proposal, "agent-a")]


def test_unrelated_histories_are_refused_naming_the_two_state_diff(store: Path, tmp_path: Path) -> None:
    write(store, "ours", 1000, {"a": 1})
    other = new_store(tmp_path / "other", "sqlite")
    write(other, "theirs", 1000, {"b": 1})
    ok("remote", "add", "other", str(other), cwd=store)
    ok("fetch", "other", cwd=store)
    before = store_fingerprint(store)
    refused = run_mnem("--json", "diff", "main...other/main", cwd=store)
    assert refused.code == 1
    error = refused.json["error"]
    assert error["code"] == "invalid_ref"
    assert "no common ancestor" in error["message"] and "`mnem diff main other/main`" in error["message"]
    assert store_fingerprint(store) == before
    assert ok("--json", "diff", "main", "other/main", cwd=store).json  # the fix it names works


def test_a_criss_cross_history_is_refused(store: Path) -> None:
    write(store, "base", 1000, {"x": 0})
    ok("branch", "b", cwd=store)
    a1 = write(store, "a1", 2000, {"a": 1})
    ok("checkout", "b", cwd=store)
    b1 = write(store, "b1", 2000, {"b": 1})
    ok("merge", a1, "--time", "3000", cwd=store)
    ok("checkout", "main", cwd=store)
    ok("merge", b1, "--time", "3000", cwd=store)
    refused = run_mnem("--json", "diff", "main...b", cwd=store)
    assert (refused.code, refused.json["error"]["code"]) == (1, "invalid_ref")
    assert "2 merge bases" in refused.json["error"]["message"]


def test_bad_revisions_are_invalid_ref_and_extra_arguments_usage_changing_nothing(store: Path) -> None:
    diverged(store)
    before = store_fingerprint(store)
    for spec in ("main...nope", "nope...hyp", "main..nope", "hyp~9...main"):
        refused = run_mnem("--json", "diff", spec, cwd=store)
        assert (refused.code, refused.json["error"]["code"]) == (1, "invalid_ref"), spec
    extra = run_mnem("--json", "diff", "main...hyp", "main", cwd=store)
    assert (extra.code, extra.json["error"]["code"]) == (2, "usage")
    assert store_fingerprint(store) == before
