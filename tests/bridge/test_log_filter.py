"""``Store.log(touching=..., threads=...)``: the binary's ``log --touching/--thread`` through the bridge."""

from __future__ import annotations

from pathlib import Path

import pytest

import mnem_bridge
from mnem_bridge import Store
from mnem_bridge.errors import ContractError

from .support import fake_mnem


def test_one_threads_run_beside_the_memory_it_learnt(bstore: Store) -> None:
    bstore.write([{"id": "users:u1:plan", "content": "pro"}], message="remember plan")
    for node_id, message in ((".checkpoint:t1::c:1", "checkpoint t1 step 0 (input)"),
                             (".checkpoint:t:2::c:1", "checkpoint t:2 step 0 (input)"),
                             (".checkpoint:t%3A2::c:2", "checkpoint t:2 step 1 (loop)")):
        bstore.write([{"id": node_id, "content": {}}], message=message, allow_reserved=True)  # as the saver does
    everything = bstore.log()
    assert [c.message for c in bstore.log(threads=["t1"])] == ["checkpoint t1 step 0 (input)", "remember plan"]
    # a thread holding ':' is escaped as MnemosyneSaver escapes it
    assert [c.message for c in bstore.log(threads=["t:2"], limit=1)] == ["checkpoint t:2 step 1 (loop)"]
    assert [c.message for c in bstore.log(touching=["users:", ".checkpoint:t1:"])] == [
        "checkpoint t1 step 0 (input)", "remember plan"]
    assert bstore.log(touching=[]) == everything  # no filter is the whole history
    assert bstore.log(touching=["-n"]) == []  # a prefix that looks like an option is still a prefix


def test_a_binary_without_the_feature_is_a_contract_error(tmp_path: Path) -> None:
    binary = fake_mnem(tmp_path, "print('[]')")
    (tmp_path / "store" / ".mnem").mkdir(parents=True)
    with mnem_bridge.Mnem(binary) as client, mnem_bridge.open(tmp_path / "store", client=client) as store:
        with pytest.raises(ContractError, match="log-filter"):
            store.log(threads=["t1"])
        assert store.log() == []  # the unfiltered form needs no feature
