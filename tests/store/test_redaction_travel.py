"""A redaction travels with history: fetch, pull, push, clone, export and import carry its record, and nothing
brings the bytes back (docs/remotes.md, "Redactions travel").

Every store is a real one on both backends where the backend matters, every transfer is the real ``mnem``;
the hostile remote is ``hostile_remote.HostileRemote``, a real HTTP server with scripted answers.  The secret
is looked for as its text and as the bytes its version is stored as (``redaction_support``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cbor2
import pg_stores
import pytest
from conftest import new_store, run_mnem, store_fingerprint, store_sql
from hostile_remote import Answer, HostileRemote
from mnem_history import ok, write
from redaction_support import files, holds, version_of
from redaction_support import stored as stored_form

from mnem_store.cborstream import ARRAY, MAP, head
from mnem_store.layout import FORMAT_VERSION
from mnem_store.redaction_travel import MAX_REASON_BYTES, MAX_REDACTIONS
from mnem_store.sync import RESIDUE
from mnem_store.transfer import REDACTED_PACK_VERSION

SECRET = "sk-live-2c9e41d7a8b35f60e1c4d9a7b2f8e305"
NODE = "user:7:token"


def history(store: Path, secret_on: str = "main") -> None:
    """The secret on ``secret_on`` (made there from main), a commit on top of it, and the branch ``side``."""
    write(store, "start", 1000, {"user:7:name": "Ada"})
    if secret_on != "main":
        ok("checkout", "-b", secret_on, cwd=store)
    write(store, "remember the key", 2000, {NODE: {"token": SECRET}})
    write(store, "on top", 3000, {"user:7:plan": "pro"})
    ok("branch", "side", cwd=store)
    ok("checkout", "main", cwd=store)


def commits(store: Path, *revs: str) -> list[str]:
    return sorted({entry["id"] for rev in revs for entry in ok("--json", "log", rev, cwd=store).json})


def redact(store: Path) -> dict[str, Any]:
    done: dict[str, Any] = ok("--json", "redact", "--node", NODE, "--reason", "leaked key", cwd=store,
                              env={"MNEM_AUTHOR": "dpo"}).json
    return done


def records(store: Path) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = ok("--json", "redactions", cwd=store).json["redactions"]
    return listed


def gone(store: Path, stored: bytes) -> None:
    """The secret is in no file of ``store``, which verifies, and reads its version as the record."""
    assert not holds(files(store), SECRET, stored)
    assert ok("--json", "verify", cwd=store).json["redacted"] == 1


@pytest.fixture
def source(backend: str, tmp_path: Path) -> Path:
    store = new_store(tmp_path / "source", backend)
    history(store)
    return store


def clone_on(backend: str, source: Path, dest: Path) -> Any:
    """``mnem clone --json`` of ``source`` into ``dest``, a folder or a new PostgreSQL store it then addresses."""
    target = pg_stores.new_url() if backend == "postgresql" else str(dest)
    cloned = ok("--json", "clone", pg_stores.address(source), target, cwd=dest.parent).json
    if backend == "postgresql":
        pg_stores.register(dest, target)
    return cloned


def test_a_fetch_applies_the_remotes_redaction_and_its_bytes_leave_this_store(
        source: Path, tmp_path: Path, backend: str) -> None:
    laptop = tmp_path / "laptop"
    clone_on(backend, source, laptop)
    raw = version_of(laptop, NODE)
    stored = stored_form(laptop, raw)
    assert holds(files(laptop), SECRET, stored)  # it is there: the checks below can fail
    before = commits(laptop, "main", "origin/side")

    redact(source)
    fetched = ok("--json", "fetch", cwd=laptop).json
    assert (fetched["commits"], fetched["redactions"], fetched["residue"]) == (0, 1, None)
    gone(laptop, stored)
    assert records(laptop) == records(source)
    assert commits(laptop, "main", "origin/side") == before
    node = ok("--json", "show", "--node", NODE, "main", cwd=laptop).json
    assert node["content"] is None and node["redacted"]["by"] == "dpo"
    assert ok("--json", "fetch", cwd=laptop).json["redactions"] == 0  # asked for only what it lacks


def test_a_clone_made_after_a_redaction_never_holds_the_bytes(source: Path, tmp_path: Path, backend: str) -> None:
    raw = version_of(source, NODE)
    stored = stored_form(source, raw)
    before = commits(source, "main", "side")
    redact(source)
    dest = tmp_path / "dest"
    assert clone_on(backend, source, dest)["redactions"] == 1
    gone(dest, stored)
    assert commits(dest, "main", "origin/side") == before
    assert records(dest) == records(source)


def test_a_push_brings_the_record_to_a_remote_where_the_branch_is_up_to_date(source: Path, tmp_path: Path) -> None:
    remote = new_store(tmp_path / "remote", "sqlite")
    ok("remote", "add", "r", str(remote), cwd=source)
    ok("push", "r", "main", cwd=source)
    ok("push", "r", "side", cwd=source)
    stored = stored_form(remote, version_of(remote, NODE))
    before = commits(remote, "main", "side")

    redact(source)
    pushed = ok("--json", "push", "r", "main", cwd=source).json
    assert (pushed["status"], pushed["commits"], pushed["redactions"]) == ("up-to-date", 0, 1)
    gone(remote, stored)
    assert commits(remote, "main", "side") == before
    assert ok("--json", "push", "r", "side", cwd=source).json["redactions"] == 0


def test_a_pack_that_carries_bytes_a_record_names_does_not_restore_them(backend: str, tmp_path: Path) -> None:
    """The receiver has the record but not the version; a remote that still has the bytes sends them."""
    source = new_store(tmp_path / "source", "sqlite")
    history(source, secret_on="tmp")
    ok("clone", str(source), str(tmp_path / "old"), cwd=tmp_path)  # made before the redaction: it has the bytes
    old = tmp_path / "old"
    ok("branch", "tmp", "origin/tmp", cwd=old)
    stored = stored_form(old, version_of(old, NODE, "tmp"))
    redact(source)
    ok("branch", "-d", "tmp", cwd=source)
    ok("branch", "-d", "side", cwd=source)
    fresh = tmp_path / "fresh"
    clone_on(backend, source, fresh)
    raw = version_of(old, NODE, "tmp")
    assert store_sql(fresh, "SELECT id FROM objects WHERE id = ?", raw) == []  # the record alone
    assert [r["object"] for r in records(fresh)] == [raw.hex()]

    ok("remote", "add", "old", str(old), cwd=fresh)
    fetched = ok("--json", "fetch", "old", cwd=fresh).json
    assert fetched["commits"] == 2  # the secret's commit came, and its bytes with it in the pack
    assert not holds(files(fresh), SECRET, stored)
    assert ok("--json", "verify", cwd=fresh).json["redacted"] == 1
    assert ok("--json", "show", "--node", NODE, "old/tmp", cwd=fresh).json["content"] is None


def test_an_export_lists_the_records_without_the_bytes_and_an_import_restores_none(
        source: Path, tmp_path: Path) -> None:
    stored = stored_form(source, version_of(source, NODE))
    unsealed = ok("export", cwd=source).out  # made before the redaction: it still holds the secret
    assert holds(unsealed.encode(), SECRET, stored)
    before = commits(source, "main", "side")
    redact(source)

    sealed = ok("export", "--seal", cwd=source).out
    assert not holds(sealed.encode(), SECRET, stored)
    doc = json.loads(sealed)
    assert list(doc)[-2:] == ["redactions", "seal"] and doc["redactions"] == records(source)
    (tmp_path / "sealed.json").write_text(sealed)
    ok("import", str(tmp_path / "sealed.json"), str(tmp_path / "imported"), cwd=tmp_path)
    imported = tmp_path / "imported"
    gone(imported, stored)
    assert commits(imported, "main", "side") == before
    assert ok("export", "--seal", cwd=imported).out == sealed  # export -> import -> export is identical

    both = {**json.loads(unsealed), "redactions": doc["redactions"]}  # the old export's bytes, the new record
    (tmp_path / "both.json").write_text(json.dumps(both))
    ok("import", str(tmp_path / "both.json"), str(tmp_path / "both"), cwd=tmp_path)
    gone(tmp_path / "both", stored)

    edited = {**doc, "redactions": [{**doc["redactions"][0], "reason": "nothing happened"}]}
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    refused = run_mnem("--json", "import", str(tmp_path / "edited.json"), str(tmp_path / "edited"), cwd=tmp_path)
    assert json.loads(refused.out)["error"]["code"] == "corrupt_store"  # the seal covers the records
    assert not (tmp_path / "edited").exists()


# ------------------------------------------------------------------ a hostile remote's records
@pytest.fixture
def hostile() -> Iterator[HostileRemote]:
    with HostileRemote() as remote:
        yield remote


def v2_pack(entries: list[Any]) -> bytes:
    """A version 2 pack carrying no commits or nodes, only these redaction entries."""
    return bytes(cbor2.dumps({"pack": REDACTED_PACK_VERSION, "format": FORMAT_VERSION, "commits": [], "nodes": [],
                              "redactions": entries}))


def too_many() -> bytes:
    """A version 2 pack whose records array says one more than a transfer takes (its items are never read)."""
    return (head(MAP, 5) + cbor2.dumps("pack") + cbor2.dumps(REDACTED_PACK_VERSION) + cbor2.dumps("format")
            + cbor2.dumps(FORMAT_VERSION) + cbor2.dumps("commits") + cbor2.dumps([]) + cbor2.dumps("nodes")
            + cbor2.dumps([]) + cbor2.dumps("redactions") + head(ARRAY, MAX_REDACTIONS + 1)
            + b"\x80" * (MAX_REDACTIONS + 1))


def lies(store: Path) -> dict[str, tuple[Any, bytes, str]]:
    """Each lie: what the advertisement's ``redactions`` says, the pack, and a word of the refusal."""
    tip = bytes.fromhex(ok("resolve", "main", cwd=store).out.strip())
    version = version_of(store, NODE)
    entry = [version, NODE, 5, "mallory", "because"]
    return {
        "a record for a commit": ([tip.hex()], v2_pack([[tip, NODE, 5, "mallory", "x"]]), "a commit or a state"),
        "another node's id": ([version.hex()], v2_pack([[version, "user:7:name", 5, "m", "x"]]), "another node"),
        "too many records": ([version.hex()], too_many(), f"more than the {MAX_REDACTIONS}"),
        "an oversized reason": ([version.hex()], v2_pack([[*entry[:4], "x" * (MAX_REASON_BYTES + 1)]]),
                                f"longer than {MAX_REASON_BYTES} bytes"),
        "a record that is no record": ([version.hex()], v2_pack([[version, NODE, -1, "m", "x"]]), "not a pack"),
        "an advertisement's list that is no list": ("every", v2_pack([entry]), "wrong shape"),
        "a short object id": ([version.hex()], v2_pack([[version[:31], NODE, 5, "m", "x"]]), "32 bytes"),
    }


