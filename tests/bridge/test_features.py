"""The feature table (``mnem_bridge.features``): a ``mnem`` lacking one feature is refused by the table's message.

Each call is made against a fake ``mnem`` that lists every feature the real
one does except the one under test, so the refusal can only come from that
feature's row; the fake records any run, so "nothing was run" is checked,
not assumed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import MNEM

import mnem_bridge
from mnem_bridge.binary import FIX
from mnem_bridge.features import NEEDS

from .support import fake_mnem

#: One call per row of ``NEEDS``: a call that needs that feature and no other missing one.
CALLS: dict[str, Callable[[mnem_bridge.Store, Path], object]] = {
    "diff-range": lambda store, _: store.diff("main", "hyp", merge_base=True),
    "gc": lambda store, _: store.gc(dry_run=True),
    "log-filter": lambda store, _: store.log(threads=["t1"]),
    "log-time": lambda store, _: store.log(since=0),
    "ls-last": lambda store, _: store.node_ids(last=3),
    "ls-objects": lambda store, _: store.node_objects(),
    "namespaces": lambda store, _: store.namespaces(),
    "now": lambda store, _: store.log(),  # the client's clock (set below for this row) needs it
    "pack-file": lambda store, tmp: store.upload_pack_to(tmp / "pack", ["ab" * 32], []),
    "pack-redactions": lambda store, _: store.receive_pack(b"", "main", None, "ab" * 32, redactions=False),
    "receive-pusher": lambda store, _: store.receive_pack(b"", "main", None, "ab" * 32, pusher="bob"),
    "redact": lambda store, _: store.redact(nodes=["a"], reason="leaked", dry_run=True),
    "redaction-ranges": lambda store, _: store.redaction_ranges([""]),
    "remotes": lambda store, _: store.fetch("origin"),
    "remotes-http": lambda store, _: store.advertise(),
    "revert": lambda store, _: store.revert(source="billing-note-8842", dry_run=True),
    "search": lambda store, _: store.search(("memories",)),
    "search-valid-at": lambda store, _: store.search(("memories",), valid_at=0),
    "valid-at": lambda store, _: store.memory_valid_at(0),
    "write-branch": lambda store, _: store.write([{"id": "a", "content": 1}], message="w", branch="side"),
    "write-erase": lambda store, _: store.write(deletes=["a"], message="w", erase_deleted="leaked"),
    "write-orphan": lambda store, _: store.write(deletes=["a"], message="w", orphan=True),
    "gc-plain": lambda store, _: store.gc(dry_run=True, plain_vacuum=True),
    "write-if-absent": lambda store, _: store.write([{"id": "a", "content": 1, "if_absent": True}], message="w"),
}


def _real_features() -> tuple[str, ...]:
    """What the real ``mnem`` lists (its ``--version --json``)."""
    with mnem_bridge.Mnem(MNEM) as client:
        return client.binary.features


def test_every_row_is_a_feature_the_real_mnem_lists_and_has_a_call_here() -> None:
    assert set(NEEDS) <= set(_real_features())
    assert set(CALLS) == set(NEEDS)


@pytest.mark.parametrize("feature", sorted(NEEDS))
def test_a_mnem_without_a_feature_is_refused_with_the_tables_message(tmp_path: Path, feature: str) -> None:
    ran = tmp_path / "ran"
    others = [name for name in _real_features() if name != feature]
    binary = fake_mnem(tmp_path, f"open({str(ran)!r}, 'w').write('ran')\nprint('[]')", features=others)
    (tmp_path / "store" / ".mnem").mkdir(parents=True)
    clock = (lambda: 1_000) if feature == "now" else None
    with (mnem_bridge.Mnem(binary, clock=clock) as client, mnem_bridge.open(tmp_path / "store", client=client) as store,
          pytest.raises(mnem_bridge.ContractError) as caught):
        CALLS[feature](store, tmp_path)
    assert caught.value.message == (f"the `mnem` at {binary} {NEEDS[feature]} (it does not list the `{feature}` "
                                    f"feature); {FIX}")
    assert caught.value.code == "store_io" and caught.value.command is None
    assert not ran.exists()
