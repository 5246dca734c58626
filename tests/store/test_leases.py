"""TTL leases (``write``'s ``ttl``, ``stamps --live``, ``ls --live``, ``touch``, ``expire``), on every backend.

A lease is kept beside history: expired nodes vanish from live reads at
once, stay in the commits that hold them, and ``expire`` records their
removal as one commit.  Every invocation runs at a time ``--now`` fixes,
so nothing here waits for or reads the wall clock: a lease runs out
exactly when the test says it is later.
"""

from __future__ import annotations

import json

from conftest import run_mnem, store_fingerprint

HOUR = 3_600_000
#: "Now" for every invocation of a test (2026-01-01T00:00:00Z); ``OLD`` is two hours before.
NOW = 1_767_225_600_000
OLD = NOW - 2 * HOUR


def j(*args, cwd, code=0, now=NOW, input=None):
    result = run_mnem("--json", f"--now={now}", *args, cwd=cwd, input=input)
    assert result.code == code, result.out + result.err
    return result.json


def write(store, puts=(), delete=(), when=NOW):
    return j("write", "-m", "w", cwd=store, now=when, input=json.dumps({"put": list(puts), "delete": list(delete)}))


def test_expired_nodes_vanish_from_live_reads_and_expire_records_one_commit(store):
    write(store, [{"id": "m:gone", "content": 1, "ttl": HOUR}, {"id": "m:also", "content": 2, "ttl": HOUR},
                  {"id": "m:kept", "content": 3}], when=OLD)
    fresh = write(store, [{"id": "m:new", "content": 4, "ttl": HOUR}])["commit"]
    live = j("stamps", "--live", cwd=store)
    assert sorted(live) == ["m:kept", "m:new"]
    assert fresh["time"] == NOW and live["m:new"]["expires"] == NOW + HOUR and "expires" not in live["m:kept"]
    assert j("ls", "--live", cwd=store) == ["m:kept", "m:new"]
    assert sorted(j("stamps", cwd=store)) == ["m:also", "m:gone", "m:kept", "m:new"]  # still committed
    assert "expires" not in j("stamps", cwd=store)["m:new"]  # only live reads report leases

    done = j("expire", "--author", "sweeper", cwd=store)
    assert done["removed"] == ["m:also", "m:gone"]
    assert done["commit"]["author"] == "sweeper"
    assert done["commit"]["message"] == "expire m:also, m:gone (TTL ran out)"
    assert done["commit"]["time"] == NOW
    assert j("ls", cwd=store) == ["m:kept", "m:new"]
    assert j("show", "--stat", cwd=store) == {"m:also": "removed", "m:gone": "removed"}
    assert j("expire", cwd=store) == {"commit": None, "removed": []}
    assert len(j("log", cwd=store)) == 3


def test_a_lease_runs_out_at_its_expiry_to_the_millisecond(store):
    write(store, [{"id": "x", "content": 1, "ttl": HOUR}])
    assert j("ls", "--live", cwd=store, now=NOW + HOUR - 1) == ["x"]
    assert j("expire", cwd=store, now=NOW + HOUR - 1)["removed"] == []
    assert j("ls", "--live", cwd=store, now=NOW + HOUR) == []
    assert j("ls", "--live", cwd=store, now=NOW + HOUR - 1) == ["x"]  # nothing was removed: only the reader's now
    assert j("expire", cwd=store, now=NOW + HOUR)["removed"] == ["x"]


def test_a_put_without_ttl_or_a_delete_ends_the_lease(store):
    write(store, [{"id": "a", "content": 1, "ttl": HOUR}, {"id": "b", "content": 1, "ttl": HOUR}], when=OLD)
    assert j("ls", "--live", cwd=store) == []
    write(store, [{"id": "a", "content": 2}], delete=["b"])
    write(store, [{"id": "b", "content": 3}])
    assert j("ls", "--live", cwd=store) == ["a", "b"]
    assert j("expire", cwd=store)["removed"] == []


def test_touch_restarts_unexpired_leases_only(store):
    write(store, [{"id": "old", "content": 1, "ttl": HOUR}], when=OLD)
    write(store, [{"id": "young", "content": 1, "ttl": HOUR}, {"id": "plain", "content": 1}])
    assert j("stamps", "--live", cwd=store)["young"]["expires"] == NOW + HOUR
    later = NOW + HOUR // 2
    touched = j("touch", "old", "young", "plain", "absent", cwd=store, now=later)
    assert touched == {"young": later + HOUR}  # restarted from the touch's now, for the lease's own TTL
    assert j("ls", "--live", cwd=store, now=NOW + HOUR) == ["plain", "young"]  # past the first expiry, alive
    assert j("ls", "--live", cwd=store, now=later + HOUR) == ["plain"]
    assert run_mnem("touch", "plain", cwd=store).out == "(no lease to restart)\n"


def test_leases_belong_to_the_branch_written(store):
    write(store, [{"id": "x", "content": 1, "ttl": HOUR}], when=OLD)
    assert run_mnem("checkout", "-b", "side", cwd=store).code == 0
    assert j("ls", "--live", cwd=store) == ["x"]  # a new branch starts without leases
    assert j("expire", cwd=store)["removed"] == []
    assert run_mnem("checkout", "main", cwd=store).code == 0
    assert j("expire", cwd=store)["removed"] == ["x"]


def test_live_reads_of_a_revision_and_bad_ttls_are_refused_and_change_nothing(store):
    write(store, [{"id": "x", "content": 1}])
    for args in (("stamps", "--live", "main"), ("ls", "--live", "HEAD"), ("similar", "--model", "m", "--vector",
                                                                            "AACAPw==", "--live", "main")):
        assert j(*args, cwd=store, code=2)["error"]["code"] == "usage"
    before = store_fingerprint(store)
    for ttl in (0, -5, 1.5, "10", True, 10**20):
        result = run_mnem("--json", "write", "-m", "bad", cwd=store,
                          input=json.dumps({"put": [{"id": "y", "content": 1, "ttl": ttl}]}))
        assert result.code == 2 and result.json["error"]["code"] == "usage", ttl
        assert "ttl" in result.json["error"]["message"]
    assert store_fingerprint(store) == before
    assert {"ttl", "vectors"} <= set(run_mnem("--version", "--json").json["features"])
