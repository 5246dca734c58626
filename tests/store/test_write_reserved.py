"""``mnem write`` refuses reserved ids (a LangGraph checkpoint's nodes) unless ``--allow-reserved``, on both backends.

Every adapter writes through ``mnem write``, so this is where no agent-driven write can plant a node whose value
``MnemosyneSaver`` would deserialize.  ``mnem add`` (the local user's staging verb, upstream's) takes any id: the
person at the keyboard owns the store and can write it anyway.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
from conftest import run_mnem, store_fingerprint
from mnem_history import memory, ok

NODE = ".checkpoint:t1::c:x"


def test_a_reserved_put_or_delete_is_refused_unless_allowed_and_add_takes_one(store: Path) -> None:
    ok("--json", "write", "-m", "saver", "--allow-reserved", cwd=store,
       input=orjson.dumps({"put": [{"id": NODE, "content": {"step": 0}}]}))
    before = store_fingerprint(store)
    payloads = {
        "put[1].id": {"put": [{"id": "fine", "content": 1}, {"id": NODE, "content": {"planted": True}}]},
        "delete[0]": {"delete": [NODE]},
    }
    for where, payload in payloads.items():
        result = run_mnem("--json", "write", "-m", "agent", cwd=store, input=orjson.dumps(payload))
        assert result.code == 2 and "Traceback" not in result.err
        error = json.loads(result.out)["error"]
        assert error["code"] == "usage"
        assert error["message"] == (
            f'{where} "{NODE}" is reserved: ids starting \'.checkpoint:\' hold LangGraph checkpoints, which only '
            "MnemosyneSaver writes; choose another id, or pass --allow-reserved to write a checkpoint's node on "
            "purpose")
    assert store_fingerprint(store) == before
    ok("write", "-m", "saver", "--allow-reserved", cwd=store, input=orjson.dumps({"delete": [NODE]}))
    assert NODE not in memory(store, "HEAD")
    # the local user's own staging verb (upstream's) takes it: the person at the keyboard owns the store
    ok("add", NODE, "--content-json", '{"step": 1}', cwd=store)
    ok("commit", "-m", "by hand", cwd=store)
    assert memory(store, "HEAD")[NODE] == {"step": 1}


def test_the_refusal_bounds_a_long_id_and_the_feature_is_listed(store: Path) -> None:
    long_id = NODE + "x" * 100_000
    result = run_mnem("--json", "write", "-m", "agent", cwd=store,
                      input=orjson.dumps({"put": [{"id": long_id, "content": 1}]}))
    error = json.loads(result.out)["error"]
    assert error["code"] == "usage" and len(error["message"]) < 400
    assert "write-reserved" in ok("--version", "--json", cwd=store).json["features"]

