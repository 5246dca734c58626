"""A remote that lies: a ref never names a commit the store lacks, a refused clone leaves nothing at DEST, and
whatever a remote writes reaches the terminal escaped (docs/remotes.md, "How a transfer works").

The remote is ``hostile_remote.HostileRemote``, a real HTTP server speaking mnem-mcp's sync protocol with
scripted answers; the receiving stores run on both backends.  "Nothing written" is the store's every row,
compared before and after (``store_fingerprint``).
"""

from __future__ import annotations

import base64
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pg_stores
import pytest
from conftest import new_store, run_mnem, store_fingerprint, store_sql
from hostile_remote import Answer, HostileRemote, empty_pack, error_answer
from mnem_history import ok, write

#: A commit id no store here holds.
GHOST = bytes(range(32))


@pytest.fixture
def hostile() -> Iterator[HostileRemote]:
    with HostileRemote() as remote:
        yield remote


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A whole store whose packs the hostile remote replays: two commits on main."""
    store = new_store(tmp_path / "source", "sqlite")
    write(store, "one", 1000, {"a": "1"})
    write(store, "two", 2000, {"b": "2"})
    return store


def real_pack(source: Path) -> tuple[bytes, bytes]:
    """``source``'s main and the pack of its whole history, as ``mnem upload-pack`` makes it."""
    tip = bytes.fromhex(ok("resolve", "main", cwd=source).out.strip())
    answer = ok("--json", "upload-pack", cwd=source, input=json.dumps({"want": [tip.hex()], "have": []})).json
    return tip, base64.b64decode(answer["pack"])


def error_of(*args: str, cwd: Path) -> dict[str, str]:
    """Run ``mnem --json ARGS`` expecting a typed error; returns the error document."""
    result = run_mnem("--json", *args, cwd=cwd)
    assert result.code != 0 and "Traceback" not in result.err, (args, result.out, result.err)
    error: dict[str, str] = json.loads(result.out)["error"]
    return error


def a_node_of(store: Path) -> bytes:
    """The id of a memory node ``store`` holds: an object that is not a commit."""
    return bytes(store_sql(store, "SELECT id FROM objects WHERE kind = 0 LIMIT 1")[0][0])


# ------------------------------------------------------------------ a ref never names a commit the store lacks
@pytest.mark.parametrize("lie", ["missing commit", "not a commit", "one branch of two"])
def test_a_fetch_or_pull_of_a_commit_the_remote_never_sends_is_corrupt_store_and_writes_nothing(
        store: Path, source: Path, hostile: HostileRemote, lie: str) -> None:
    write(store, "mine", 500, {"mine": "1"})
    ok("remote", "add", "evil", hostile.url, cwd=store)
    tip, pack = real_pack(source)
    named = {"missing commit": GHOST, "not a commit": a_node_of(store), "one branch of two": GHOST}[lie]
    # the third lie sends a real pack for main and names a commit it lacks as a second branch
    hostile.advertise({"main": tip, "ghost": named} if lie == "one branch of two" else {"main": named})
    hostile.send_pack(pack if lie == "one branch of two" else empty_pack())
    before = store_fingerprint(store)
    for verb in (["fetch", "evil"], ["pull", "evil", "main"]):
        error = error_of(*verb, cwd=store)
        assert error["code"] == "corrupt_store", (verb, error)
        assert "the remote evil" in error["message"] and named.hex() in error["message"], error
        assert "nothing was written" in error["message"]
        assert store_fingerprint(store) == before, verb  # not the pack's commits, not a tracking branch
    assert ok("--json", "remote", "list", cwd=store).json[0]["branches"] == []
    ok("verify", cwd=store)


def test_a_folder_or_postgresql_remote_whose_branch_names_a_missing_commit_changes_nothing(
        store: Path, tmp_path: Path) -> None:
    """A store this process opens as a remote cannot lie, but it can be damaged: a branch row naming nothing.

    Its serving side refuses a want it lacks (``not_found``) before any pack
    is made, and the receiver's own check stands behind that: no fetch, pull
    or clone from it leaves a ref to nothing.  (A guard: this held before
    ``check_tips`` too.)
    """
    damaged = new_store(tmp_path / "damaged", "sqlite")
    write(damaged, "one", 1000, {"a": "1"})
    store_sql(damaged, "UPDATE refs SET target = ? WHERE name = 'main'", GHOST)
    write(store, "mine", 500, {"mine": "1"})
    ok("remote", "add", "broken", str(damaged), cwd=store)
    before = store_fingerprint(store)
    for verb in (["fetch", "broken"], ["pull", "broken", "main"]):
        assert error_of(*verb, cwd=store)["code"] in ("not_found", "corrupt_store"), verb
        assert store_fingerprint(store) == before, verb
    assert error_of("clone", str(damaged), str(tmp_path / "dest"), cwd=tmp_path)["code"] in (
        "not_found", "corrupt_store")
    assert not (tmp_path / "dest").exists()


