"""How objects are stored: deflated at a fast level, read whatever level wrote them, ids from canonical bytes.

A checkpoint's channel value is tens of kilobytes, and deflating it at
level 9 was a third of a commit's time (issue #35); level 1 stores it a few
percent larger in a fraction of the time.  The level is not part of the
stored format: inflating reads any level, and an object's id is the hash
of its canonical bytes, never of what is stored, so a store written at
level 9 reads, verifies and merges as before.  This is checked on a real
store whose objects are re-packed at level 9, as an older release wrote them.

Deflate's buffers stay under 128 KiB each (memory level 8): at that size,
glibc's default threshold for giving a block a mapping of its own, a
worker's heap was handed back and taken again around every commit's objects,
and deflate began each time by faulting in and zeroing fresh pages (issue #48).
"""

from __future__ import annotations

import json
import sqlite3
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest
from conftest import run_mnem

from mnem_store.canonical import encode, object_id
from mnem_store.sql.objects import _DEFLATED_V1, _DICTIONARY, pack, unpack

#: Prose-like content, so deflate has something to find, as it does in a checkpoint's messages.
TEXT = " ".join(f"message {i} about the plan and the user's {i % 7} preferences" for i in range(400))


def level_9(data: bytes) -> bytes:
    """An object's stored form as releases before issue #35 wrote it: raw deflate at level 9, same dictionary."""
    squeezer = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY)
    return _DEFLATED_V1 + squeezer.compress(data) + squeezer.flush()


def mnem_json(store: Path, *args: str, input: str | None = None) -> Any:
    run = run_mnem("--json", *args, cwd=store, input=input)
    assert run.code == 0, run.err
    return json.loads(run.out)


def test_pack_round_trips_and_reads_level_9() -> None:
    node = encode({"id": "n", "kind": "memory_node", "content": TEXT, "content_kind": "note", "provenance": {}})
    packed = pack("memory_node", node)
    assert packed[:1] == _DEFLATED_V1 and len(packed) < len(node) // 4
    assert unpack(packed) == node
    assert unpack(level_9(node)) == node
    assert pack("state", node) == node  # states are kept as they are


def test_packing_keeps_each_deflate_buffer_under_128_kib(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every buffer deflate holds while packing is under glibc's default threshold for a mapping of its own."""
    largest: list[int] = []
    made = zlib.compressobj

    def observed(*args: Any) -> Any:  # the real compressor; its buffers, as zlib allocated them, are looked at
        squeezer = made(*args)
        largest.append(max(trace.size for trace in tracemalloc.take_snapshot().traces))
        return squeezer

    monkeypatch.setattr(zlib, "compressobj", observed)
    node = encode({"id": "n", "kind": "memory_node", "content": TEXT, "content_kind": "note", "provenance": {}})
    tracemalloc.start()
    try:
        packed = pack("memory_node", node)
    finally:
        tracemalloc.stop()
    assert len(largest) == 1 and 0 < largest[0] < 128 * 1024
    assert unpack(packed) == node and len(packed) < len(node) // 4


def test_a_store_packed_at_level_9_reads_and_verifies_with_the_same_ids(sqlite_store: Path) -> None:
    payload = {"put": [{"id": f"note-{i}", "content": {"text": TEXT, "i": i}} for i in range(3)]}
    commit = mnem_json(sqlite_store, "write", "-m", "notes", "--time", "1700000000000",
                       input=json.dumps(payload))["commit"]["id"]
    database = sqlite_store / ".mnem" / "store.sqlite3"
    with sqlite3.connect(database) as conn:
        rows = conn.execute("SELECT key, id, data FROM objects WHERE data IS NOT NULL").fetchall()
        repacked = 0
        for key, raw, stored in rows:
            canonical = unpack(stored)
            assert object_id(canonical) == raw  # the id names the canonical bytes, not the stored ones
            if stored[:1] == _DEFLATED_V1:
                conn.execute("UPDATE objects SET data = ? WHERE key = ?", (level_9(canonical), key))
                repacked += 1
    assert repacked >= 4  # the three nodes and the commit
    assert mnem_json(sqlite_store, "verify")["ok"] is True
    assert mnem_json(sqlite_store, "status")["commit"] == commit
    assert mnem_json(sqlite_store, "show", "--node=note-2")["content"] == {"text": TEXT, "i": 2}
    again = mnem_json(sqlite_store, "write", "-m", "more", input=json.dumps({"put": [{"id": "x", "content": 1}]}))
    assert again["commit"]["parents"] == [commit]


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Path:
    """A new SQLite store (the stored bytes are read here straight from its file)."""
    run = run_mnem("init", cwd=tmp_path)
    assert run.code == 0, run.err
    return tmp_path
