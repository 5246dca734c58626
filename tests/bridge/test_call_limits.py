"""Limits on one call through the bridge, on both backends: every writer is held to ``mnem``'s, and messages stay short.

``mnem`` reads the limits from the environment it inherits (``mnem_store.limits``), so a variable set in the
bridge's process holds for its worker: the one setting that covers every writer going through the bridge
(mnem-mcp, ``MnemosyneStore``, ``MnemosyneSaver``).  A refusal is ``UsageError`` naming the limit, the size
found and the variable, and nothing is written.  The commit messages ``agents`` makes are upstream's, with a
long id cut as ``mnem`` cuts it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from conftest import MNEM, run_mnem, store_fingerprint

from mnem_bridge import Mnem, Store, UsageError, agents
from mnem_bridge.text import MESSAGE_ID_CHARS, in_message
from mnem_bridge.worker import WorkerRunner
from mnem_store import limits

SMALL = {"MNEM_MAX_ID_BYTES": "20", "MNEM_MAX_VALUE_BYTES": "200", "MNEM_MAX_WRITE_NODES": "3"}


@pytest.fixture
def bridge(store: Path) -> Iterator[Store]:
    """The ``store`` fixture's store (either backend) through the bridge; its worker closed after."""
    with Mnem(MNEM) as client, Store(pg_stores.address(store), client=client) as opened:
        yield opened


@pytest.fixture
def small(store: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """Like ``bridge``, but its worker starts with the small limits ``SMALL``, checked in the worker's environment."""
    for name, value in SMALL.items():
        monkeypatch.setenv(name, value)
    with Mnem(MNEM) as client, Store(pg_stores.address(store), client=client) as opened:
        agents.remember(opened, "plan", "pro")
        runner = client.runner
        assert isinstance(runner, WorkerRunner) and runner.pid is not None
        assert b"MNEM_MAX_VALUE_BYTES=200\0" in Path(f"/proc/{runner.pid}/environ").read_bytes()
        yield opened


#: writer -> (one call past a limit, the variable its refusal names)
WRITERS: dict[str, tuple[Callable[[Store], Any], str]] = {
    "remember-id": (lambda s: agents.remember(s, "k" * 21, 1), "MNEM_MAX_ID_BYTES"),
    "remember-value": (lambda s: agents.remember(s, "k", "v" * 199), "MNEM_MAX_VALUE_BYTES"),
    "remember-provenance": (lambda s: agents.remember(s, "k", 1, note="n" * 200), "MNEM_MAX_VALUE_BYTES"),
    "revise": (lambda s: agents.remember(s, "plan", {"tier": "p" * 200}), "MNEM_MAX_VALUE_BYTES"),
    "remember_many-value": (lambda s: agents.remember_many(s, [{"id": "a", "content": 1},
                                                               {"id": "b", "content": "v" * 199}]),
                            "MNEM_MAX_VALUE_BYTES"),
    "remember_many-count": (lambda s: agents.remember_many(s, [{"id": str(i), "content": i} for i in range(4)]),
                            "MNEM_MAX_WRITE_NODES"),
    "store-write": (lambda s: s.write([{"id": "k" * 21, "content": 1}], message="w"), "MNEM_MAX_ID_BYTES"),
    "store-add": (lambda s: s.add("k", "v" * 199), "MNEM_MAX_VALUE_BYTES"),
}


@pytest.mark.parametrize("writer", WRITERS)
def test_each_writer_is_refused_past_a_limit_and_writes_nothing(small: Store, store: Path, writer: str) -> None:
    attempt, option = WRITERS[writer]
    before = store_fingerprint(store)
    with pytest.raises(UsageError) as caught:
        attempt(small)
    message = caught.value.message
    assert caught.value.code == "usage" and f"({option}); " in message
    assert f"raise {option} (0 lifts the limit)" in message
    assert caught.value.command is not None  # mnem refused it: the limit is kept in one place
    assert store_fingerprint(store) == before


def test_the_variable_in_the_bridges_environment_lifts_a_limit(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = "v" * (2 << 20)
    with (Mnem(MNEM) as client, Store(pg_stores.address(store), client=client) as bridge,
          pytest.raises(UsageError, match="MNEM_MAX_VALUE_BYTES")):
        agents.remember(bridge, "doc", big)
    monkeypatch.setenv("MNEM_MAX_VALUE_BYTES", "0")
    with Mnem(MNEM) as client, Store(pg_stores.address(store), client=client) as bridge:
        agents.remember(bridge, "doc", big)
        node = bridge.working_node("doc")
        assert node is not None and node.content == big


def test_generated_messages_keep_upstreams_text_and_cut_a_long_id(bridge: Store, store: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    ordinary = "customer-" + "4" * (MESSAGE_ID_CHARS - 9)  # as long as an id is shown whole
    long_id = "k" * 1000
    agents.remember(bridge, ordinary, 1)
    agents.remember(bridge, long_id, 2)
    agents.remember_many(bridge, [{"id": "a", "content": 1}])
    agents.forget(bridge, long_id)
    agents.forget(bridge, ordinary)
    assert [c.message for c in bridge.log(first_parent=True)] == [
        f"forget {ordinary}", f"forget {'k' * 77}...", "remember 1 node", f"remember {'k' * 77}...",
        f"remember {ordinary}"]
    oneline = run_mnem("log", "--oneline", cwd=store).out.splitlines()
    assert max(map(len, oneline)) == len("0123456789ab remember ") + MESSAGE_ID_CHARS


@pytest.mark.parametrize("node_id", ["", "a", "x" * 80, "x" * 81, "é" * 100, "🦀" * 79 + "ab", "k" * 10_000])
def test_the_bridge_cuts_an_id_as_mnem_does(node_id: str) -> None:
    """The rule lives on each side of the process boundary (the bridge never imports the engine): they must agree."""
    assert in_message(node_id) == limits.in_message(node_id)
    assert MESSAGE_ID_CHARS == limits.MESSAGE_ID_CHARS
