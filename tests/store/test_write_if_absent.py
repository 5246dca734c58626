"""``mnem write``'s ``"if_absent": true`` puts: applied only when the tip has no node of that id.

What a LangGraph saver's ``put_writes`` needs (issue #35): a retried task's
regular writes keep the ones already stored, and the check happens inside
the write's transaction, so the saver sends one ``write`` instead of an
``ls`` and a ``write``.  A skipped put changes nothing: not the node, not
its lease, not its vectors.  Both backends (the ``store`` fixture).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pg_stores
from conftest import MNEM, run_mnem

import mnem_bridge


def mnem_json(store: Path, *args: str, input: str | None = None) -> Any:
    run = run_mnem("--json", *args, cwd=store, input=input)
    assert run.code == 0, run.err
    return json.loads(run.out)


def write(store: Path, *puts: dict[str, Any], flags: tuple[str, ...] = ()) -> Any:
    return mnem_json(store, "write", "-m", "batch", *flags, input=json.dumps({"put": list(puts)}))


def test_an_if_absent_put_adds_a_new_id_and_keeps_a_stored_one_in_one_commit(store: Path) -> None:
    write(store, {"id": "w:0", "content": {"v": "first"}})
    done = write(store, {"id": "w:0", "content": {"v": "retry"}, "if_absent": True},
                 {"id": "w:1", "content": {"v": "new"}, "if_absent": True},
                 {"id": "err", "content": {"v": "replaced"}, "if_absent": False},
                 {"id": "none", "content": {"v": "as a plain put"}, "if_absent": None})
    assert done["changes"] == {"w:1": "added", "err": "added", "none": "added"}
    assert mnem_json(store, "show", "--node=w:0")["content"] == {"v": "first"}
    assert mnem_json(store, "show", "--node=w:1")["content"] == {"v": "new"}
    assert len(mnem_json(store, "log")) == 2
    assert "write-if-absent" in mnem_json(store, "--version")["features"]


def test_a_batch_whose_puts_are_all_kept_commits_nothing_with_skip_missing(store: Path) -> None:
    write(store, {"id": "w:0", "content": 1})
    kept = {"id": "w:0", "content": 2, "if_absent": True}
    assert write(store, kept, flags=("--skip-missing",)) == {"commit": None, "changes": {}}
    assert write(store, kept)["changes"] == {}  # without it a write is always one commit, as before
    assert len(mnem_json(store, "log")) == 2


def test_the_last_put_of_an_id_decides_and_a_kept_put_leaves_its_lease_alone(store: Path) -> None:
    write(store, {"id": "a", "content": 1}, {"id": "b", "content": 1, "ttl": 60_000})
    before = mnem_json(store, "stamps", "--live", "--node=b")["b"]["expires"]
    write(store, {"id": "a", "content": 2, "if_absent": True, "ttl": 60_000},
          {"id": "b", "content": 2, "if_absent": True},
          {"id": "c", "content": 1, "if_absent": True}, {"id": "c", "content": 2})
    assert "expires" not in mnem_json(store, "stamps", "--live", "--node=a")["a"]  # no lease was started
    assert mnem_json(store, "stamps", "--live", "--node=b")["b"]["expires"] == before  # nor ended
    assert [mnem_json(store, "show", f"--node={n}")["content"] for n in "abc"] == [1, 1, 2]
    write(store, {"id": "a", "content": 3}, {"id": "a", "content": 4, "if_absent": True})
    assert mnem_json(store, "show", "--node=a")["content"] == 1


def test_if_absent_is_decided_on_the_branch_written_and_must_be_a_boolean(store: Path) -> None:
    write(store, {"id": "x", "content": "main"})
    write(store, {"id": "x", "content": "side"}, flags=("--branch=side",))
    write(store, {"id": "x", "content": "again", "if_absent": True}, {"id": "y", "content": 1, "if_absent": True},
          flags=("--branch=side",))
    assert mnem_json(store, "show", "--node=x", "--", "side")["content"] == "side"
    assert mnem_json(store, "ls", "--", "side") == ["x", "y"] and mnem_json(store, "ls") == ["x"]
    bad = run_mnem("--json", "write", "-m", "bad", cwd=store,
                   input=json.dumps({"put": [{"id": "z", "content": 1, "if_absent": 1}]}))
    assert bad.code != 0 and json.loads(bad.out)["error"]["code"] == "usage"
    assert "put[0].if_absent" in json.loads(bad.out)["error"]["message"]


def test_the_bridge_sends_if_absent_puts(store: Path) -> None:
    with mnem_bridge.Mnem(MNEM) as client:
        bridge = mnem_bridge.open(pg_stores.address(store), client=client)
        bridge.write([{"id": "k", "content": 1}], message="first")
        _, changes = bridge.write([{"id": "k", "content": 2, "if_absent": True},
                                   {"id": "l", "content": 2, "if_absent": True}], message="again")
    assert changes == {"l": "added"}
    assert mnem_json(store, "show", "--node=k")["content"] == 1
