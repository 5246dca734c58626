"""Through the bridge, an integer beyond 64 bits is a ``usage`` error that writes nothing, never a float.

The bridge sends content as JSON: ``orjson`` for plain values (it encodes
integers up to 64 bits), ``json`` for the rest (which writes any integer
whole).  Either way the number reaches ``mnem`` exactly, and ``mnem``
refuses what no store keeps exactly (docs/differences.md, "Exact numbers").
Both encoders and both runners are tried, on both backends.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from conftest import MNEM, new_store, store_fingerprint, strict_equal

import mnem_bridge
from mnem_bridge import Mnem, Store, UsageError, agents


class Big(enum.IntEnum):
    """Not a plain int, so the bridge encodes it with ``json`` rather than ``orjson``."""

    VALUE = 2**64


BEYOND = [2**64, -(2**63) - 1, {"n": [1, 2**70]}, (1, -(10**30)), {"n": -(10**400)}, {"n": Big.VALUE}]
IDS = ["2^64", "-2^63-1", "nested-2^70", "tuple--10^30", "-10^400", "IntEnum-2^64"]


@pytest.fixture(params=["worker", "oneshot"])
def opened(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> Iterator[tuple[Store, Path]]:
    """A store holding ``plan``, on each backend, through each runner; and the folder that addresses it."""
    folder = new_store(tmp_path / "store", backend)
    with mnem_bridge.open(pg_stores.address(folder), client=Mnem(MNEM, mode=request.param)) as store:
        agents.remember(store, "plan", "pro")
        yield store, folder


def writers(store: Store, value: Any) -> list[Callable[[], Any]]:
    return [lambda: agents.remember(store, "n", value), lambda: store.add("n", value),
            lambda: agents.remember_many(store, [{"id": "ok", "content": 1}, {"id": "n", "content": value}]),
            lambda: store.write([{"id": "n", "content": value}], message="x")]


@pytest.mark.parametrize("value", BEYOND, ids=IDS)
def test_an_integer_beyond_64_bits_is_refused_by_every_bridge_writer(opened: tuple[Store, Path], value: Any) -> None:
    store, folder = opened
    before = store_fingerprint(folder)
    for write in writers(store, value):
        with pytest.raises(UsageError, match="outside the range a store keeps exactly") as caught:
            write()
        assert "store it as a string" in str(caught.value) and "Traceback" not in str(caught.value)
        assert store_fingerprint(folder) == before
    assert store.working_node("n") is None


@pytest.mark.parametrize("value", [2**64 - 1, -(2**63), {"n": [2**63, -0.0, 5e-324]}, (1, 2**64 - 1)],
                         ids=["2^64-1", "-2^63", "nested", "tuple"])
def test_the_edges_round_trip_type_for_type(opened: tuple[Store, Path], value: Any) -> None:
    store, _ = opened
    expected = list(value) if isinstance(value, tuple) else value
    agents.remember(store, "n", value)
    stored = store.working_node("n")
    assert stored is not None and strict_equal(stored.content, expected)
    if isinstance(value, dict):
        assert math.copysign(1, stored.content["n"][1]) == -1  # -0.0 keeps its sign
