"""``mnem ls``: the ids in committed memory, without reading a node, optionally under prefixes."""

from __future__ import annotations

import json

from conftest import run_mnem
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_store.stateimage import StateImage


def j(*args, cwd):
    result = run_mnem("--json", *args, cwd=cwd)
    assert result.code == 0, result.out + result.err
    return result.json


def write(store, time, put=(), delete=()):
    payload = json.dumps({"put": list(put), "delete": list(delete)})
    result = run_mnem("--json", "write", "-m", f"t{time}", "--time", str(time), cwd=store, input=payload)
    assert result.code == 0, result.out + result.err
    return result.json["commit"]


def test_ids_in_id_order_at_a_revision_and_under_prefixes(store):
    assert j("ls", cwd=store) == []  # unborn branch
    assert run_mnem("ls", cwd=store).out == "(empty)\n"
    first = write(store, 100, [{"id": "mem:u1:a", "content": 1}, {"id": "mem:u10:b", "content": 2},
                               {"id": "z", "content": 3}, {"id": "-x", "content": 4}])
    write(store, 200, [{"id": "mem:u1:c", "content": 5}], delete=["z"])
    assert j("ls", cwd=store) == ["-x", "mem:u10:b", "mem:u1:a", "mem:u1:c"]
    assert j("ls", first["id"], cwd=store) == ["-x", "mem:u10:b", "mem:u1:a", "z"]
    assert j("ls", "--prefix", "mem:u1:", cwd=store) == ["mem:u1:a", "mem:u1:c"]
    assert j("ls", "main", "--prefix=mem:u10:", "--prefix", "-", cwd=store) == ["-x", "mem:u10:b"]
    assert j("ls", "--prefix", "nothing", cwd=store) == []
    assert run_mnem("ls", "--prefix", "mem:u1:", cwd=store).out == "mem:u1:a\nmem:u1:c\n"
    # Staged changes are not committed memory.
    assert run_mnem("add", "staged", "1", cwd=store).code == 0
    assert "staged" not in j("ls", cwd=store)


def test_last_keeps_the_greatest_ids_and_refuses_what_is_not_a_count(store):
    write(store, 100, [{"id": f"c:{n}", "content": n} for n in (3, 1, 2)] + [{"id": "d", "content": 0}])
    assert j("ls", "--prefix", "c:", "--last", "2", cwd=store) == ["c:2", "c:3"]
    assert j("ls", "--last=1", cwd=store) == ["d"]
    assert j("ls", "--prefix", "c:", "--last", "9", cwd=store) == ["c:1", "c:2", "c:3"]
    assert j("ls", "--last", "0", cwd=store) == []
    for bad in (["--last", "-1"], ["--last", "x"], ["--last", "1", "--objects"]):
        refused = run_mnem("--json", "ls", *bad, cwd=store)
        assert refused.code == 2 and refused.json["error"]["code"] == "usage", (bad, refused.out)
    assert "ls-last" in run_mnem("--version", "--json").json["features"]


def test_a_bad_revision_is_invalid_ref_and_listed_in_features(store):
    bad = run_mnem("--json", "ls", "nope", cwd=store)
    assert bad.code == 1 and bad.json["error"]["code"] == "invalid_ref"
    assert "ls" in run_mnem("--version", "--json").json["features"]


@settings(max_examples=300, deadline=None)
@given(st.sets(st.text(alphabet="ab:\U0010ffff", max_size=5), max_size=20),
       st.lists(st.text(alphabet="ab:\U0010ffff", max_size=3), max_size=3))
def test_a_state_finds_exactly_the_ids_under_its_prefixes(ids, prefixes):
    image = StateImage.empty().apply({node_id: bytes(32) for node_id in ids})
    assert list(image.under(prefixes)) == sorted(i for i in ids if prefixes and i.startswith(tuple(prefixes)))
