"""``mnem redact`` killed at any step of its run: the versions are whole or redacted, all of them, never half.

A redaction NULLs a version's bytes, drops its vectors and keeps a record,
in one transaction, then erases (SQLite empties its WAL, PostgreSQL
rewrites the tables).  A kill anywhere in that must leave a store that
opens and verifies, where every chosen version either keeps its bytes and
vectors and has no record, or has its record and neither bytes nor
vectors: a record whose bytes are still there would claim an erasure that
did not happen, bytes gone without a record would read as a corrupt store.
The same command run again then finishes the job, down to the files.

Kills are steps of the program's own run (``killpoints``), drawn three
quarters from the redaction's work: from its first write of the tables to
the end of the erasure (``porcelain.redact``'s last step), where its
commit and the emptying of the WAL or the rewrite fall.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

import killpoints
import pg_stores
from conftest import init_repo, store_sql
from mnem_history import ok
from redaction_support import files, holds, stored

from mnem_store import porcelain
from mnem_store.objects import MemoryNode, Provenance, encode_object

#: Kills per backend; three quarters of them aimed at the redaction's work.
KILLS = 10
SECRET = "sk-live-2b9e4f71c3a85d06e1f7a4c9b3d2e805"
#: One ``mnem redact``: both versions the node ever had (two commits wrote it).
REDACT = ("redact", "--node", "user:7:token", "--reason", "leaked API key", "--by", "dpo")
#: The redaction's work: its first write (``Redactions.remove``) and the whole of the verb it runs in.
WRITES, VERB = "mnem_store/sql/redactions.py:remove", "mnem_store/porcelain/undoing.py:redact"


def build(root: Path, backend: str) -> list[bytes]:
    """A store where two commits wrote the secret (each version with a vector), and a commit on top.

    Written in process (a kill's store costs no ``mnem`` start); returns the
    secret versions' object ids.  Every store built so holds the same rows.
    """
    versions = []
    with init_repo(root, backend) as repo:
        for n in range(2):
            node = MemoryNode("user:7:token", {"token": SECRET, "n": n}, provenance=Provenance(source="chat-42"))
            vector = struct.pack("<2f", 0.25 + n, 0.75)
            porcelain.write(repo, [node], [], f"remember {n}", "agent", 1000 + n,
                            vectors=[("m", node, "$", vector)])
            versions.append(encode_object(node)[0])
        porcelain.write(repo, [MemoryNode("user:7:plan", "pro")], [], "on top", "agent", 2000)
    return versions


def held(store: Path, versions: list[bytes]) -> set[tuple[bool, int, int]]:
    """Each version as (bytes gone, vectors left, records): one tuple when all versions are in the same state."""
    return {
        (row[0] is None, row[1], row[2])
        for raw in versions
        for row in store_sql(
            store,
            "SELECT data, (SELECT count(*) FROM vectors WHERE object = ?), "
            "(SELECT count(*) FROM redactions WHERE object = ?) FROM objects WHERE id = ?",
            raw, raw, raw,
        )
    }


#: The two states a kill may leave: untouched (bytes, a vector, no record), or redacted (record, nothing else).
WHOLE, REDACTED = {(False, 1, 0)}, {(True, 0, 1)}


def history(store: Path) -> set[tuple[bytes, int]]:
    """Every object's id and kind: the ids a redaction must keep (commits, states, and each version's row)."""
    return {(bytes(raw), kind) for raw, kind in store_sql(store, "SELECT id, kind FROM objects")}


def test_a_redact_killed_anywhere_leaves_each_version_whole_or_redacted_and_runs_again_to_the_end(
        backend: str, tmp_path: Path) -> None:
    versions = build(tmp_path / "measured", backend)
    packed = [stored(tmp_path / "measured", raw) for raw in versions]
    ids = history(tmp_path / "measured")
    assert all(holds(files(tmp_path / "measured"), SECRET, form) for form in packed)  # the last check can fail
    whole = killpoints.measure(["-C", pg_stores.address(tmp_path / "measured"), *REDACT], marker=VERB)
    build(tmp_path / "again", backend)
    writes = killpoints.measure(["-C", pg_stores.address(tmp_path / "again"), *REDACT], marker=WRITES)
    assert whole.first < writes.first <= writes.last < whole.last  # the write falls inside the verb
    work = killpoints.Run(whole.steps, writes.first, whole.last)
    inside = redacted = 0
    for n, stop in enumerate(killpoints.aimed(work, KILLS, random.Random(4707))):
        store = tmp_path / f"kill{n}"
        assert build(store, backend) == versions
        inside += killpoints.kill(["-C", pg_stores.address(store), *REDACT], stop, marker=VERB).inside
        ok("verify", cwd=store)
        state = held(store, versions)
        assert state in (WHOLE, REDACTED), f"killed at step {stop}, the versions are {state}"
        redacted += state == REDACTED
        again = ok("--json", *REDACT, cwd=store).json
        assert again["complete"] is True and again["residue"] is None
        assert len(again["records"]) == (0 if state == REDACTED else 2)  # a kept record is never written twice
        assert held(store, versions) == REDACTED and history(store) == ids
        assert not any(holds(files(store), SECRET, form) for form in packed), f"killed at step {stop}"
    assert inside >= KILLS // 2  # most kills fell in the verb's work, from its first write to its erasure's end
    assert 0 < redacted < KILLS  # some kills fell before the commit, some after it
