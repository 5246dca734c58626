"""Redaction records of any number travel: compared range by range, carried in bounded pages (docs/remotes.md,
"Redactions travel").

A store that redacts as it goes (a saver with retention) passes the 100,000 records one message carries after
about 14k steps; it must still fetch, clone and push.  The records are made in process through the engine's
redaction API (``redaction.apply``: records of objects the store does not hold, as a remote may send, each a real
row), beside a real redaction of a secret a store holds, whose bytes must leave every store the records reach.
Transfers run through the real ``mnem`` (local remotes) or in process through the real peers; the page size is
the limit ``MNEM_REDACTION_PAGE``, set small where a test shows pages.  A hostile remote (``HostileRemote``, a real
HTTP server) lies in its summaries, its ranges and its pages: each lie is ``corrupt_store`` and writes nothing.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

import cbor2
import pg_stores
import pytest
from conftest import new_store, open_repo, run_mnem, store_fingerprint, store_sql
from hostile_remote import Answer, HostileRemote
from mnem_history import ok, write
from redaction_support import files, holds, records, version_of
from redaction_support import stored as stored_form

from mnem_store import sync
from mnem_store.layout import FORMAT_VERSION
from mnem_store.location import address
from mnem_store.peers import LocalPeer
from mnem_store.redaction_ranges import LEAF, Summary
from mnem_store.redaction_travel import MAX_REDACTIONS
from mnem_store.transfer import PACK_VERSION, REDACTED_PACK_VERSION, carries_redactions

SECRET = "sk-live-90b1e4c7d2a5f83e6c1b0d9a7e4f2c8b"
NODE = "thread:7:checkpoint"
PAGE = 50



def kept(store: Path) -> list[bytes]:
    """Every object the store has a record for, in order."""
    return [bytes(row[0]) for row in store_sql(store, "SELECT object FROM redactions ORDER BY object")]


def with_secret(store: Path) -> None:
    """A secret a store holds, on main with a commit on top."""
    write(store, "the key", 1_000, {NODE: {"token": SECRET}})
    write(store, "on top", 2_000, {"thread:7:plan": "pro"})


def redact(store: Path) -> None:
    ok("redact", "--node", NODE, "--reason", "leaked key", cwd=store, env={"MNEM_AUTHOR": "dpo"})


def clone(source: Path, dest: Path, backend: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``mnem clone --json`` of ``source`` into ``dest``: a folder, or a new PostgreSQL store it then addresses."""
    target = pg_stores.new_url() if backend == "postgresql" else str(dest)
    cloned: dict[str, Any] = ok("--json", "clone", pg_stores.address(source), target, cwd=dest.parent, env=env).json
    if backend == "postgresql":
        pg_stores.register(dest, target)
    return cloned


def test_more_than_100000_records_travel_by_clone_fetch_and_push(tmp_path: Path) -> None:
    """Past the bound one message holds, with the default page: a clone takes every record, a fetch the ones
    new there, a push the ones new here; the secret's bytes never reach the clone."""
    source = new_store(tmp_path / "source", "sqlite")
    with_secret(source)
    stored = stored_form(source, version_of(source, NODE))
    redact(source)
    records(source, MAX_REDACTIONS, "retained")
    dest = tmp_path / "dest"

    cloned = clone(source, dest, "sqlite")
    assert cloned["redactions"] == MAX_REDACTIONS + 1
    assert kept(dest) == kept(source)
    assert not holds(files(dest), SECRET, stored)
    assert ok("--json", "verify", cwd=dest).json["redacted"] == 1

    records(source, 300, "later")
    assert ok("--json", "fetch", cwd=dest).json["redactions"] == 300
    records(dest, 400, "here")
    pushed = ok("--json", "push", "origin", "main", cwd=dest).json
    assert (pushed["status"], pushed["redactions"]) == ("up-to-date", 400)
    assert kept(dest) == kept(source) and len(kept(source)) == MAX_REDACTIONS + 701
    assert ok("--json", "fetch", cwd=dest).json["redactions"] == 0


class Recording(LocalPeer):
    """The real local peer, recording what each page asked for and carried (to show the pages)."""

    asked: ClassVar[list[int]] = []
    packs: ClassVar[list[bool]] = []
    sent: ClassVar[list[int]] = []

    def upload(self, wants: list[bytes], haves: list[bytes], redactions: list[bytes] | None = None,
               held: Summary | None = None) -> BinaryIO:
        blob = super().upload(wants, haves, redactions, held)
        if wants:
            Recording.packs.append(carries_redactions(blob))
        else:
            Recording.asked.append(len(redactions or ()))
        return blob

    def receive_records(self, blob: BinaryIO) -> int:
        applied = super().receive_records(blob)
        Recording.sent.append(applied)
        return applied


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[Recording]]:
    monkeypatch.setattr(sync, "LocalPeer", Recording)
    monkeypatch.setenv("MNEM_REDACTION_PAGE", str(PAGE))
    Recording.asked, Recording.packs, Recording.sent = [], [], []
    yield Recording


