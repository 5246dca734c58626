"""``mnem redact``: a node version's bytes leave the whole history; ids, commits and ``verify`` stay whole.

On both backends, through the real binary.  The secret is looked for in
the form the store keeps it (a node's stored bytes are deflated, so the
plain text alone would prove nothing): before the verb both the text and
the stored bytes are found in the store's files, after it neither is.
Reading a redacted version answers the record (who, when, why), never the
value and never an error; bad requests are typed errors that change nothing.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sqlite3
import struct
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from conftest import MNEM, new_store, run_mnem, store_fingerprint, store_sql
from mnem_history import ok
from redaction_support import files, stored

SECRET = "sk-live-7f3a9c1e5b2d4068a1f9e3c7b5d2a4f6"
SECRET_VECTOR = struct.pack("<4f", 0.123456, 0.654321, 0.987654, 0.456789)


class Worker:
    """A real ``mnem serve --stdio`` on the store: it keeps the store open between requests, and its shelves."""

    def __init__(self, store: Path) -> None:
        url = pg_stores.url_of(store)
        self.proc = subprocess.Popen([MNEM, "serve", "--stdio"], cwd=store, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env={**os.environ, **({"MNEM_STORE": url} if url else {})})

    def ok(self, *argv: str, stdin: str | None = None) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"argv": ["--json", *argv], "stdin": stdin}).encode() + b"\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        assert answer["exit"] == 0, answer
        return json.loads(answer["stdout"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0


@contextmanager
def worker(store: Path) -> Iterator[Worker]:
    """A worker with the store open meanwhile, as the bridge, an MCP server or a LangGraph app keeps it.

    On SQLite that keeps the WAL: a one-shot ``mnem`` that closes the store last folds the WAL into the
    database and removes it, so only with the store still open does the WAL outlive the verb to be looked in.
    """
    running = Worker(store)
    try:
        yield running
    finally:
        running.close()


def put_secret(store: Path, running: Worker | None = None) -> str:
    """Write the secret (with a vector) on main, then a commit on top and a branch; returns the secret's commit.

    Through ``running`` (a worker) when given, else one-shot processes.
    """
    def call(*argv: str, stdin: str | None = None) -> Any:
        if running is not None:
            return running.ok(*argv, stdin=stdin)
        return ok("--json", *argv, cwd=store, input=stdin).json

    payload = {"put": [{"id": "user:7:token", "content": {"token": SECRET}, "source": "chat-42",
                        "vectors": {"model": "m", "fields": {"token": base64.b64encode(SECRET_VECTOR).decode()}}},
                       {"id": "user:7:name", "content": "Ada"}]}
    made = call("write", "-m", "remember", "--time", "1000", "--author", "agent", stdin=json.dumps(payload))
    on_top = {"put": [{"id": "user:7:plan", "content": "pro"}]}
    call("write", "-m", "on top", "--time", "2000", stdin=json.dumps(on_top))
    call("branch", "side")
    return str(made["commit"]["id"])


def secret_object(store: Path) -> bytes:
    """The object id of the secret's version."""
    return bytes.fromhex(ok("--json", "ls", "--objects", cwd=store).json["nodes"]["user:7:token"])


def commits(store: Path) -> list[str]:
    return sorted(entry["id"] for rev in ("main", "side") for entry in ok("--json", "log", rev, cwd=store).json)


def test_a_redacted_secret_leaves_no_byte_in_the_store_and_every_id_stays(store: Path) -> None:
    with worker(store) as running:
        made = put_secret(store, running)
        raw = secret_object(store)
        packed = stored(store, raw)
        before = commits(store)
        assert running.ok("show", "--node", "user:7:token", made)["content"] == {"token": SECRET}  # now on a shelf
        held = files(store)
        assert SECRET.encode() in held or packed in held  # the check below can fail: the bytes are there now
        assert SECRET_VECTOR in held
        done = running.ok("redact", "--node", "user:7:token", "--reason", "leaked API key", "--by", "dpo")
        held = files(store)
        shown = running.ok("show", "--node", "user:7:token", made)
    assert shown["content"] is None and shown["redacted"]["reason"] == "leaked API key"
    assert [(v["object"], v["id"], v["commits"]) for v in done["versions"]] == [(raw.hex(), "user:7:token", [made])]
    assert [(r["object"], r["by"], r["reason"]) for r in done["records"]] == [(raw.hex(), "dpo", "leaked API key")]
    assert done["complete"] is True and done["residue"] is None
    assert SECRET.encode() not in held and packed not in held and SECRET_VECTOR not in held
    assert commits(store) == before
    assert ok("--json", "verify", cwd=store).json["redacted"] == 1
    node = ok("--json", "show", "--node", "user:7:token", made, cwd=store).json
    assert node["content"] is None and SECRET not in json.dumps(node)
    assert node["redacted"] == {"at": done["records"][0]["at"], "by": "dpo", "reason": "leaked API key"}
    assert ok("--json", "show", "side", cwd=store).json["user:7:name"]["content"] == "Ada"  # others untouched


