"""Remotes through the real binary, on both backends: clone, fetch, push, pull, leases, corruption, bad input."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import killpoints
import pg_stores
import pytest
from conftest import BACKENDS, new_store, run_mnem, store_fingerprint, store_sql
from mnem_history import ok, write


def where(folder: Path) -> str:
    """What ``mnem clone``/``remote add`` take for a test store: its folder, or its PostgreSQL URL."""
    return pg_stores.address(folder)


def shown(folder: Path) -> str:
    """How messages and ``remote list`` print a test store's address (a URL without its password)."""
    from mnem_store.layout import StoreUrl

    url = pg_stores.url_of(folder)
    return StoreUrl.parse(url).shown if url else str(folder)


def make(tmp_path: Path, name: str, backend: str) -> Path:
    """An empty store on ``backend`` addressed by ``tmp_path/name``."""
    return new_store(tmp_path / name, backend)


def cloned(source: Path, tmp_path: Path, name: str, backend: str = "sqlite") -> Path:
    """``mnem clone`` of ``source`` into a new store on ``backend``."""
    folder = tmp_path / name
    if backend == "postgresql":
        url = pg_stores.new_url()
        ok("clone", where(source), url, cwd=tmp_path)
        return pg_stores.register(folder, url)
    ok("clone", where(source), str(folder), cwd=tmp_path)
    return folder


def portable(store: Path) -> dict[str, Any]:
    """The parts of an export a clone reproduces: HEAD, refs and every object."""
    doc = json.loads(ok("export", cwd=store).out)
    return {key: doc[key] for key in ("head", "refs", "objects")}


def log(store: Path, rev: str = "HEAD") -> list[dict[str, Any]]:
    return ok("--json", "log", rev, cwd=store).json  # type: ignore[no-any-return]


def refused(store: Path, *args: str) -> dict[str, Any]:
    """Run ``mnem --json ARGS`` expecting an error; returns the error document."""
    result = run_mnem("--json", *args, cwd=store)
    assert result.code != 0, (args, result.out)
    assert "Traceback" not in result.err
    error: dict[str, Any] = json.loads(result.out)["error"]
    return error


