"""``mnem --now MS``: one invocation's "now" (``mnem_store/clock.py``), on every backend.

A caller with a clock of its own (a test that lets a TTL run out without
waiting, a replay) passes ``--now`` with each invocation: commits made
without ``--time`` are dated by it, still never before a parent.  Leases
follow it too (tests/store/test_leases.py).  A bad value is a ``usage``
error that changes nothing.
"""

from __future__ import annotations

import json

import pytest
from conftest import run_mnem, store_fingerprint

from mnem_store.clock import MAX_NOW_MS

NOW = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def j(*args, cwd, input=None):
    result = run_mnem("--json", *args, cwd=cwd, input=input)
    assert result.code == 0, result.out + result.err
    return result.json


def put(node_id: str) -> str:
    return json.dumps({"put": [{"id": node_id, "content": 1}]})


def test_a_commit_without_time_is_dated_now_and_never_before_its_parent(store):
    assert j("--now", str(NOW), "write", "-m", "w", cwd=store, input=put("a"))["commit"]["time"] == NOW
    j("add", "b", "1", cwd=store)
    assert j(f"--now={NOW + 5}", "commit", "-m", "c", cwd=store)["time"] == NOW + 5
    behind = j(f"--now={NOW - 60_000}", "write", "-m", "w", cwd=store, input=put("c"))["commit"]
    assert behind["time"] == NOW + 5  # a clock behind the parent: the parent's time, as without --now
    explicit = j(f"--now={NOW + 9}", "write", "-m", "w", "--time", str(NOW + 7), cwd=store, input=put("d"))
    assert explicit["commit"]["time"] == NOW + 7  # --time says when this commit was made; it wins

    assert run_mnem("checkout", "-b", "side", cwd=store).code == 0
    j(f"--now={NOW + 10}", "write", "-m", "side", cwd=store, input=put("e"))
    assert run_mnem("checkout", "main", cwd=store).code == 0
    j(f"--now={NOW + 11}", "write", "-m", "main", cwd=store, input=put("f"))
    merged = j(f"--now={NOW + 20}", "merge", "side", cwd=store)
    assert merged["status"] == "merged" and j("log", "-n", "1", cwd=store)[0]["time"] == NOW + 20


@pytest.mark.parametrize("form", [["--now", str(NOW), "--json", "write"], ["--json", f"--now={NOW}", "write"],
                                  ["--json", "write", f"--now={NOW}"], ["--json", "write", "--now", str(NOW)]])
def test_the_option_is_taken_before_or_after_the_subcommand(sqlite_store, form):
    result = run_mnem(*form, "-m", "w", cwd=sqlite_store, input=put("a"))
    assert result.code == 0, result.err
    assert result.json["commit"]["time"] == NOW


@pytest.mark.parametrize("text", ["-1", "1.5", "abc", "", "+5", "1_000", " 5", "\u0661\u0662", str(MAX_NOW_MS + 1)])
def test_a_bad_value_is_a_usage_error_that_changes_nothing(store, text):
    before = store_fingerprint(store)
    result = run_mnem("--json", f"--now={text}", "write", "-m", "w", cwd=store, input=put("a"))
    assert result.code == 2 and result.json["error"]["code"] == "usage"
    assert "--now must be the time in Unix milliseconds" in result.json["error"]["message"]
    assert store_fingerprint(store) == before
    text_mode = run_mnem(f"--now={text}", "ls", cwd=store)
    assert text_mode.code == 2 and text_mode.err.startswith("error: --now must be")


def test_the_ends_of_the_range_are_taken_and_the_longest_lease_still_fits(store):
    assert j("--now=0", "ls", "--live", cwd=store) == []
    longest = 100 * 366 * 24 * 3600 * 1000  # write's limit on a ttl
    j(f"--now={MAX_NOW_MS}", "write", "-m", "w", cwd=store,
      input=json.dumps({"put": [{"id": "a", "content": 1, "ttl": longest}]}))
    assert j(f"--now={MAX_NOW_MS}", "stamps", "--live", cwd=store)["a"]["expires"] == MAX_NOW_MS + longest


def test_listed_in_features():
    assert "now" in run_mnem("--version", "--json").json["features"]