def test_records_go_in_pages_of_the_limit_and_the_commits_pack_carries_none(
        backend: str, tmp_path: Path, recording: type[Recording]) -> None:
    """A few hundred records with a page of 50: a fetch asks for pages of at most 50, its pack of commits
    carries no record, and the remote's erasure of a version this store holds comes with them: its bytes leave;
    a push sends pages of at most 50, even to a branch that is up to date.
    Both stores on the backend, so each side's ranges are read from it."""
    source = new_store(tmp_path / "source", backend)
    with_secret(source)
    laptop = tmp_path / "laptop"
    clone(source, laptop, backend)
    stored = stored_form(laptop, version_of(laptop, NODE))
    assert holds(files(laptop), SECRET, stored)
    redact(source)
    records(source, 330, "retained")
    write(source, "after", 3_000, {"thread:7:plan": "team"})

    repo = open_repo(laptop)
    try:
        fetched = sync.fetch(repo)
    finally:
        repo.close()
    assert (fetched.sent.commits, fetched.sent.redactions) == (1, 331)
    assert recording.asked and max(recording.asked) == PAGE and sum(recording.asked) == 331
    assert len(recording.asked) == 7 and recording.packs == [False]
    assert not holds(files(laptop), SECRET, stored)
    assert ok("--json", "show", "--node", NODE, "origin/main", cwd=laptop).json["redacted"]["by"] == "dpo"
    assert kept(laptop) == kept(source)

    records(laptop, 120, "laptop")
    ok("merge", "origin/main", cwd=laptop)  # a fast-forward: the push then brings the records alone
    repo = open_repo(laptop)
    try:
        pushed = sync.push(repo, "origin", "main")
    finally:
        repo.close()
    assert (pushed.status, pushed.sent.redactions) == ("up-to-date", 120)
    assert recording.sent == [PAGE, PAGE, 20]
    assert kept(laptop) == kept(source)


def test_a_clone_of_versions_redacted_in_many_commits_carries_their_records_in_pages(
        backend: str, tmp_path: Path, recording: type[Recording]) -> None:
    """Retention's shape: each commit sets a version that is redacted later; the clone takes their records in
    pages and its pack of commits none, yet every commit arrives and verifies."""
    source = new_store(tmp_path / "source", "sqlite")
    for step in range(75):
        write(source, f"step {step}", 1_000 + step, {NODE: {"step": step, "token": SECRET}})
    ok("redact", "--node", NODE, "--reason", "retention", cwd=source)
    write(source, "last", 9_000, {NODE: {"step": "last"}})
    dest = tmp_path / "dest"
    repo_url = pg_stores.new_url() if backend == "postgresql" else str(dest)
    cloned = sync.clone(pg_stores.address(source), address(repo_url))
    if backend == "postgresql":
        pg_stores.register(dest, repo_url)
    assert (cloned.sent.commits, cloned.sent.redactions) == (76, 75)
    assert recording.asked == [PAGE, 25] and recording.packs == [False]
    verified = ok("--json", "verify", cwd=dest).json
    assert verified["redacted"] == 75
    assert SECRET.encode() not in files(dest)


# ------------------------------------------------------------------ peers that speak the list exchange
def test_an_asker_that_lists_gets_the_list_and_more_than_it_takes_is_refused_naming_the_upgrade(
        tmp_path: Path) -> None:
    """The advertisement an older mnem asks for (no summary) still lists the ids, up to the bound it takes;
    past it, the refusal names the fix.  Asked for a summary, the store sums its records up instead."""
    store = new_store(tmp_path / "store", "sqlite")
    with_secret(store)
    records(store, 10, "a")
    listed = ok("--json", "upload-pack", "--advertise", cwd=store).json
    assert sorted(listed["redactions"]) == sorted(raw.hex() for raw in kept(store))
    assert "redaction_summary" not in listed
    summed = ok("--json", "upload-pack", "--advertise", "--redaction-summary", cwd=store).json
    assert "redactions" not in summed
    assert summed["redaction_summary"] == {"count": 10, "digest": hashlib.sha256(b"".join(kept(store))).hexdigest()[
        :32]}

    records(store, MAX_REDACTIONS, "b")
    result = run_mnem("--json", "upload-pack", "--advertise", cwd=store)
    error = json.loads(result.out)["error"]
    assert error["code"] == "usage" and "upgrade mnem where the fetch, clone or push runs" in error["message"]
    assert ok("--json", "upload-pack", "--advertise", "--redaction-summary", cwd=store).json[
        "redaction_summary"]["count"] == MAX_REDACTIONS + 10


