"""``mnem write --erase-deleted``: a write that deletes nodes also redacts every version they had, in its transaction.

On both backends, through the real binary.  What it erases is looked for
as ``test_redact`` looks: in the store's files (``redaction_support``), in
the stored form and as text, found there before the write so that "gone
after" can fail.  Ids and commits stay, ``verify`` passes, and the records
name the write's author and the reason.  ``--plain-vacuum`` (retention's
way on PostgreSQL) removes the bytes from every row and read but runs a
plain VACUUM instead of the table rewrite, and says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from conftest import new_store, run_mnem, store_fingerprint, store_sql
from mnem_history import ok
from redaction_support import files, holds, stored

SECRET = "sk-live-2b7e151628aed2a6abf7158809cf4f3c"


def call(store: Path, *argv: str, payload: dict[str, Any] | None = None) -> Any:
    return ok("--json", *argv, cwd=store, input=None if payload is None else json.dumps(payload)).json


def history(store: Path) -> tuple[list[str], list[bytes]]:
    """Two versions of the secret, a commit on top; returns main's commits and the secret's stored forms."""
    call(store, "write", "-m", "one", "--time", "1000", payload={"put": [{"id": "token", "content": SECRET},
                                                                         {"id": "name", "content": "Ada"}]})
    first = bytes.fromhex(call(store, "ls", "--objects")["nodes"]["token"])
    call(store, "write", "-m", "two", "--time", "2000", payload={"put": [{"id": "token", "content": SECRET + "!"}]})
    second = bytes.fromhex(call(store, "ls", "--objects")["nodes"]["token"])
    call(store, "write", "-m", "three", "--time", "3000", payload={"put": [{"id": "plan", "content": "pro"}]})
    return [entry["id"] for entry in call(store, "log")], [stored(store, first), stored(store, second)]


def test_a_delete_that_erases_leaves_no_byte_of_any_version_and_every_id_stays(store: Path) -> None:
    before, forms = history(store)
    held = files(store)
    assert all(holds(held, SECRET, form) for form in forms)  # there before: the check below can fail
    done = call(store, "write", "-m", "forget the token", "--time", "4000", "--author", "dpo",
                "--erase-deleted", "erasure request 17", payload={"delete": ["token"]})
    held = files(store)
    assert done["changes"] == {"token": "removed"}
    assert done["erased"] == {"redacted": 2, "complete": True, "residue": None}
    assert not any(holds(held, SECRET, form) for form in forms)
    assert [entry["id"] for entry in call(store, "log")][1:] == before
    assert call(store, "verify")["redacted"] == 2
    records = call(store, "redactions")["redactions"]
    assert [(r["id"], r["by"], r["reason"]) for r in records] == [("token", "dpo", "erasure request 17")] * 2
    old = call(store, "show", "--node", "token", before[-1])
    assert old["content"] is None and old["redacted"]["reason"] == "erasure request 17"
    assert call(store, "show", "--node", "name")["content"] == "Ada"


def test_an_erase_prefix_reaches_what_an_earlier_write_deleted_without_erasing(store: Path) -> None:
    _, forms = history(store)
    call(store, "write", "-m", "plain delete", payload={"delete": ["token"]})
    assert all(holds(files(store), SECRET, form) for form in forms)  # a plain delete keeps history's bytes
    done = call(store, "write", "-m", "nothing left to delete", "--skip-missing", "--erase-deleted", "late request",
                "--erase-prefix", "tok", payload={"delete": []})
    assert done == {"commit": None, "changes": {}, "erased": {"redacted": 2, "complete": True, "residue": None}}
    assert not any(holds(files(store), SECRET, form) for form in forms)
    ok("verify", cwd=store)


@pytest.mark.parametrize(("args", "says"), [
    (["--erase-prefix", "tok"], "--erase-deleted"),
    (["--plain-vacuum"], "--erase-deleted"),
    (["--erase-deleted", " "], "say why"),
    (["--erase-deleted", "x" * 1001], "say it shorter"),
    (["--erase-deleted", "r", "--erase-prefix", ""], "every node"),
    (["--erase-deleted", "r", "--erase-prefix", "."], "--allow-reserved"),
])
def test_a_bad_erasing_write_is_usage_and_changes_nothing(store: Path, args: list[str], says: str) -> None:
    history(store)
    before = store_fingerprint(store)
    done = run_mnem("--json", "write", "-m", "m", *args, cwd=store, input=json.dumps({"delete": ["token"]}))
    error = json.loads(done.out)["error"]
    assert done.code != 0 and error["code"] == "usage" and says in error["message"], done.out
    assert store_fingerprint(store) == before


def test_a_plain_vacuum_erasure_takes_the_bytes_out_of_every_row_and_says_what_postgresql_keeps(
        store: Path) -> None:
    _, forms = history(store)
    done = call(store, "write", "-m", "retention", "--erase-deleted", "retention", "--plain-vacuum",
                payload={"delete": ["token"]})
    rows = b"".join(bytes(data) for (data,) in store_sql(store, "SELECT data FROM objects WHERE data IS NOT NULL"))
    assert not any(form in rows for form in forms)
    if pg_stores.url_of(store):
        assert done["erased"]["complete"] is False and "mnem gc" in done["erased"]["residue"]
        ok("gc", cwd=store)  # the rewrite the residue names
    else:  # SQLite's erasure costs no table rewrite: it is whole either way
        assert done["erased"] == {"redacted": 2, "complete": True, "residue": None}
    assert not any(holds(files(store), SECRET, form) for form in forms)
    ok("verify", cwd=store)


def test_on_postgresql_a_plain_vacuum_erasure_waits_for_no_reader_where_a_rewrite_must(tmp_path: Path) -> None:
    """A session reading the store's objects holds off ``VACUUM FULL`` (its exclusive lock), not a plain VACUUM.

    Retention's write (``--plain-vacuum``) so never locks a reader out,
    nor waits for one; the strict erasure waits the busy timeout (set short
    here), then reports the rewrite undone.
    """
    store = new_store(tmp_path / "store", "postgresql")
    history(store)
    call(store, "write", "-m", "more", payload={"put": [{"id": "other", "content": SECRET + "?"}]})
    url = pg_stores.url_of(store)
    assert url is not None
    with pg_stores.connect(url) as reader:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM objects").fetchone()  # holds the table's ACCESS SHARE lock
        quick = {"MNEM_BUSY_TIMEOUT_MS": "200"}
        plain = ok("--json", "write", "-m", "retention", "--erase-deleted", "retention", "--plain-vacuum", cwd=store,
                   input=json.dumps({"delete": ["token"]}), env=quick).json["erased"]
        strict = ok("--json", "write", "-m", "erasure", "--erase-deleted", "erasure", cwd=store,
                    input=json.dumps({"delete": ["other"]}), env=quick).json["erased"]
        reader.execute("ROLLBACK")
    assert plain["redacted"] == 2 and plain["complete"] is False and "plain VACUUM" in plain["residue"]
    assert strict["redacted"] == 1 and strict["complete"] is False and "another session" in strict["residue"]
