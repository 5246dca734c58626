"""``mnem merge`` through the real binary: outcomes, exact text, JSON, and every error."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

import pg_stores
import pytest
from conftest import BACKENDS, MNEM, new_store, run_mnem
from mnem_history import clone, export, memory, ok, set_head, write

RETRY = "Error: resolve with `--resolve <id>=<side>` (or `--strategy ours|theirs`) and merge again\n"
RETRY_DRY = "Error: resolve with `--resolve <id>=<side>` (or `--strategy ours|theirs`) and merge for real\n"

#: The conflict report for the ``diverged`` history, in node-id order, one of each kind.
CONFLICT_BLOCKS = (
    "  aa (add/add)\n"
    "    base:   (deleted)\n"
    '    ours:   "ours-add"\n'
    '    theirs: "theirs-add"\n'
    "  de (delete/edit)\n"
    '    base:   "base"\n'
    "    ours:   (deleted)\n"
    '    theirs: "theirs"\n'
    "  ed (edit/delete)\n"
    '    base:   "base"\n'
    '    ours:   "ours"\n'
    "    theirs: (deleted)\n"
    "  ee (edit/edit)\n"
    '    base:   "base"\n'
    '    ours:   "ours"\n'
    '    theirs: "theirs"\n'
)
#: What merges cleanly whatever the resolutions: untouched, one-sided and convergent changes.
CLEAN = {"conv": "x", "keep": "same", "oo": "ours-edit", "tnew": "new", "to": "theirs-edit"}


@pytest.fixture(scope="module", params=BACKENDS)
def diverged_template(request: pytest.FixtureRequest,
                      tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """main and side diverge from one base with every kind of conflict plus clean changes (on each backend)."""
    store = new_store(tmp_path_factory.mktemp("diverged") / "store", request.param)
    base = write(store, "base", 1000, {k: "base" for k in ("ee", "de", "ed", "oo", "to", "gone")} | {"keep": "same"})
    ok("branch", "side", cwd=store)
    ours = write(store, "ours", 2000, {"ee": "ours", "ed": "ours", "oo": "ours-edit", "aa": "ours-add", "conv": "x"},
                 delete=["de"])
    ok("checkout", "side", cwd=store)
    theirs = write(store, "theirs", 3000, {"ee": "theirs", "de": "theirs", "to": "theirs-edit", "aa": "theirs-add",
                                           "conv": "x", "tnew": "new"}, delete=["ed", "gone"])
    ok("checkout", "main", cwd=store)
    return store, {"base": base, "ours": ours, "theirs": theirs}


@pytest.fixture
def diverged(diverged_template: tuple[Path, dict[str, str]], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    template, ids = diverged_template
    return clone(template, tmp_path), ids


def head_commit(store: Path) -> dict:
    return ok("--json", "log", "-n", "1", cwd=store).json[0]


# ----------------------------------------------------------------- conflicts


def test_conflicts_print_every_kind_in_node_order_and_write_nothing(diverged):
    store, _ = diverged
    before = export(store)
    result = run_mnem("merge", "side", cwd=store)
    assert (result.code, result.out, result.err) == (1, "Merge conflict in 4 node(s):\n" + CONFLICT_BLOCKS, RETRY)
    assert export(store) == before


def test_conflicts_in_json_are_a_result_with_full_nodes(diverged):
    store, _ = diverged
    before = export(store)
    result = run_mnem("--json", "merge", "side", cwd=store)
    assert result.code == 0 and result.err == ""
    doc = result.json
    assert doc["status"] == "conflicts" and doc["commit"] is None
    assert [(c["id"], c["kind"]) for c in doc["conflicts"]] == [
        ("aa", "add/add"), ("de", "delete/edit"), ("ed", "edit/delete"), ("ee", "edit/edit")]
    aa = doc["conflicts"][0]
    assert aa["base"] is None
    assert aa["ours"] == {"id": "aa", "content": "ours-add", "content_kind": "note", "provenance": {
        "agent_step": None, "observation": None, "tool_call": None, "source": None, "note": None}, "event_time": None}
    assert doc["conflicts"][1]["ours"] is None and doc["conflicts"][2]["theirs"] is None
    assert export(store) == before


def test_partly_resolved_merge_reports_only_the_rest_and_writes_nothing(diverged):
    store, _ = diverged
    before = export(store)
    result = run_mnem("--json", "merge", "side", "--resolve", "ee=ours", "--resolve", "aa=theirs", cwd=store)
    assert [c["id"] for c in result.json["conflicts"]] == ["de", "ed"]
    text = run_mnem("merge", "side", "--resolve", "ee=ours", "--resolve", "aa=theirs", "--resolve", "de=base",
                    cwd=store)
    assert text.code == 1
    assert text.out == "Merge conflict in 1 node(s):\n  ed (edit/delete)\n    base:   \"base\"\n" \
                       "    ours:   \"ours\"\n    theirs: (deleted)\n"
    assert export(store) == before


def test_conflict_report_colours_on_a_terminal(diverged):
    store, _ = diverged
    master, slave = pty.openpty()
    url = pg_stores.url_of(store)
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | ({"MNEM_STORE": url} if url else {})
    proc = subprocess.run([MNEM, "merge", "side"], cwd=store, stdout=slave, stderr=subprocess.PIPE, env=env, timeout=60)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    out = b"".join(chunks).decode().replace("\r\n", "\n")
    assert proc.returncode == 1
    lines = out.splitlines()
    assert lines[0] == "\x1b[38;5;173mMerge conflict in 4 node(s):\x1b[0m"
    assert lines[1] == "  \x1b[38;5;75maa\x1b[0m \x1b[38;5;245m(add/add)\x1b[0m"
    # the label is padded to 7 columns inside the colour, as upstream pads before painting
    assert lines[2] == "    \x1b[38;5;245mbase:  \x1b[0m (deleted)"
    assert lines[4] == '    \x1b[38;5;245mtheirs:\x1b[0m "theirs-add"'


# ---------------------------------------------------------------- resolutions


def test_strategy_ours_records_a_two_parent_merge_indexed_against_ours(diverged):
    store, ids = diverged
    result = ok("merge", "side", "--strategy", "ours", "--author", "bot", "--time", "5000", cwd=store)
    commit = head_commit(store)
    assert result.out == f"[{commit['id'][:12]}] merge side into main\n"
    assert commit["parents"] == [ids["ours"], ids["theirs"]]
    assert (commit["author"], commit["time"], commit["message"]) == ("bot", 5000, "merge side into main")
    assert memory(store, "main") == CLEAN | {"aa": "ours-add", "ed": "ours", "ee": "ours"}
    # the change index of a merge is against its first parent: only what theirs brought in
    assert ok("show", "main", "--stat", cwd=store).out == "- gone\n+ tnew\n~ to\n"
    assert ok("reindex", cwd=store).out == "Reindexed 4 commit(s)\n"
    assert ok("show", "main", "--stat", cwd=store).out == "- gone\n+ tnew\n~ to\n"


def test_strategy_theirs_takes_their_side_of_every_conflict(diverged):
    store, _ = diverged
    ok("merge", "side", "--strategy", "theirs", "--time", "5000", cwd=store)
    assert memory(store, "main") == CLEAN | {"aa": "theirs-add", "de": "theirs", "ee": "theirs"}
    assert ok("--json", "show", "main", "--stat", cwd=store).json == {
        "aa": "modified", "de": "added", "ed": "removed", "ee": "modified", "gone": "removed", "tnew": "added",
        "to": "modified"}


def test_explicit_resolutions_beat_the_strategy_and_later_duplicates_win(diverged):
    store, _ = diverged
    ok("merge", "side", "--strategy", "theirs", "--resolve", "aa=theirs", "--resolve", "aa=ours",
       "--resolve", "de=base", "--resolve", "ed=delete", "--resolve", "ee=ours", "--time", "5000", cwd=store)
    assert memory(store, "main") == CLEAN | {"aa": "ours-add", "de": "base", "ee": "ours"}


def test_a_resolution_splits_at_the_first_equals_sign(diverged):
    store, _ = diverged
    result = run_mnem("merge", "side", "--resolve", "ee=ours=x", cwd=store)
    assert result.err == ('Error: --resolve "ee=ours=x": unknown side "ours=x"; '
                          "use `ours`, `theirs`, `base` or `delete`\n")


def test_resolve_json_sets_a_new_note_without_provenance(diverged):
    store, _ = diverged
    ok("merge", "side", "--strategy", "ours", "--resolve", "ee=theirs", "--resolve-json", 'ee={"merged": [1, 2.5]}',
       "--resolve-json", "aa=null", cwd=store)
    node = ok("--json", "show", "main", "--node", "ee", cwd=store).json
    assert node == {"id": "ee", "content": {"merged": [1, 2.5]}, "content_kind": "note", "provenance": {
        "agent_step": None, "observation": None, "tool_call": None, "source": None, "note": None}, "event_time": None}
    assert memory(store, "main")["aa"] is None


def test_resolve_json_errors(diverged):
    store, _ = diverged
    missing = run_mnem("merge", "side", "--resolve-json", "ee", cwd=store)
    assert (missing.code, missing.err) == (1, 'Error: --resolve-json "ee" must be <id>=<json>\n')
    bad = run_mnem("merge", "side", "--resolve-json", "ee={", cwd=store)
    assert bad.code == 1 and bad.err.startswith('Error: --resolve-json "ee={" is not valid JSON\n\nCaused by:\n    ')


def test_mnem_author_is_the_fallback_used_verbatim_then_unknown(diverged):
    store, _ = diverged
    ok("merge", "side", "--strategy", "ours", cwd=store, env={"MNEM_AUTHOR": ""})
    assert head_commit(store)["author"] == ""


def test_default_author_is_unknown_and_message_prints_its_first_line(diverged):
    store, _ = diverged
    result = ok("merge", "side", "--strategy", "ours", "-m", "combine\n\nbody", cwd=store)
    commit = head_commit(store)
    assert result.out == f"[{commit['id'][:12]}] combine\n"
    assert (commit["author"], commit["message"]) == ("unknown", "combine\n\nbody")


def test_resolution_for_a_clean_node_is_refused(diverged):
    store, _ = diverged
    before = export(store)
    result = run_mnem("merge", "side", "--strategy", "ours", "--resolve", "keep=ours", cwd=store)
    assert (result.code, result.err) == (
        1, 'Error: invalid ref: resolution given for "keep", which is not a conflict\n')
    assert export(store) == before


def test_base_is_no_resolution_for_an_add_add_conflict(diverged):
    store, _ = diverged
    before = export(store)
    result = run_mnem("--json", "merge", "side", "--strategy", "ours", "--resolve", "aa=base", cwd=store)
    assert result.code == 1
    detail = 'cannot resolve "aa" to base: an add/add conflict has no base'
    assert result.json == {"error": {"code": "invalid_ref", "message": f"invalid ref: {detail}", "detail": detail}}
    assert export(store) == before


# ------------------------------------------------- fast-forward, up to date, dry run


def test_fast_forward_moves_the_branch_without_a_merge_commit(diverged):
    store, ids = diverged
    ok("checkout", "side", cwd=store)
    before = ok("--json", "log", cwd=store).json
    result = ok("merge", ids["base"], "--resolve", "anything=ours", cwd=store)
    assert result.out == "Already up to date.\n"
    ok("checkout", "-b", "ahead", "main", cwd=store)
    tip = write(store, "ahead", 4000, {"new": "n"})
    ok("checkout", "main", cwd=store)
    dry = ok("merge", "ahead", "--dry-run", cwd=store)
    assert dry.out == f"(dry run) would fast-forward main to {tip[:12]}\n"
    assert ok("--json", "merge", "ahead", "--dry-run", cwd=store).json == {
        "status": "fast-forwarded", "commit": tip, "conflicts": []}
    result = ok("merge", "ahead", "--resolve", "not-a-conflict=ours", cwd=store)
    assert result.out == f"Fast-forwarded main to {tip[:12]}\n"
    assert ok("resolve", "main", cwd=store).out == f"{tip}\n"
    assert len(ok("--json", "log", cwd=store).json) == len(before) + 1  # only "ahead" itself


def test_up_to_date_for_itself_and_an_ancestor(diverged):
    store, ids = diverged
    for target in ("main", ids["base"], ids["ours"][:8]):
        assert ok("merge", target, cwd=store).out == "Already up to date.\n"
        assert ok("merge", target, "--dry-run", cwd=store).out == "Already up to date.\n"
        doc = ok("--json", "merge", target, cwd=store).json
        assert doc == {"status": "up-to-date", "commit": None, "conflicts": []}


def test_an_unborn_branch_fast_forwards_to_theirs(diverged):
    store, ids = diverged
    set_head(store, "ref: fresh")
    dry = ok("merge", "side", "--dry-run", cwd=store)
    assert dry.out == f"(dry run) fresh has no commits yet; would fast-forward to {ids['theirs'][:12]}\n"
    assert ok("--json", "merge", "side", "--dry-run", cwd=store).json["status"] == "fast-forwarded"
    assert ok("merge", "side", cwd=store).out == f"Fast-forwarded fresh to {ids['theirs'][:12]}\n"
    assert ok("resolve", "fresh", cwd=store).out == f"{ids['theirs']}\n"


def test_dry_run_conflicts_ignore_a_dirty_index_and_write_nothing(diverged):
    store, _ = diverged
    ok("add", "pending", "p", cwd=store)
    before = export(store)
    result = run_mnem("merge", "side", "--dry-run", cwd=store)
    assert (result.code, result.out, result.err) == (
        1, "(dry run) would conflict in 4 node(s):\n" + CONFLICT_BLOCKS, RETRY_DRY)
    doc = run_mnem("--json", "merge", "side", "--dry-run", cwd=store)
    assert doc.code == 0 and doc.json["status"] == "conflicts" and len(doc.json["conflicts"]) == 4
    assert export(store) == before


def test_dry_run_then_real_clean_merge(diverged):
    store, ids = diverged
    ok("checkout", "-b", "clean", ids["base"], cwd=store)
    write(store, "clean change", 4000, {"to": "clean-edit", "extra": 1})
    ok("checkout", "main", cwd=store)
    before = export(store)
    assert ok("merge", "clean", "--dry-run", cwd=store).out == "(dry run) would merge cleanly, no conflicts.\n"
    assert ok("--json", "merge", "clean", "--dry-run", cwd=store).json == {
        "status": "merged", "commit": None, "conflicts": []}
    assert export(store) == before
    doc = ok("--json", "merge", "clean", "--time", "6000", cwd=store).json
    assert doc["status"] == "merged" and doc["conflicts"] == []
    assert ok("resolve", "main", cwd=store).out == f"{doc['commit']}\n"
    assert memory(store, "main")["to"] == "clean-edit" and memory(store, "main")["extra"] == 1


# ---------------------------------------------------------------------- errors


def test_merge_refuses_a_detached_head(diverged):
    store, ids = diverged
    ok("checkout", ids["ours"], cwd=store)
    for extra in ((), ("--dry-run",)):
        result = run_mnem("merge", "side", *extra, cwd=store)
        assert (result.code, result.err) == (1, "Error: cannot merge from a detached HEAD; check out a branch\n")
    doc = run_mnem("--json", "merge", "side", cwd=store)
    detached = "cannot merge from a detached HEAD; check out a branch"
    assert doc.json == {"error": {"code": "invalid_ref", "message": detached, "detail": detached}}


def test_merge_refuses_a_dirty_index(diverged):
    store, _ = diverged
    ok("rm", "keep", cwd=store)
    result = run_mnem("merge", "side", "--strategy", "ours", cwd=store)
    assert (result.code, result.err) == (
        1, "Error: invalid ref: cannot merge with a dirty index; commit or unstage first\n")


@pytest.mark.parametrize(("argv", "message"), [
    (("--dry-run", "--resolve", "a=ours"),
     "--dry-run previews whether a merge collides; it does not combine with --resolve or --strategy"),
    (("--dry-run", "--strategy", "ours"),
     "--dry-run previews whether a merge collides; it does not combine with --resolve or --strategy"),
    (("--dry-run", "--resolve-json", "a=1"),
     "--dry-run previews whether a merge collides; it does not combine with --resolve or --strategy"),
    (("--strategy", "both", "--resolve", "a"), 'unknown --strategy "both"; use `ours` or `theirs`'),
    (("--resolve", 'a"b'), '--resolve "a\\"b" must be <id>=<ours|theirs|base|delete>'),
    (("--resolve", "a=ours", "--resolve", "b=mine"),
     '--resolve "b=mine": unknown side "mine"; use `ours`, `theirs`, `base` or `delete`'),
])
def test_flags_are_checked_in_upstream_order_before_the_store_is_opened(tmp_path, argv, message):
    result = run_mnem("merge", "side", *argv, cwd=tmp_path)  # no store here: flag errors come first
    assert (result.code, result.out, result.err) == (1, "", f"Error: {message}\n")


def test_unrelated_histories_have_no_common_ancestor(store):
    main = write(store, "main root", 1000, {"a": 1})
    set_head(store, "ref: other")
    other = write(store, "other root", 2000, {"b": 2})
    set_head(store, "ref: main")
    for extra in ((), ("--dry-run",)):
        result = run_mnem("merge", "other", *extra, cwd=store)
        assert (result.code, result.err) == (1, f"Error: invalid ref: {main} and {other} have no common ancestor\n")


def test_criss_cross_history_is_refused(store):
    write(store, "root", 1000, {"a": 1})
    ok("branch", "side", cwd=store)
    main_a = write(store, "main a", 2000, {"x": 1})
    ok("checkout", "side", cwd=store)
    side_a = write(store, "side a", 3000, {"y": 1})
    ok("checkout", "main", cwd=store)
    main_m = ok("--json", "merge", "side", "--time", "4000", cwd=store).json["commit"]
    ok("checkout", "side", cwd=store)
    side_m = ok("--json", "merge", main_a, "--time", "5000", cwd=store).json["commit"]
    ok("checkout", "main", cwd=store)
    before = export(store)
    result = run_mnem("merge", "side", cwd=store)
    assert result.code == 1
    assert result.err == (f"Error: invalid ref: {main_m} and {side_m} have 2 merge bases (criss-cross history); "
                          "merge one side first\n")
    assert export(store) == before
    assert side_a in ok("--json", "log", cwd=store).out


def test_theirs_must_resolve(diverged):
    store, _ = diverged
    result = run_mnem("merge", "nope", cwd=store)
    assert result.err == 'Error: invalid ref: no branch named "nope", and it is not a commit id prefix ' \
                         "(4 to 64 lowercase hex)\n"
