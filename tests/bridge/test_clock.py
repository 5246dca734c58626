"""``Mnem(clock=...)``: the caller's clock sent as ``--now`` with every call, on the real binary.

A test (or a replay) that keeps its own time moves it by hand: commits and
TTL leases follow it exactly, in a worker and one-shot alike, and the
echoed command replays at the same time.  A clock that answers something
other than Unix milliseconds, or a binary that cannot take ``--now``, is
refused before anything runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import MNEM
from manual_clock import START_MS as NOW
from manual_clock import ManualClock

import mnem_bridge
from mnem_bridge import ContractError, Mnem, UsageError

from .support import fake_mnem, paste

HOUR = 3_600_000


@pytest.mark.parametrize("mode", ["worker", "oneshot"])
def test_commits_and_leases_follow_the_clock_call_by_call(tmp_path: Path, mode: str) -> None:
    clock = ManualClock()
    with Mnem(MNEM, mode=mode, clock=clock) as client, mnem_bridge.init(tmp_path / "s", client=client) as store:
        commit, _ = store.write([{"id": "brief", "content": 1, "ttl": HOUR}, {"id": "kept", "content": 2}],
                                message="w")
        assert commit is not None and commit.time == NOW
        assert f"--now={NOW}" in (store.last_command or "")
        clock.ms = NOW + HOUR - 1
        assert store.node_ids(live=True) == ["brief", "kept"]
        assert store.touch(["brief"]) == {"brief": NOW + 2 * HOUR - 1}
        clock.ms = NOW + 2 * HOUR - 1
        assert store.node_ids(live=True) == ["kept"]
        gone, removed = store.expire(author="sweeper")
        assert removed == ["brief"] and gone is not None and gone.time == NOW + 2 * HOUR - 1


def test_an_echoed_call_replays_at_the_clock_s_time(tmp_path: Path) -> None:
    with Mnem(MNEM, clock=ManualClock()) as client, mnem_bridge.init(tmp_path / "s", client=client) as store:
        store.write([{"id": "a", "content": 1}], message="w")
        line = store.last_command
    assert line is not None
    replay = tmp_path / "replay"
    with Mnem(MNEM) as client:
        mnem_bridge.init(replay, client=client).close()
    assert paste(line.replace(str(tmp_path / "s"), str(replay)), tmp_path)["commit"]["time"] == NOW


@pytest.mark.parametrize("answer", [NOW / 1000, float(NOW), True, -1, 2**62 + 1, str(NOW), None])
def test_a_clock_that_does_not_answer_unix_ms_is_refused_before_anything_runs(tmp_path: Path, answer: object) -> None:
    with Mnem(MNEM) as plain:
        mnem_bridge.init(tmp_path / "s", client=plain).close()
    clock = ManualClock()
    clock.ms = answer  # a clock that answers the wrong thing
    with Mnem(MNEM, clock=clock) as client:
        store = mnem_bridge.Store(tmp_path / "s", client=client)
        with pytest.raises(UsageError, match=r"clock must return the time in Unix milliseconds") as caught:
            store.write([{"id": "a", "content": 1}], message="w")
        assert caught.value.command is None and caught.value.code == "usage"
    with Mnem(MNEM) as plain:
        assert mnem_bridge.Store(tmp_path / "s", client=plain).log() == []


def test_a_binary_without_the_now_feature_is_refused_only_when_a_clock_is_given(tmp_path: Path) -> None:
    binary = fake_mnem(tmp_path, "print(json.dumps(sys.argv[1:]))")
    with Mnem(binary, mode="oneshot", clock=ManualClock()) as client:
        with pytest.raises(ContractError, match="does not take --now") as caught:
            client.call(tmp_path, "log")
        assert caught.value.code == "store_io"
    with Mnem(binary, mode="oneshot") as client:
        assert client.call(tmp_path, "log") == ["-C", str(tmp_path), "--json", "log"]
    described = fake_mnem(tmp_path, "print(json.dumps(sys.argv[1:]))", name="mnem-now", features=("now",))
    with Mnem(described, mode="oneshot", clock=ManualClock()) as client:
        assert client.call(tmp_path, "log") == ["-C", str(tmp_path), "--json", f"--now={NOW}", "log"]