def test_a_clone_of_a_commit_the_remote_never_sends_is_refused(tmp_path: Path, hostile: HostileRemote) -> None:
    hostile.advertise({"main": GHOST})
    hostile.send_pack(empty_pack())
    error = error_of("clone", hostile.url, str(tmp_path / "dest"), cwd=tmp_path)
    assert error["code"] == "corrupt_store" and GHOST.hex() in error["message"] and hostile.url in error["message"]


def test_a_push_whose_pack_lacks_the_commit_it_names_is_corrupt_store_and_writes_nothing(store: Path) -> None:
    """The serving half of a push (what mnem-mcp runs for ``POST /sync/receive``) is the hostile-pusher case."""
    write(store, "one", 1000, {"a": "1"})
    before = store_fingerprint(store)
    request = {"pack": base64.b64encode(empty_pack()).decode(), "branch": "new", "old": None, "new": GHOST.hex()}
    result = run_mnem("--json", "receive-pack", cwd=store, input=json.dumps(request))
    error = json.loads(result.out)["error"]
    assert (result.code, error["code"]) == (1, "corrupt_store") and GHOST.hex() in error["message"], error
    assert store_fingerprint(store) == before


# ------------------------------------------------------------------ a refused clone leaves nothing at DEST
def refuse_clones(hostile: HostileRemote, how: str, source: Path) -> None:
    """Make every clone from ``hostile`` fail after the pack arrived: a bad pack, or a ref to nothing."""
    tip, pack = real_pack(source)
    hostile.advertise({"main": tip if how == "bad pack" else GHOST})
    hostile.send_pack(pack[:-7] if how == "bad pack" else empty_pack())


@pytest.mark.parametrize("how", ["bad pack", "ref to nothing"])
def test_a_refused_clone_into_a_folder_leaves_nothing_at_dest(
        tmp_path: Path, source: Path, hostile: HostileRemote, how: str) -> None:
    refuse_clones(hostile, how, source)
    assert error_of("clone", hostile.url, str(tmp_path / "dest"), cwd=tmp_path)["code"] == "corrupt_store"
    assert not (tmp_path / "dest").exists()
    # the new parents the clone made go too, deepest first
    assert error_of("clone", hostile.url, str(tmp_path / "new" / "deeper" / "dest"), cwd=tmp_path)["code"] \
        == "corrupt_store"
    assert not (tmp_path / "new").exists()
    # a folder the user gave, which existed before, stays as it was: empty, with its mode
    given = tmp_path / "given"
    given.mkdir(mode=0o755)
    os.chmod(given, 0o755)
    assert error_of("clone", hostile.url, str(given), cwd=tmp_path)["code"] == "corrupt_store"
    assert list(given.iterdir()) == [] and stat.S_IMODE(given.stat().st_mode) == 0o755


@pytest.mark.parametrize("how", ["bad pack", "ref to nothing"])
def test_a_refused_clone_into_postgresql_leaves_no_schema(
        tmp_path: Path, source: Path, hostile: HostileRemote, how: str) -> None:
    """On PostgreSQL a store is one schema; its CREATE SCHEMA is in the clone's one transaction."""
    refuse_clones(hostile, how, source)
    url = pg_stores.new_url()
    assert error_of("clone", hostile.url, url, cwd=tmp_path)["code"] == "corrupt_store"
    with pg_stores.connect(url) as pg:
        found = pg.execute("SELECT count(*) FROM information_schema.schemata WHERE schema_name = %s",
                           (pg_stores.schema(url),)).fetchone()
    assert found == (0,)
    assert error_of("-C", url, "status", cwd=tmp_path)["code"] == "no_store"


# ------------------------------------------------------------------ remote text is data
#: What a hostile remote writes where a terminal would act on it: clear screen, bell, carriage return,
#: the 8-bit CSI and a right-to-left override.
NASTY = "\x1b[2J\x07\rforged\x9b31m\u202eevil"
ESCAPED = r"\u{1b}[2J\u{7}\u{d}forged\u{9b}31m\u{202e}evil"