def test_redactions_lists_each_record_and_a_second_redaction_keeps_the_first(store: Path) -> None:
    put_secret(store)
    raw = secret_object(store)
    first = ok("--json", "--now", "5000", "redact", "--object", raw.hex(), "--reason", "first", "--by", "a",
               cwd=store).json
    again = ok("--json", "--now", "6000", "redact", "--node", "user:7:token", "--reason", "second", cwd=store).json
    assert again["records"] == []
    assert again["versions"][0]["redacted"] == {"at": 5000, "by": "a", "reason": "first"}
    assert ok("--json", "redactions", cwd=store).json == {"redactions": first["records"]}
    assert first["records"] == [{"object": raw.hex(), "id": "user:7:token", "at": 5000, "by": "a", "reason": "first"}]


def test_a_dry_run_lists_what_would_go_and_changes_nothing(store: Path) -> None:
    made = put_secret(store)
    before = store_fingerprint(store)
    done = ok("--json", "redact", "--source", "chat-42", "--reason", "r", "--dry-run", cwd=store).json
    assert done["dry_run"] is True and done["records"] == []
    assert [(v["id"], v["commits"], v["redacted"]) for v in done["versions"]] == [("user:7:token", [made], None)]
    assert store_fingerprint(store) == before


@pytest.mark.parametrize(("args", "code", "says"), [
    (["--node", "user:nobody", "--reason", "r"], "not_found", "user:nobody"),
    (["--reason", "r"], "usage", "name what to redact"),
    (["--prefix", "", "--reason", "r"], "usage", "every node"),
    (["--node", "user:7:token", "--reason", "  "], "usage", "--reason"),
    (["--node", "user:7:token"], "usage", "--reason"),
    (["--source", "no-such-source", "--reason", "r"], "not_found", "no node version matches"),
    (["--object", "ab" * 32, "--reason", "r"], "not_found", "not in this store"),
    (["--object", "xyz", "--reason", "r"], "usage", "64 hex digits"),
])
def test_a_bad_request_is_a_typed_error_naming_the_fix_and_changes_nothing(
        store: Path, args: list[str], code: str, says: str) -> None:
    put_secret(store)
    before = store_fingerprint(store)
    done = run_mnem("--json", "redact", *args, cwd=store)
    assert done.code != 0
    error: dict[str, Any] = json.loads(done.out or done.err)["error"]
    assert error["code"] == code and says in error["message"]
    assert store_fingerprint(store) == before


def test_a_commit_is_no_node_version_to_redact(store: Path) -> None:
    made = put_secret(store)
    before = store_fingerprint(store)
    done = run_mnem("--json", "redact", "--object", made, "--reason", "r", cwd=store)
    assert (done.code, done.json["error"]["code"]) == (2, "usage")
    assert "not a node version" in done.json["error"]["message"]
    assert store_fingerprint(store) == before