@pytest.mark.parametrize("lie", ["a record for a commit", "another node's id", "too many records",
                                 "an oversized reason", "a record that is no record",
                                 "an advertisement's list that is no list", "a short object id"])
def test_a_hostile_remotes_records_are_refused_before_any_row_moves(
        store: Path, hostile: HostileRemote, lie: str) -> None:
    history(store)
    advertised, pack, word = lies(store)[lie]
    tip = ok("resolve", "main", cwd=store).out.strip()
    hostile.answers["refs"] = Answer(200, json.dumps({"format": FORMAT_VERSION, "head": "ref: main",
                                                      "branches": {"main": tip}, "redactions": advertised}).encode())
    hostile.send_pack(pack)
    ok("remote", "add", "evil", hostile.url, cwd=store)
    before = store_fingerprint(store)
    result = run_mnem("--json", "fetch", "evil", cwd=store)
    assert result.code != 0 and "Traceback" not in result.err, result.out
    error = json.loads(result.out)["error"]
    assert error["code"] == "corrupt_store" and word in error["message"], error
    assert store_fingerprint(store) == before
    assert ok("--json", "show", "--node", NODE, "main", cwd=store).json["content"] == {"token": SECRET}


def test_a_push_from_a_redacted_store_to_a_remote_that_cannot_take_records_sends_nothing(
        sqlite_store: Path, hostile: HostileRemote) -> None:
    history(sqlite_store)
    redact(sqlite_store)
    hostile.advertise({"main": bytes.fromhex(ok("resolve", "main", cwd=sqlite_store).out.strip())})  # no records
    ok("remote", "add", "old", hostile.url, cwd=sqlite_store)
    result = run_mnem("--json", "push", "old", "main", cwd=sqlite_store)
    error = json.loads(result.out)["error"]
    assert result.code != 0 and error["code"] == "usage" and "upgrade mnem there" in error["message"], error
    assert [path for _, path, _ in hostile.requests if "/receive" in path] == []