def unsafe(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on (a newline ends a line, as ours do)."""
    return [ch for ch in text if not (ch.isprintable() or ch == "\n")]


ANSWERS = {
    "error message": (error_answer(409, "conflict", NASTY), ESCAPED),
    "token refusal": (Answer(401, json.dumps({"error": "invalid_token", "error_description": NASTY}).encode()),
                      ESCAPED),
    "reason phrase": (Answer(502, b"", "text/plain", reason="\x1b[2Jdown\x07"), r"\u{1b}[2Jdown\u{7}"),
    "status line": (Answer(raw=b"\x1b[2Jnot http\x07\r\n\r\n"), None),  # quoted escaped, or not at all
    "branch name": (Answer(200, json.dumps({"format": 1, "head": "ref: main",
                                            "branches": {f"m{NASTY}": GHOST.hex()}}).encode()), ESCAPED),
    "head": (Answer(200, json.dumps({"format": 1, "head": f"ref: {NASTY}", "branches": {}}).encode()), ESCAPED),
}


@pytest.mark.parametrize("what", sorted(ANSWERS))
def test_what_a_remote_writes_reaches_the_terminal_escaped(
        sqlite_store: Path, hostile: HostileRemote, what: str) -> None:
    answer, escaped = ANSWERS[what]
    hostile.answers["refs"] = answer
    ok("remote", "add", "evil", hostile.url, cwd=sqlite_store)
    before = store_fingerprint(sqlite_store)
    text = run_mnem("fetch", "evil", cwd=sqlite_store)
    as_json = run_mnem("--json", "fetch", "evil", cwd=sqlite_store)
    assert text.code != 0 and as_json.code != 0
    assert unsafe(text.out + text.err) == [] and unsafe(as_json.out + as_json.err) == [], (text.err, as_json.out)
    message = json.loads(as_json.out)["error"]["message"]
    assert escaped is None or escaped in message
    # the text output carries the very words the JSON message does
    assert text.err.removeprefix("Error: ").removeprefix("error: ") == f"{message}\n"
    assert store_fingerprint(sqlite_store) == before


def test_a_push_reads_no_unknown_status_and_no_raw_text_from_the_remote(
        sqlite_store: Path, hostile: HostileRemote) -> None:
    write(sqlite_store, "one", 1000, {"a": "1"})
    ok("remote", "add", "evil", hostile.url, cwd=sqlite_store)
    hostile.advertise({})
    before = store_fingerprint(sqlite_store)
    hostile.answers["receive"] = Answer(200, json.dumps({"status": NASTY, "commits": 1, "objects": 3}).encode())
    shape = run_mnem("push", "evil", "main", cwd=sqlite_store)
    hostile.answers["receive"] = error_answer(409, "conflict", NASTY)
    refused = run_mnem("push", "evil", "main", cwd=sqlite_store)
    for result in (shape, refused):
        assert result.code == 1 and unsafe(result.out + result.err) == [], result.err
    assert "wrong shape" in shape.err and ESCAPED in refused.err
    assert store_fingerprint(sqlite_store) == before  # no tracking branch recorded for a push not acknowledged


def test_a_push_to_a_remote_advertising_a_commit_this_store_lacks_is_refused_and_records_nothing(
        sqlite_store: Path, hostile: HostileRemote) -> None:
    """The remote's branch is at a commit we have never seen: not a fast-forward, and no tracking branch to it."""
    write(sqlite_store, "one", 1000, {"a": "1"})
    ok("remote", "add", "evil", hostile.url, cwd=sqlite_store)
    hostile.advertise({"main": GHOST})
    before = store_fingerprint(sqlite_store)
    assert error_of("push", "evil", "main", cwd=sqlite_store)["code"] == "conflict"
    assert store_fingerprint(sqlite_store) == before
    assert [method for method, _, _ in hostile.requests] == ["GET"]  # no pack went out


def test_a_pull_prints_the_remotes_ids_and_values_escaped_and_its_json_keeps_them_exact(tmp_path: Path) -> None:
    """A conflict's theirs side is the remote's memory: its id and value reach the terminal through the report."""
    node = "plan\x1b[2J\u202e"
    source = new_store(tmp_path / "source", "sqlite")
    write(source, "base", 1000, {node: "base"})
    ok("clone", str(source), str(tmp_path / "copy"), cwd=tmp_path)
    copy = tmp_path / "copy"
    write(source, "theirs", 2000, {node: "theirs\x9b2J\u2028"})
    write(copy, "ours", 3000, {node: "ours"})
    text = run_mnem("pull", cwd=copy)
    assert text.code == 1 and unsafe(text.out + text.err) == [], text.out
    assert r"plan\u{1b}[2J\u{202e} (edit/edit)" in text.out and r'"theirs\u{9b}2J\u{2028}"' in text.out
    conflict = ok("--json", "pull", cwd=copy).json["merge"]["conflicts"][0]
    assert (conflict["id"], conflict["theirs"]["content"]) == (node, "theirs\x9b2J\u2028")
