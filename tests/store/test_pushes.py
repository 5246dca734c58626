"""``mnem receive-pack`` with a ``pusher``: who pushed is recorded with the push, and shown beside the author.

On both backends, through the real binary: the record is written in the
push's own transaction (``pushes`` / ``pushed_commits``, beside the history,
never in a commit), so ``log --json`` and ``blame --json`` add ``pushed_by``
and ``pushed_at`` to a commit another than its author pushed, while its id
and the text output stay what they were; ``own_commits_only`` refuses a
foreign commit naming it, its author and the pusher, with nothing written;
a request that cannot say who pushed is ``usage``.  An older store gains the
empty tables once.  A bridge talking to a ``mnem`` that cannot record a
pusher refuses to send the push at all.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from bridge.support import fake_mnem
from conftest import new_store, run_mnem, store_fingerprint
from mnem_history import ok, write

import mnem_bridge


def pack_of(source: Path, tip: str) -> str:
    """The base64 pack of everything ``tip`` reaches, as ``mnem upload-pack`` sends it."""
    return str(ok("--json", "upload-pack", cwd=source, input=json.dumps({"want": [tip], "have": []})).json["pack"])


def receive(store: Path, **request: Any) -> Any:
    return run_mnem("--json", "receive-pack", cwd=store, input=json.dumps({"branch": "main", "old": None, **request}))


def by_id(store: Path) -> dict[str, dict[str, Any]]:
    return {entry["id"]: entry for entry in ok("--json", "log", cwd=store).json}


@pytest.fixture
def alices(tmp_path: Path) -> tuple[Path, list[str]]:
    source = new_store(tmp_path / "source", "sqlite")
    return source, [write(source, "one", 1000, {"plan": "pro"}, author="alice"),
                    write(source, "two", 2000, {"seats": 40}, author="alice")]


def test_the_pusher_is_recorded_with_the_push_and_shown_beside_the_author(
        store: Path, alices: tuple[Path, list[str]]) -> None:
    source, commits = alices
    text_before = ok("log", cwd=source).out
    done = receive(store, pack=pack_of(source, commits[1]), new=commits[1], pusher="bob")
    assert done.code == 0, done.out
    assert (done.json["status"], done.json["commits"]) == ("created", 2)
    entries = by_id(store)
    for commit in commits:  # the same commits, ids and all: the record is beside them
        assert entries[commit]["author"] == "alice" and entries[commit]["pushed_by"] == "bob"
        assert isinstance(entries[commit]["pushed_at"], int)
    assert ok("log", cwd=store).out == text_before  # upstream's text, unchanged
    blamed = ok("--json", "blame", "plan", cwd=store).json
    assert (blamed["commit"], blamed["author"], blamed["pushed_by"]) == (commits[0], "alice", "bob")
    assert ok("export", cwd=store).out == ok("export", cwd=source).out  # no push record is history

    # alice pushing her own next commit: nothing to add to her name
    third = write(source, "three", 3000, {"plan": "team"}, author="alice")
    done = receive(store, pack=pack_of(source, third), old=commits[1], new=third, pusher="alice")
    assert done.code == 0 and done.json["commits"] == 1
    assert set(by_id(store)[third]) == {"id", "parents", "state", "message", "author", "time"}


def test_own_commits_only_refuses_a_foreign_commit_naming_it_and_writes_nothing(
        store: Path, alices: tuple[Path, list[str]]) -> None:
    source, commits = alices
    before = store_fingerprint(store)
    refused = receive(store, pack=pack_of(source, commits[1]), new=commits[1], pusher="bob", own_commits_only=True)
    assert refused.code == 1, refused.out
    error = refused.json["error"]
    assert error["code"] == "invalid_ref"
    assert f"commit {commits[0]} is authored by 'alice'" in error["message"] and "'bob'" in error["message"]
    assert store_fingerprint(store) == before
    done = receive(store, pack=pack_of(source, commits[1]), new=commits[1], pusher="alice", own_commits_only=True)
    assert done.code == 0 and "pushed_by" not in by_id(store)[commits[0]]


@pytest.mark.parametrize(("request_", "says"), [
    ({"pusher": ""}, '"pusher" names who sent the push'),
    ({"pusher": 7}, '"pusher" names who sent the push'),
    ({"own_commits_only": True}, '"own_commits_only" is true or false, and true needs "pusher"'),
    ({"pusher": "bob", "own_commits_only": "yes"}, '"own_commits_only" is true or false'),
])
def test_a_request_that_cannot_say_who_pushed_is_usage_and_writes_nothing(
        sqlite_store: Path, alices: tuple[Path, list[str]], request_: dict[str, Any], says: str) -> None:
    source, commits = alices
    before = store_fingerprint(sqlite_store)
    refused = receive(sqlite_store, pack=pack_of(source, commits[1]), new=commits[1], **request_)
    assert refused.code == 2 and refused.json["error"]["code"] == "usage"
    assert says in refused.json["error"]["message"]
    assert store_fingerprint(sqlite_store) == before


def test_a_schema_4_store_gains_the_push_tables_once(sqlite_store: Path, alices: tuple[Path, list[str]]) -> None:
    write(sqlite_store, "c", 1000, {"k": "v"})
    conn = sqlite3.connect(sqlite_store / ".mnem" / "store.sqlite3")
    try:
        conn.execute("DROP TABLE pushes")
        conn.execute("DROP TABLE pushed_commits")
        conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
        conn.commit()
    finally:
        conn.close()
    assert len(ok("--json", "log", cwd=sqlite_store).json) == 1
    conn = sqlite3.connect(sqlite_store / ".mnem" / "store.sqlite3")
    try:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("6",)
        assert conn.execute("SELECT count(*) FROM pushes").fetchone() == (0,)
    finally:
        conn.close()
    ok("verify", cwd=sqlite_store)


def test_a_schema_2_postgresql_store_gains_the_push_tables_once(tmp_path: Path) -> None:
    store = new_store(tmp_path / "old", "postgresql")
    write(store, "c", 1000, {"k": "v"})
    pg_stores.downgrade(store, ("pushes", "pushed_commits"), 2)
    assert len(ok("--json", "log", cwd=store).json) == 1
    assert pg_stores.schema_version(store) == "4"
    with pg_stores.connect(pg_stores.url_of(store)) as conn:
        assert conn.execute("SELECT count(*) FROM pushed_commits").fetchone() == (0,)
    ok("verify", cwd=store)


def test_a_bridge_never_sends_a_push_to_a_mnem_that_cannot_record_its_pusher(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    binary = fake_mnem(tmp_path, f"open({str(ran)!r}, 'w').write('ran')", features=["remotes-http", "pack-file"])
    (tmp_path / "store" / ".mnem").mkdir(parents=True)
    with mnem_bridge.Mnem(binary) as client, mnem_bridge.open(tmp_path / "store", client=client) as store:
        with pytest.raises(mnem_bridge.ContractError, match="receive-pusher"):
            store.receive_pack(b"", "main", None, "ab" * 32, pusher="bob")
        with pytest.raises(mnem_bridge.UsageError, match="give pusher"):
            store.receive_pack(b"", "main", None, "ab" * 32, own_commits_only=True)
    assert not ran.exists()
