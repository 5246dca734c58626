"""``mnem ls --objects``: a commit's ids with their values' object ids, for a client that keeps values by object.

A value's object id names it for good and a commit's nodes never change, so
a client may keep both (the bridge's ``Store.node_objects``): ``--unless``
spares it the nodes of a commit it holds, and ``expired`` tells it what a
lease has taken since.  (``MnemosyneStore`` no longer does: ``mnem search``
answers its searches where the values are.)  On every backend.
"""

from __future__ import annotations

import json

from conftest import run_mnem

HOUR = 3_600_000
NOW = 1_767_225_600_000


def j(*args, cwd, code=0, now=NOW, input=None):
    result = run_mnem("--json", f"--now={now}", *args, cwd=cwd, input=input)
    assert result.code == code, result.out + result.err
    return result.json


def write(store, puts, when=NOW):
    return j("write", "-m", "w", cwd=store, now=when, input=json.dumps({"put": puts}))["commit"]


def test_ids_come_with_their_objects_and_a_held_commit_is_not_sent_again(store):
    commit = write(store, [{"id": "ns:a", "content": {"t": 1}}, {"id": "ns:b", "content": {"t": 1}},
                           {"id": "other:c", "content": 2}])
    listed = j("ls", "--objects", "--prefix", "ns:", cwd=store)
    assert listed["commit"] == commit["id"] and listed["expired"] == []
    assert list(listed["nodes"]) == ["ns:a", "ns:b"]
    assert all(len(bytes.fromhex(raw)) == 32 for raw in listed["nodes"].values())
    assert j("ls", "--objects", "--prefix", "ns:", f"--unless={commit['id']}", cwd=store) == {
        "commit": commit["id"], "nodes": None, "expired": []}
    later = write(store, [{"id": "ns:a", "content": {"t": 2}}])
    moved = j("ls", "--objects", "--prefix", "ns:", f"--unless={commit['id']}", cwd=store)
    assert moved["commit"] == later["id"] and moved["nodes"]["ns:b"] == listed["nodes"]["ns:b"]
    assert moved["nodes"]["ns:a"] != listed["nodes"]["ns:a"]  # a new value is a new object
    assert set(j("ls", "--objects", cwd=store)["nodes"]) == {"ns:a", "ns:b", "other:c"}
    assert j("ls", "--unless", commit["id"], cwd=store, code=2)["error"]["code"] == "usage"


def test_live_lists_expired_nodes_apart_and_an_unborn_branch_lists_nothing(store):
    assert j("ls", "--objects", cwd=store) == {"commit": None, "nodes": {}, "expired": []}
    commit = write(store, [{"id": "m:gone", "content": 1, "ttl": HOUR}, {"id": "m:kept", "content": 2}],
                   when=NOW - 2 * HOUR)
    listed = j("ls", "--objects", "--live", "--prefix", "m:", f"--unless={commit['id']}", cwd=store)
    assert listed == {"commit": commit["id"], "nodes": None, "expired": ["m:gone"]}
    assert set(j("ls", "--objects", "--live", cwd=store)["nodes"]) == {"m:gone", "m:kept"}  # listed, and expired