def test_a_record_that_names_another_node_than_the_commit_sets_is_refused(
        store: Path, hostile: HostileRemote, tmp_path: Path) -> None:
    """A version arriving as its record alone is shown as the record says: the record must fit the commit."""
    source = new_store(tmp_path / "source", "sqlite")
    history(source)
    redact(source)
    tip = ok("resolve", "main", cwd=source).out.strip()
    version = version_of(source, NODE).hex()
    asked = {"want": [tip], "have": [], "redactions": [version]}
    pack = cbor2.loads(base64.b64decode(ok("--json", "upload-pack", cwd=source, input=json.dumps(asked)).json["pack"]))
    assert [entry[1] for entry in pack["redactions"]] == [NODE]
    pack["redactions"][0][1] = "user:7:name"
    hostile.advertise({"main": bytes.fromhex(tip)})
    hostile.answers["refs"] = Answer(200, json.dumps({**json.loads(hostile.answers["refs"].body),
                                                      "redactions": [version]}).encode())
    hostile.send_pack(bytes(cbor2.dumps(pack)))
    ok("remote", "add", "evil", hostile.url, cwd=store)
    before = store_fingerprint(store)
    error = json.loads(run_mnem("--json", "fetch", "evil", cwd=store).out)["error"]
    assert error["code"] == "corrupt_store" and "a redaction record says is a version of" in error["message"], error
    assert store_fingerprint(store) == before

    export = json.loads(ok("export", cwd=source).out)
    export["redactions"][0]["id"] = "user:7:name"
    (tmp_path / "edited.json").write_text(json.dumps(export))
    refused = run_mnem("--json", "import", str(tmp_path / "edited.json"), str(tmp_path / "edited"), cwd=tmp_path)
    assert json.loads(refused.out)["error"]["code"] == "corrupt_store"
    assert "redactions say is a version of" in json.loads(refused.out)["error"]["message"]
    assert not (tmp_path / "edited").exists()