def test_every_read_of_a_redacted_version_answers_its_record_and_never_the_value(store: Path) -> None:
    items = {"put": [{"id": "mem:user:token", "content": {"note": SECRET},
                      "vectors": {"model": "m", "fields": {"note": base64.b64encode(SECRET_VECTOR).decode()}}},
                     {"id": "mem:user:name", "content": {"note": "Ada"},
                      "vectors": {"model": "m", "fields": {"note": base64.b64encode(SECRET_VECTOR).decode()}}}]}
    ok("write", "-m", "start", "--time", "500", cwd=store, input=json.dumps({"put": [{"id": "a", "content": 1}]}))
    made = ok("--json", "write", "-m", "put", "--time", "1000", cwd=store, input=json.dumps(items)).json["commit"]["id"]
    ok("write", "-m", "rotate", "--time", "2000", cwd=store,
       input=json.dumps({"put": [{"id": "mem:user:token", "content": {"note": "rotated"}}]}))
    ok("--now", "3000", "redact", "--object", secret_object_at(store, made), "--reason", "leak", "--by", "dpo",
       cwd=store)
    marker = "(redacted at 1970-01-01T00:00:03.000Z by dpo: leak)"
    texts = [ok("show", made, cwd=store).out, ok("blame", "mem:user:token", made, cwd=store).out,
             ok("diff", made, "HEAD", cwd=store).out, ok("show", "--node", "mem:user:token", made, cwd=store).out]
    assert all(marker in text and SECRET not in text for text in texts), texts
    stamped = ok("--json", "stamps", made, "--node", "mem:user:token", cwd=store).json["mem:user:token"]["node"]
    assert stamped["content"] is None and stamped["redacted"] == {"at": 3000, "by": "dpo", "reason": "leak"}
    vector = base64.b64encode(SECRET_VECTOR).decode()
    for mode in (["--query", SECRET[:12]], ["--query", SECRET, "--mode", "bm25"],
                 ["--query", "x", "--mode", "vector", "--model", "m", "--vector", vector],
                 ["--query", "x", "--mode", "hybrid", "--model", "m", "--vector", vector], []):
        found = ok("--json", "search", made, *mode, cwd=store).json["items"]  # a redacted item is no candidate
        assert "mem:user:token" not in [item["id"] for item in found] and SECRET not in json.dumps(found), mode
    assert ok("--json", "search", "--query", "rotated", cwd=store).json["items"][0]["id"] == "mem:user:token"
    never = run_mnem("--json", "bisect", "--node", "mem:user:token", "--equals", "null", made, cwd=store)
    assert never.json["error"]["code"] == "invalid_ref", never.out  # a redacted version equals no value, not null
    assert "the predicate is false at bad" in never.json["error"]["message"]


def secret_object_at(store: Path, commit: str) -> str:
    return str(ok("--json", "ls", "--objects", commit, cwd=store).json["nodes"]["mem:user:token"])


def test_an_erasure_another_reader_holds_up_says_so_and_running_it_again_finishes_it(store: Path) -> None:
    """A read open in another session keeps what the erasure must rewrite (SQLite: the WAL's pages; PostgreSQL:
    the tables, which VACUUM FULL must lock): the removal still commits, ``complete`` is false and ``residue``
    says what to do; once the reader is done, the same command finishes the erasure and redacts nothing twice."""
    url = pg_stores.url_of(store)
    impatient = {"MNEM_BUSY_TIMEOUT_MS": "1"}  # the least wait: 0 would mean no limit to PostgreSQL
    with worker(store) as running:  # on SQLite the secret's pages are in the WAL while a process has the store open
        put_secret(store, running)
        packed = stored(store, bytes.fromhex(secret_object(store).hex()))
        if url:
            reader = pg_stores.connect(url)
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM objects").fetchone()
        else:
            reader = sqlite3.connect(store / ".mnem" / "store.sqlite3")
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM objects").fetchone()
        try:
            held = ok("--json", "redact", "--node", "user:7:token", "--reason", "leak", cwd=store, env=impatient).json
        finally:
            reader.rollback()
            reader.close()
        assert (held["complete"], len(held["records"])) == (False, 1)
        assert "run the same command again" in held["residue"]
        assert ok("--json", "show", "--node", "user:7:token", cwd=store).json["content"] is None  # it did commit
        again = ok("--json", "redact", "--node", "user:7:token", "--reason", "leak", cwd=store, env=impatient).json
        assert (again["complete"], again["records"], again["residue"]) == (True, [], None)
        held_files = files(store)
    assert SECRET.encode() not in held_files and packed not in held_files


def test_on_postgresql_a_snapshot_older_than_the_erasure_in_another_schema_leaves_it_incomplete_and_says_so(
        tmp_path: Path) -> None:
    """A transaction that took its snapshot before the redaction, in another schema and reading none of the
    store's tables (so it holds no lock VACUUM FULL waits for), can still see the removed row versions, and the
    rewrite must copy them into the new files: the answer says so instead of ``complete``; once that transaction
    ends, the same command finishes the erasure."""
    store = new_store(tmp_path / "store", "postgresql")
    url = pg_stores.url_of(store)
    assert url
    impatient = {"MNEM_BUSY_TIMEOUT_MS": "1"}
    put_secret(store)
    packed = stored(store, secret_object(store))
    elsewhere = pg_stores.connect(url)
    try:
        elsewhere.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        elsewhere.execute("SELECT 1 FROM pg_catalog.pg_database LIMIT 1").fetchone()  # its snapshot, taken now
        held = ok("--json", "redact", "--node", "user:7:token", "--reason", "leak", cwd=store, env=impatient).json
        assert (held["complete"], len(held["records"])) == (False, 1)
        assert "a transaction open since before it" in held["residue"]
        assert "run the same command again" in held["residue"]
        assert packed in files(store)  # what the answer owns up to: the rewrite kept the old version
    finally:
        elsewhere.rollback()
        elsewhere.close()
    again = ok("--json", "redact", "--node", "user:7:token", "--reason", "leak", cwd=store).json
    assert (again["complete"], again["records"], again["residue"]) == (True, [], None)
    assert packed not in files(store) and SECRET.encode() not in files(store)