def serving(hostile: HostileRemote, store: Path) -> None:
    """``hostile`` answers as an older mnem-mcp would over ``store``: the listed advertisement whatever the query,
    and each upload with the real ``mnem upload-pack`` of the request."""
    hostile.answers["refs"] = Answer(200, json.dumps(ok("--json", "upload-pack", "--advertise", cwd=store).json
                                                     ).encode())

    def upload(path: str, body: bytes) -> Answer:
        doc = ok("--json", "upload-pack", cwd=store, input=body.decode()).json
        return Answer(200, base64.b64decode(doc["pack"]), "application/cbor")

    hostile.answers["upload"] = upload


def test_a_remote_that_lists_its_records_is_asked_for_a_summary_and_fetched_from_as_before(tmp_path: Path) -> None:
    """An older mnem-mcp ignores the query that asks for a summary and lists its records: the fetch speaks the
    list exchange with it (the records come with the pack) and asks for no range or page."""
    source = new_store(tmp_path / "source", "sqlite")
    with_secret(source)
    laptop = tmp_path / "laptop"
    ok("clone", str(source), str(laptop), cwd=tmp_path)
    stored = stored_form(laptop, version_of(laptop, NODE))
    redact(source)
    records(source, 30, "old")
    with HostileRemote() as old:
        serving(old, source)
        ok("remote", "add", "old", old.url, cwd=laptop)
        assert ok("--json", "fetch", "old", cwd=laptop).json["redactions"] == 31
        assert old.requests[0][1] == "/mcp/sync/refs?redactions=summary"
        assert not any("/ranges" in path or "/records" in path for _, path, _ in old.requests)
    assert not holds(files(laptop), SECRET, stored)
    assert kept(laptop) == kept(source)


# ------------------------------------------------------------------ a hostile remote that sums its records up
@pytest.fixture
def hostile() -> Iterator[HostileRemote]:
    with HostileRemote() as remote:
        yield remote


def summing(hostile: HostileRemote, store: Path, summary: dict[str, Any]) -> None:
    """``hostile`` advertises ``store``'s branches and ``summary`` as its records' sum."""
    tip = ok("resolve", "main", cwd=store).out.strip()
    hostile.answers["refs"] = Answer(200, json.dumps({"format": FORMAT_VERSION, "head": "ref: main",
                                                      "branches": {"main": tip},
                                                      "redaction_summary": summary}).encode())
    hostile.answers["upload"] = Answer(200, cbor2.dumps({"pack": PACK_VERSION, "format": FORMAT_VERSION,
                                                         "commits": [], "nodes": []}), "application/cbor")


def spans(make: Any) -> Any:
    """A ``ranges`` answer made for each request: ``make(prefix)`` per prefix asked."""
    def answer(path: str, body: bytes) -> Answer:
        return Answer(200, json.dumps({"spans": [make(prefix) for prefix in json.loads(body)["prefixes"]]}).encode())
    return answer


def leaf(ids: list[bytes]) -> dict[str, Any]:
    return {"count": len(ids), "digest": "00" * 16, "ids": [raw.hex() for raw in ids]}


VERSION = bytes.fromhex("ab" * 32)
OTHER = bytes.fromhex("cd" * 32)


def page(entries: list[Any], **keys: Any) -> bytes:
    return bytes(cbor2.dumps({"pack": REDACTED_PACK_VERSION, "format": FORMAT_VERSION, "commits": [], "nodes": [],
                              **keys, "redactions": entries}))


LIES = {
    "a summary that is no summary": ({"count": -1, "digest": "00"}, None, None, "wrong shape"),
    "ids outside their range": ({"count": LEAF + 1, "digest": "11" * 16},
                                spans(lambda prefix: {"count": LEAF + 1, "digest": "22" * 16} if prefix == ""
                                      else leaf([VERSION])), None, "ids in it"),
    "ids not ascending": ({"count": 2, "digest": "11" * 16}, spans(lambda prefix: leaf([OTHER, VERSION])), None,
                          "ascending"),
    "a range without its ids": ({"count": 2, "digest": "11" * 16},
                                spans(lambda prefix: {"count": 3, "digest": "22" * 16}), None, "without its ids"),
    "fewer spans than ranges": ({"count": 2, "digest": "11" * 16},
                                lambda path, body: Answer(200, b'{"spans": []}'), None, "one span for each"),
    "endless ranges": ({"count": 10**9, "digest": "11" * 16},
                       spans(lambda prefix: {"count": 10**9, "digest": "22" * 16}), None,
                       "MNEM_MAX_TRANSFER_REDACTIONS"),
    "a page with a record not asked for": (
        {"count": 1, "digest": "11" * 16}, spans(lambda prefix: leaf([VERSION])),
        page([[OTHER, "n", 5, "mallory", "x"]]), "not asked for"),
    "a page with more records than asked": (
        {"count": 1, "digest": "11" * 16}, spans(lambda prefix: leaf([VERSION])),
        page([[VERSION, "n", 5, "mallory", "x"]] * 2), "more than the 1 that were asked for"),
    "a page that carries a node": (
        {"count": 1, "digest": "11" * 16}, spans(lambda prefix: leaf([VERSION])),
        bytes(cbor2.dumps({"pack": REDACTED_PACK_VERSION, "format": FORMAT_VERSION, "commits": [],
                           "nodes": [b"\x80"], "redactions": [[VERSION, "n", 5, "m", "x"]]})), "carries nodes"),
}


