"""``Store.gc``: the bridge's garbage collection, typed, on both backends."""

from __future__ import annotations

import base64
import random

import pg_stores

import mnem_bridge

#: A value that does not compress: dropping it shows in the store's size on both backends.
BIG = base64.b64encode(random.Random(47).randbytes(60_000)).decode()


def test_store_gc_drops_what_a_deleted_branch_held_and_answers_typed(store):
    with mnem_bridge.open(pg_stores.address(store)) as bridge:
        bridge.write([{"id": "a", "content": "alpha"}], message="one")
        bridge.write([{"id": "r", "content": BIG}], message="r1", branch="replay/1")
        assert bridge.delete_branch("replay/1")
        counted = bridge.gc(dry_run=True)
        assert counted == mnem_bridge.Collected(True, 1, 3, counted.bytes_before, counted.bytes_before, 1)
        done = bridge.gc()
        assert (done.dry_run, done.commits, done.objects, done.kept_commits) == (False, 1, 3, 1)  # commit, state, node
        assert done.bytes_before == counted.bytes_before and done.bytes_after < done.bytes_before
        assert mnem_bridge.Collected.from_dict(done.to_dict()) == done
        assert bridge.gc().commits == 0
        assert mnem_bridge.Collected.from_dict({**done.to_dict(), "kept_commits": None}).kept_commits is None
        assert {node_id: node.content for node_id, node in bridge.working_memory().items()} == {"a": "alpha"}
