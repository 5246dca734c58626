"""``MnemosyneStore.fetch/push/pull``: two agents' stores cloned from one shared store exchange memory."""

from __future__ import annotations

from pathlib import Path

from conftest import MNEM, new_store

import mnem_bridge
from mnem_langgraph import MnemosyneStore


def test_mnemosyne_store_pulls_and_pushes(tmp_path: Path) -> None:
    new_store(tmp_path / "shared", "sqlite")
    with MnemosyneStore(tmp_path / "shared", author="lead", mnem=MNEM) as shared:
        shared.put(("customers",), "acme", {"plan": "free"})
    with mnem_bridge.Mnem(MNEM) as client:
        mnem_bridge.clone(tmp_path / "shared", tmp_path / "a", client=client).close()
        mnem_bridge.clone(tmp_path / "shared", tmp_path / "b", client=client).close()
    with MnemosyneStore(tmp_path / "a", author="agent-a", mnem=MNEM) as a, \
            MnemosyneStore(tmp_path / "b", author="agent-b", mnem=MNEM) as b:
        a.put(("customers",), "acme", {"plan": "pro"})
        assert a.push().status == "fast-forwarded"
        b.put(("customers",), "acme", {"plan": "enterprise"})
        pulled = b.pull()
        assert not pulled.merge.ok and [c.id for c in pulled.merge.conflicts] == ["customers:acme"]
        assert b.pull(resolutions={(("customers",), "acme"): "theirs"}).merge.ok
        item = b.get(("customers",), "acme")
        assert item is not None and item.value == {"plan": "pro"}
        assert b.push().status == "fast-forwarded"
        assert a.fetch().commits == 2
        assert a.pull().merge.status == "fast-forwarded"
        assert a.get(("customers",), "acme").value == {"plan": "pro"}  # type: ignore[union-attr]
