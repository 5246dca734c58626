"""Reserved ids (a LangGraph checkpoint's nodes) through the bridge: only a write that asks for them may name them.

``agents`` (what every MCP write tool calls) refuses them with a ``usage`` error before anything runs;
``Store.write`` reaches ``mnem write``, which refuses them too unless ``allow_reserved=True``, the saver's
argument, sends ``--allow-reserved``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import store_fingerprint

import mnem_bridge
from mnem_bridge import Store, agents
from mnem_bridge.reserved import CHECKPOINT_PREFIX

from .support import fake_mnem

NODE = CHECKPOINT_PREFIX + "t1::c:x"


def test_agents_refuse_a_reserved_id_and_write_nothing(bstore: Store) -> None:
    bstore.write([{"id": NODE, "content": {"step": 0}}], message="a saver's checkpoint", allow_reserved=True)
    before = store_fingerprint(bstore.root)
    attempts = {
        "remember": lambda: agents.remember(bstore, NODE, {"planted": True}),
        "remember_many": lambda: agents.remember_many(bstore, [{"id": "fine", "content": 1},
                                                               {"id": NODE, "content": {"planted": True}}]),
        "forget": lambda: agents.forget(bstore, NODE),
    }
    for writer, attempt in attempts.items():
        with pytest.raises(mnem_bridge.UsageError) as refused:
            attempt()
        assert refused.value.code == "usage" and refused.value.command is None  # refused before mnem ran
        assert refused.value.message.startswith(f"{writer}: the node id '{NODE}' is reserved")
        assert "choose an id that does not start with '.checkpoint:'" in refused.value.message
    assert store_fingerprint(bstore.root) == before
    assert agents.remember(bstore, "checkpoint:notes", "an id that only looks alike is fine")


def test_store_write_needs_allow_reserved_for_a_reserved_id(bstore: Store) -> None:
    before = store_fingerprint(bstore.root)
    for puts, deletes in (([{"id": NODE, "content": 1}], []), ([], [NODE])):
        with pytest.raises(mnem_bridge.UsageError, match="pass --allow-reserved") as refused:
            bstore.write(puts, deletes, message="try", skip_missing=True)
        assert refused.value.command is not None  # the binary refused it
    assert store_fingerprint(bstore.root) == before
    commit, changes = bstore.write([{"id": NODE, "content": 1}], message="saver", allow_reserved=True)
    assert commit is not None and changes == {NODE: "added"}
    assert "write-reserved" in bstore.client.binary.features


def test_a_binary_without_the_feature_gets_no_flag(tmp_path: Path) -> None:
    binary = fake_mnem(tmp_path, """
        print(json.dumps({"commit": None, "changes": {"argv": sys.argv[1:]}}))
    """)
    (tmp_path / "store" / ".mnem").mkdir(parents=True)
    with mnem_bridge.Mnem(binary) as client, mnem_bridge.open(tmp_path / "store", client=client) as store:
        _, echoed = store.write([{"id": NODE, "content": 1}], message="saver", allow_reserved=True)
    assert "--allow-reserved" not in echoed["argv"]  # an older mnem refuses no id, and would refuse the flag
