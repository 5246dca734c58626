"""``Store.node_times``: ``mnem stamps`` through the bridge, as typed ``TimedNode``s."""

from __future__ import annotations

import orjson
from conftest import run_mnem

from mnem_bridge import MemoryNode, Store, TimedNode


def test_timed_node_round_trips_the_cli_shape(bstore: Store) -> None:
    bstore.write([{"id": "plan", "content": {"tier": "pro"}, "source": "s", "event_time": 5}], message="m", time_ms=9)
    doc = run_mnem("--json", "stamps", cwd=bstore.root).out
    timed = bstore.node_times()
    assert orjson.dumps({k: v.to_dict() for k, v in timed.items()}).decode() + "\n" == doc
    assert TimedNode.from_dict(timed["plan"].to_dict()) == timed["plan"]
    assert timed["plan"].node.provenance.source == "s" and (timed["plan"].created, timed["plan"].updated) == (5, 5)


def test_ids_at_and_the_empty_cases(bstore: Store) -> None:
    assert bstore.node_times() == {}  # unborn branch
    first, _ = bstore.write([{"id": "a", "content": 1}, {"id": "-b", "content": 2}], message="one", time_ms=100)
    bstore.write([{"id": "a", "content": 3}], message="two", time_ms=200)
    assert {k: (v.created, v.updated) for k, v in bstore.node_times().items()} == {"-b": (100, 100), "a": (100, 200)}
    assert list(bstore.node_times(["-b", "ghost"])) == ["-b"]  # an id that looks like a flag stays an id
    assert bstore.node_times([]) == {}
    assert bstore.node_times(["a"], at=first.id)["a"] == TimedNode(MemoryNode("a", 1), 100, 100)


def test_prefixes_keep_a_namespace_and_unite_with_ids(bstore: Store) -> None:
    bstore.write([{"id": "mem:u1:a", "content": 1}, {"id": "mem:u10:b", "content": 2}, {"id": "z", "content": 3},
                  {"id": "--prefix=x", "content": 4}], message="m", time_ms=100)
    assert list(bstore.node_times(prefixes=["mem:u1:"])) == ["mem:u1:a"]
    assert list(bstore.node_times(["z", "ghost"], prefixes=["mem:"])) == ["mem:u10:b", "mem:u1:a", "z"]  # id order
    assert list(bstore.node_times(prefixes=["--prefix"])) == ["--prefix=x"]  # a prefix that looks like a flag
    assert bstore.node_times(prefixes=[]) == {} and bstore.node_times([], prefixes=[]) == {}
    assert list(bstore.node_times([], prefixes=["z"])) == ["z"]


def test_node_ids_list_committed_ids_under_prefixes(bstore: Store) -> None:
    assert bstore.node_ids() == []  # unborn branch
    first, _ = bstore.write([{"id": "mem:u1:a", "content": 1}, {"id": "--prefix=x", "content": 2}], message="m")
    bstore.write([{"id": "mem:u2:b", "content": 3}], message="n")
    assert bstore.node_ids() == ["--prefix=x", "mem:u1:a", "mem:u2:b"]
    assert bstore.node_ids(prefixes=["mem:", "--"]) == ["--prefix=x", "mem:u1:a", "mem:u2:b"]
    assert bstore.node_ids(prefixes=["mem:u2:"]) == ["mem:u2:b"] and bstore.node_ids(prefixes=[]) == []
    assert bstore.node_ids(at=first.id) == ["--prefix=x", "mem:u1:a"]