def test_a_selection_names_versions_by_where_and_by_every_provenance_match_given(store: Path) -> None:
    put_secret(store)  # token (source chat-42) and name by "agent", then plan by "unknown"
    ok("write", "-m", "rename", "--time", "3000", "--author", "agent", cwd=store,
       input=json.dumps({"put": [{"id": "user:7:name", "content": "Ada L."}]}))

    def chosen(*args: str) -> list[str]:
        versions = ok("--json", "redact", *args, "--reason", "r", "--dry-run", cwd=store).json["versions"]
        return sorted(version["id"] for version in versions)

    assert chosen("--prefix", "user:7:t") == ["user:7:token"]
    assert chosen("--prefix", "user:7:") == ["user:7:name", "user:7:name", "user:7:plan", "user:7:token"]
    assert chosen("--node", "user:7:name") == ["user:7:name", "user:7:name"]  # every version it ever had
    assert chosen("--author", "agent") == ["user:7:name", "user:7:name", "user:7:token"]
    assert chosen("--author", "agent", "--source", "chat-42") == ["user:7:token"]
    assert chosen("--prefix", "user:7:", "--author", "unknown") == ["user:7:plan"]
    nothing = run_mnem("--json", "redact", "--node", "user:7:name", "--source", "chat-42", "--reason", "r",
                       cwd=store)
    assert nothing.json["error"]["code"] == "not_found"


def test_missing_bytes_without_a_record_are_still_a_corrupt_store(store: Path) -> None:
    put_secret(store)
    raw = secret_object(store)
    store_sql(store, "UPDATE objects SET data = NULL WHERE id = ?", raw)  # damage: no redaction says so
    done = run_mnem("--json", "verify", cwd=store)
    assert done.code == 1 and done.json["error"]["code"] == "corrupt_store"
    assert {"what": "object", "id": raw.hex(), "message": "has no stored bytes and no redaction record"} in (
        done.json["error"]["problems"])
    read = run_mnem("--json", "show", "--node", "user:7:token", cwd=store)
    assert read.code == 1 and read.json["error"]["code"] == "corrupt_store"


def test_a_staged_version_is_redacted_too_and_a_commit_of_it_stays_redacted(store: Path) -> None:
    ok("add", "draft", "--content-json", json.dumps({"token": SECRET}), cwd=store)
    done = ok("--json", "redact", "--node", "draft", "--reason", "staged by mistake", cwd=store).json
    assert [(v["id"], v["commits"]) for v in done["versions"]] == [("draft", [])]
    ok("commit", "-m", "keep the draft", cwd=store)
    node = ok("--json", "show", "--node", "draft", cwd=store).json
    assert node["content"] is None and node["redacted"]["reason"] == "staged by mistake"
    assert ok("--json", "verify", cwd=store).json["redacted"] == 1


def test_a_large_value_leaves_no_byte_in_overflow_pages_or_toast(store: Path) -> None:
    """A value past a page: SQLite keeps it in overflow pages, PostgreSQL in the table's TOAST table."""
    big = SECRET + "".join(hashlib.sha256(str(n).encode()).hexdigest() for n in range(1000))  # 64 kB of hex
    with worker(store) as running:
        running.ok("write", "-m", "big", stdin=json.dumps({"put": [{"id": "dump", "content": big}]}))
        running.ok("write", "-m", "on top", stdin=json.dumps({"put": [{"id": "other", "content": 1}]}))
        raw = bytes.fromhex(str(running.ok("ls", "--objects")["nodes"]["dump"]))
        packed = stored(store, raw)
        pieces = [packed[i:i + 64] for i in range(0, len(packed) - 64, len(packed) // 8)]
        assert len(packed) > 8192 and all(piece in files(store) for piece in pieces)
        assert running.ok("redact", "--node", "dump", "--reason", "too much")["complete"] is True
        held = files(store)
    assert not any(piece in held for piece in pieces) and SECRET.encode() not in held