def test_a_fetch_whose_erasure_a_reader_holds_up_says_so_and_redacting_again_finishes_it(tmp_path: Path) -> None:
    """A read open in another session holds the tables the fetch's erasure must rewrite (``VACUUM FULL`` needs
    their lock): the records still apply, ``residue`` says so and names the fix, and redacting one of the versions
    again, once the reader is done, finishes the erasure.  PostgreSQL's lock makes the hold-up certain; the code
    that reports it is the same for SQLite's write-ahead log."""
    source = new_store(tmp_path / "source", "sqlite")
    history(source)
    laptop = tmp_path / "laptop"
    clone_on("postgresql", source, laptop)
    stored = stored_form(laptop, version_of(laptop, NODE))
    redact(source)
    impatient = {"MNEM_BUSY_TIMEOUT_MS": "1"}  # the least wait: 0 would mean no limit to PostgreSQL
    reader = pg_stores.connect(pg_stores.url_of(laptop))
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM objects").fetchone()
        held = ok("fetch", cwd=laptop, env=impatient).out
    finally:
        reader.rollback()
        reader.close()
    assert "1 redaction record(s) applied here" in held and f"warning: {RESIDUE}" in held, held
    assert ok("--json", "show", "--node", NODE, "main", cwd=laptop).json["content"] is None  # it did commit
    version = version_of(laptop, NODE).hex()
    again = ok("--json", "redact", "--object", version, "--reason", "finish", cwd=laptop).json
    assert (again["complete"], again["records"]) == (True, [])
    gone(laptop, stored)