@pytest.mark.parametrize("lie", list(LIES))
def test_a_hostile_remotes_summaries_ranges_and_pages_are_refused_before_any_row_moves(
        sqlite_store: Path, hostile: HostileRemote, lie: str) -> None:
    with_secret(sqlite_store)
    summary, ranges, records_page, word = LIES[lie]
    summing(hostile, sqlite_store, summary)
    if ranges is not None:
        hostile.answers["ranges"] = ranges
    if records_page is not None:
        hostile.answers["upload"] = Answer(200, records_page, "application/cbor")
    ok("remote", "add", "evil", hostile.url, cwd=sqlite_store)
    before = store_fingerprint(sqlite_store)
    result = run_mnem("--json", "fetch", "evil", cwd=sqlite_store, env={"MNEM_MAX_TRANSFER_REDACTIONS": "5000"})
    assert result.code != 0 and "Traceback" not in result.err, result.out
    error = json.loads(result.out)["error"]
    assert error["code"] == "corrupt_store" and (word is None or word in error["message"]), error
    assert store_fingerprint(sqlite_store) == before
    asked = [json.loads(body) for _, path, body in hostile.requests if path.endswith("/ranges")]
    assert sum(len(doc["prefixes"]) for doc in asked) <= 5000 + 256  # bounded, whatever the remote answers


def test_a_remote_that_descends_for_ever_is_refused_at_the_depth_of_one_id(
        sqlite_store: Path, hostile: HostileRemote) -> None:
    """Without a small total bound, ranges that always differ end where a range is one id's."""
    with_secret(sqlite_store)
    summing(hostile, sqlite_store, {"count": LEAF + 1, "digest": "11" * 16})
    hostile.answers["ranges"] = spans(lambda prefix: {"count": LEAF + 1, "digest": "22" * 16})
    ok("remote", "add", "evil", hostile.url, cwd=sqlite_store)
    before = store_fingerprint(sqlite_store)
    error = json.loads(run_mnem("--json", "fetch", "evil", cwd=sqlite_store).out)["error"]
    assert error["code"] == "corrupt_store" and "the range of one object id" in error["message"], error
    assert store_fingerprint(sqlite_store) == before
    assert len([path for _, path, _ in hostile.requests if path.endswith("/ranges")]) == 65  # one per depth


def test_a_record_planted_for_a_commit_not_yet_here_does_not_block_it_when_it_arrives(tmp_path: Path) -> None:
    """A pusher may redact here, and may guess the next commit's id: its record names no node, so the commit wins.

    Ids hash their bytes, so an object that arrives and verifies as a commit or a state was never a node version:
    the fetch drops the record that named it and takes the commit, where it was refused for good before.
    """
    origin, here = new_store(tmp_path / "origin", "sqlite"), tmp_path / "here"
    write(origin, "one", 1000, {"a": "alpha"})
    ok("clone", str(origin), str(here), cwd=tmp_path)
    coming = write(origin, "two", 2000, {"a": "beta"})
    state = ok("--json", "log", "-n", "1", cwd=origin).json[0]["state"]
    planted = page([[bytes.fromhex(coming), "a", 5, "mallory", "guessed"], [bytes.fromhex(state), "a", 5, "mallory",
                                                                            "guessed"]])
    request = {"records_only": True, "pack": base64.b64encode(planted).decode()}
    assert ok("--json", "receive-pack", cwd=here, input=json.dumps(request)).json == {"redactions": 2}
    assert len(ok("--json", "redactions", cwd=here).json["redactions"]) == 2
    ok("pull", "origin", "main", cwd=here)
    assert ok("--json", "log", "-n", "1", cwd=here).json[0]["id"] == coming
    assert ok("--json", "show", "--node", "a", cwd=here).json["content"] == "beta"
    assert ok("--json", "redactions", cwd=here).json["redactions"] == []
    ok("verify", cwd=here)