@pytest.fixture(params=BACKENDS)
def source(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A store with two commits on main and one on side."""
    store = make(tmp_path, "source", request.param)
    write(store, "one", 1000, {"a": "1", "b": "1"})
    write(store, "two", 2000, {"a": "2"})
    ok("branch", "side", cwd=store)
    ok("checkout", "side", cwd=store)
    write(store, "side", 3000, {"s": "x"})
    ok("checkout", "main", cwd=store)
    return store


def test_a_clone_folder_to_postgresql_to_folder_has_identical_ids(tmp_path: Path) -> None:
    source = make(tmp_path, "source", "sqlite")
    write(source, "one", 1000, {"a": "1", "b": {"deep": [1, 2]}})
    write(source, "two", 2000, {"a": "2"}, delete=["b"])
    write(source, "three", 3000, {"c": "3"})
    on_pg = cloned(source, tmp_path, "pg", "postgresql")
    back = cloned(on_pg, tmp_path, "back", "sqlite")
    assert log(source) == log(on_pg) == log(back)
    assert portable(source) == portable(on_pg) == portable(back)
    for store in (on_pg, back):
        ok("verify", cwd=store)
        assert ok("resolve", "origin/main", cwd=store).out.strip() == log(source)[0]["id"]


def test_clone_makes_tracking_branches_and_checks_out_the_source_head(source: Path, tmp_path: Path) -> None:
    copy = cloned(source, tmp_path, "copy")
    remotes = ok("--json", "remote", "list", cwd=copy).json
    tips = {row["name"]: row["commit"] for row in ok("--json", "branch", cwd=source).json}
    assert remotes == [{"name": "origin", "url": shown(source),
                        "branches": [{"name": f"origin/{name}", "commit": tip} for name, tip in sorted(tips.items())]}]
    assert [row["name"] for row in ok("--json", "branch", cwd=copy).json] == ["main"]
    assert ok("--json", "status", cwd=copy).json["branch"] == "main"
    assert ok("resolve", "origin/side", cwd=copy).out.strip() == tips["side"]


def test_fetch_sends_only_the_new_commits(source: Path, tmp_path: Path) -> None:
    copy = cloned(source, tmp_path, "copy")
    before = ok("resolve", "origin/main", cwd=copy).out.strip()
    for n in range(3):
        write(source, f"new {n}", 4000 + n, {f"n{n}": n})
    fetched = ok("--json", "fetch", cwd=copy).json
    tip = log(source, "main")[0]["id"]
    # each new commit brings its commit, its state and its one new node: nothing of the older history
    assert fetched == {"remote": "origin", "commits": 3, "objects": 9, "redactions": 0, "residue": None,
                       "branches": [{"name": "origin/main", "old": before, "new": tip}]}
    assert ok("--json", "fetch", cwd=copy).json == {"remote": "origin", "commits": 0, "objects": 0, "redactions": 0,
                                                    "residue": None, "branches": []}
    assert ok("resolve", "main", cwd=copy).out.strip() == before  # a fetch never moves a local branch
    ok("verify", cwd=copy)


def test_pull_merges_diverged_branches_and_reports_each_conflicting_fact(source: Path, tmp_path: Path) -> None:
    copy = cloned(source, tmp_path, "copy")
    write(source, "theirs", 5000, {"a": "theirs", "t": "new"})
    write(copy, "ours", 6000, {"a": "ours", "o": "new"})
    result = run_mnem("--json", "pull", cwd=copy)
    assert result.code == 0, result.err
    merge = result.json["merge"]
    assert result.json["commits"] == 1
    assert merge["status"] == "conflicts"
    assert [(c["id"], c["kind"], c["ours"]["content"], c["theirs"]["content"]) for c in merge["conflicts"]] == [
        ("a", "edit/edit", "ours", "theirs")]
    text = run_mnem("pull", cwd=copy)
    assert text.code == 1 and "  a (edit/edit)" in text.out and "and pull again" in text.err
    pulled = ok("--json", "pull", "origin", "main", "--resolve", "a=theirs", cwd=copy).json
    assert pulled["merge"]["status"] == "merged" and pulled["commits"] == 0
    shown = {k: v["content"] for k, v in ok("--json", "show", cwd=copy).json.items()}
    assert shown == {"a": "theirs", "b": "1", "o": "new", "t": "new"}
    pushed = ok("--json", "push", cwd=copy).json
    assert pushed["status"] == "fast-forwarded" and pushed["commits"] == 2
    assert log(source, "main")[0]["id"] == pulled["merge"]["commit"]
    ok("verify", cwd=source)


def test_a_push_that_is_not_a_fast_forward_is_refused_and_changes_nothing(source: Path, tmp_path: Path) -> None:
    copy = cloned(source, tmp_path, "copy")
    write(source, "theirs", 5000, {"a": "theirs"})
    write(copy, "ours", 6000, {"a": "ours"})
    before = store_fingerprint(source), store_fingerprint(copy)
    error = refused(copy, "push")
    assert error["code"] == "conflict"
    assert "--force-with-lease" in error["message"] and "mnem pull origin main" in error["message"]
    assert (store_fingerprint(source), store_fingerprint(copy)) == before


def test_force_with_lease_overwrites_only_while_the_lease_holds(source: Path, tmp_path: Path) -> None:
    copy = cloned(source, tmp_path, "copy")
    write(source, "theirs", 5000, {"a": "theirs"})
    ok("fetch", cwd=copy)
    ours = write(copy, "ours", 6000, {"a": "ours"})
    pushed = ok("--json", "push", "--force-with-lease", cwd=copy).json
    assert pushed["status"] == "forced" and pushed["new"] == ours
    assert log(source, "main")[0]["id"] == ours
    # the remote moves again; our lease (origin/main = ours) no longer holds
    moved = write(source, "moved", 7000, {"a": "moved"})
    again = write(copy, "again", 8000, {"a": "again"})
    before = store_fingerprint(source)
    error = refused(copy, "push", "--force-with-lease", "origin", "main")
    assert error["code"] == "conflict" and "mnem fetch origin" in error["message"]
    assert store_fingerprint(source) == before
    # an explicit expected commit that is where the remote is holds, even one this store never fetched
    assert ok("--json", "push", f"--force-with-lease={moved}", cwd=copy).json["new"] == again
    ok("verify", cwd=source)


def test_a_corrupt_object_in_the_source_is_refused_and_nothing_is_written(source: Path, tmp_path: Path) -> None:
    copy = cloned(source, tmp_path, "copy")
    write(source, "new", 5000, {"fresh": "value"})
    # the second new commit's node is damaged: the first commit's objects, written before it is met, must go too
    damaged = ok("--json", "add", "later", "value", cwd=source).json["object"]
    ok("commit", "-m", "later", cwd=source)
    store_sql(source, "UPDATE objects SET data = ? WHERE id = ?", b"\xa1garbage", bytes.fromhex(damaged))
    before = store_fingerprint(copy)
    error = refused(copy, "fetch")
    assert error["code"] == "corrupt_store" and "nothing was written" in error["message"]
    assert store_fingerprint(copy) == before
    error = refused(tmp_path, "clone", where(source), str(tmp_path / "never"))
    assert error["code"] == "corrupt_store"
    assert not (tmp_path / "never" / ".mnem").exists()


def test_bad_input_is_a_typed_error_that_names_the_fix_and_changes_nothing(tmp_path: Path) -> None:
    store = make(tmp_path, "store", "sqlite")
    write(store, "one", 1000, {"a": "1"})
    before = store_fingerprint(store)
    cases = [
        (("fetch", "nowhere"), "not_found", "mnem remote add nowhere URL"),
        (("push", "nowhere"), "not_found", "mnem remote add nowhere URL"),
        (("pull", "nowhere"), "not_found", "mnem remote add nowhere URL"),
        (("remote", "remove", "nowhere"), "not_found", "mnem remote add nowhere URL"),
        (("remote", "add", "a/b", str(tmp_path)), "invalid_ref", 'must not contain "/"'),
        (("remote", "add", "..", str(tmp_path)), "invalid_ref", "'.'"),
        (("remote", "add", "x", "postgresql://h/db?store=bad name"), "usage", "store name"),
        (("remote", "add", "x", "postgresql://u:secret@h/db?store=s"), "usage", "PGPASSWORD"),
        (("clone", "postgresql://h/db?store=s&password=secret", str(tmp_path / "new")), "usage", "PGPASSWORD"),
        (("remote", "add", "x"), "usage", "mnem remote add NAME URL"),
        (("remote", "list", "x"), "usage", "mnem remote list"),
    ]
    for args, code, hint in cases:
        error = refused(store, *args)
        assert (error["code"], hint in error["message"]) == (code, True), (args, error)
    assert store_fingerprint(store) == before
    ok("remote", "add", "origin", str(tmp_path / "missing"), cwd=store)
    error = refused(store, "remote", "add", "origin", str(tmp_path))
    assert error["code"] == "invalid_ref" and "mnem remote remove origin" in error["message"]
    assert refused(store, "fetch")["code"] == "no_store"
    assert refused(tmp_path, "clone", str(tmp_path / "missing"), str(tmp_path / "new"))["code"] == "no_store"
    assert refused(tmp_path, "clone", str(store), str(store))["code"] == "store_exists"
    assert ok("--json", "remote", "remove", "origin", cwd=store).json["name"] == "origin"
    assert ok("--json", "remote", "list", cwd=store).json == []


def test_a_branch_named_like_a_tracking_branch_wins_as_in_git(source: Path, tmp_path: Path) -> None:
    copy = cloned(source, tmp_path, "copy")
    tracked = ok("resolve", "origin/side", cwd=copy).out.strip()
    ok("branch", "origin/side", "main", cwd=copy)
    assert ok("resolve", "origin/side", cwd=copy).out.strip() == ok("resolve", "main", cwd=copy).out.strip()
    assert ok("resolve", "origin/side", cwd=copy).out.strip() != tracked
    assert ok("--json", "show", "origin/main", cwd=copy).json.keys() == {"a", "b"}


def test_an_up_to_date_push_still_teaches_the_tracking_branch(source: Path, tmp_path: Path) -> None:
    copy = cloned(source, tmp_path, "copy")
    ok("remote", "add", "mirror", where(source), cwd=copy)
    pushed = ok("--json", "push", "mirror", cwd=copy).json
    assert (pushed["status"], pushed["commits"]) == ("up-to-date", 0)
    assert ok("resolve", "mirror/main", cwd=copy).out == ok("resolve", "main", cwd=copy).out


def test_text_output_prints_commands_to_rerun(source: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    text = ok("clone", where(source), str(copy), cwd=tmp_path).out
    assert f"mnem -C {copy} log" in text
    assert "nothing to push" in ok("push", cwd=copy).out
    write(source, "new", 5000, {"n": "1"})
    assert "`mnem merge origin/main`" in ok("fetch", cwd=copy).out
    assert "remote add" not in ok("remote", "list", cwd=copy).out


def test_the_binary_lists_the_remotes_feature() -> None:
    assert "remotes" in run_mnem("--version", "--json").json["features"]


#: The fetch's work, from asking the remote for its pack to moving the tracking branches in one write.
FETCH = "mnem_store/sync.py:_fetch"


def test_a_fetch_killed_at_any_step_leaves_the_old_or_the_new_state(source: Path, tmp_path: Path) -> None:
    """Each fetch is killed at a seeded step of its own run (``killpoints``), most of them inside its work."""
    copy = cloned(source, tmp_path, "copy")
    rng = random.Random(34)
    inside = 0
    for n in range(8):
        for k in range(3):
            write(source, f"c{n}-{k}", 10_000 + 10 * n + k, {f"n{n}-{k}-{part}": part for part in range(5)})
        old = ok("resolve", "origin/main", cwd=copy).out.strip()
        new = ok("resolve", "main", cwd=source).out.strip()
        timing = tmp_path / f"timing{n}"  # the same fetch, run whole on a copy of the copy
        shutil.copytree(copy, timing)
        run = killpoints.measure(["-C", where(timing), "fetch"], marker=FETCH)
        aimed = n % 4 != 3  # three kills in four at a step of the fetch's work, the fourth anywhere
        point = rng.randint(run.first, run.last + 1) if aimed else rng.randint(1, run.steps * 5 // 4)
        inside += killpoints.kill(["-C", where(copy), "fetch"], point, FETCH).inside
        ok("verify", cwd=copy)
        now = ok("resolve", "origin/main", cwd=copy).out.strip()
        assert now in (old, new)
        if now == new:  # the new tip's whole history arrived with it
            assert [c["id"] for c in log(copy, "origin/main")] == [c["id"] for c in log(source, "main")]
    assert inside >= 4  # most kills fell inside the fetch's work


def test_a_clone_onto_postgresql_from_either_backend_pushes_back(source: Path, tmp_path: Path) -> None:
    copy = cloned(source, tmp_path, "pgcopy", "postgresql")
    assert log(copy) == log(source)
    write(copy, "from pg", 9000, {"pg": "yes"})
    assert ok("--json", "push", cwd=copy).json["commits"] == 1
    assert log(source, "main") == log(copy)
    ok("verify", cwd=source)
