"""Bisect: the client-side predicate search, and the one-invocation helper form."""

from __future__ import annotations

import math
from typing import Any

import pytest

from mnem_bridge import InvalidRefError, Store, SubprocessRunner, agents
from mnem_bridge.bisect import first_commit_where


def _history(store: Store, values: list[str]) -> list[str]:
    """One commit per value of ``plan`` (the first also sets ``account``); returns the ids."""
    ids = [agents.remember_many(store, [{"id": "account", "content": "acme"}, {"id": "plan", "content": values[0]}],
                                time_ms=1000)]
    ids += [agents.remember(store, "plan", value, time_ms=1000 * (i + 2)) for i, value in enumerate(values[1:])]
    return ids


def is_pro(memory: dict[str, Any]) -> bool:
    return "plan" in memory and memory["plan"].content == "pro"


@pytest.mark.parametrize("boundary", range(1, 16))
def test_the_search_finds_every_boundary_in_log_probes(boundary: int) -> None:
    chain = [f"c{i}" for i in range(16)]
    probes: list[str] = []

    def holds(commit: str) -> bool:
        probes.append(commit)
        return chain.index(commit) >= boundary

    assert first_commit_where(chain, "c0", holds) == f"c{boundary}"
    assert len(probes) <= 2 + math.ceil(math.log2(15))


@pytest.mark.parametrize(
    ("good", "holds", "message"),
    [
        ("c3", lambda c: True, "good and bad are the same commit"),
        ("elsewhere", lambda c: True, "elsewhere is not on c3's first-parent history"),
        ("c0", lambda c: True, "the predicate is already true at good (c0)"),
        ("c0", lambda c: False, "the predicate is false at bad (c3)"),
    ],
)
def test_the_search_checks_upstreams_preconditions(good: str, holds: Any, message: str) -> None:
    with pytest.raises(InvalidRefError) as caught:
        first_commit_where(["c0", "c1", "c2", "c3"], good, holds)
    assert str(caught.value) == f"invalid ref: bisect: {message}"


def test_a_predicate_bisect_reads_few_states(bstore: Store, mocker: Any) -> None:
    ids = _history(bstore, ["enterprise", "enterprise", "enterprise", "pro", "pro", "pro", "pro", "pro"])
    run = mocker.spy(SubprocessRunner, "run")
    assert bstore.bisect(is_pro) == ids[3]
    assert run.call_count <= 1 + 2 + math.ceil(math.log2(7))  # one log, two preconditions, the search
    assert bstore.bisect(is_pro, good=ids[2], bad=ids[4]) == ids[3]
    with pytest.raises(InvalidRefError, match="already true at good"):
        bstore.bisect(is_pro, good=ids[4])
    with pytest.raises(InvalidRefError, match="false at bad"):
        bstore.bisect(is_pro, bad=ids[2])
    with pytest.raises(ZeroDivisionError):
        bstore.bisect(lambda memory: 1 / 0 > 0)  # the predicate's own errors propagate unchanged


def test_a_bad_commit_off_heads_history(bstore: Store) -> None:
    ids = _history(bstore, ["enterprise", "enterprise"])
    bstore.checkout(create="side", target=ids[0])
    side = [agents.remember(bstore, "plan", value, time_ms=9000 + i) for i, value in enumerate(["x", "pro", "pro"])]
    bstore.checkout("main")
    assert bstore.bisect(is_pro, bad="side") == side[1]
    with pytest.raises(InvalidRefError, match="is not on"):
        bstore.bisect(is_pro, good=ids[1], bad="side")


def test_bisect_needs_a_commit(bstore: Store) -> None:
    with pytest.raises(InvalidRefError, match="cannot bisect: HEAD has no commit"):
        bstore.bisect(is_pro)


def test_the_helper_form_and_its_blame(bstore: Store) -> None:
    ids = _history(bstore, ["enterprise", "enterprise", "pro", "pro"])
    agents.forget(bstore, "account")
    commit, blame = bstore.bisect_explain("plan", equals="pro")
    assert commit == ids[2] and blame is not None and blame.commit == ids[2] and blame.node.content == "pro"
    assert bstore.bisect(node="account", absent=True) == bstore.log(limit=1)[0].id
    assert bstore.bisect_explain("account", absent=True)[1] is None
    assert bstore.bisect(node="plan", equals="pro", good=ids[1], bad=ids[3]) == ids[2]


def test_both_forms_fail_with_the_same_messages(bstore: Store) -> None:
    ids = _history(bstore, ["enterprise", "pro", "pro"])
    bstore.checkout(create="side", target=ids[0])
    agents.remember(bstore, "plan", "side", time_ms=9000)
    bstore.checkout("main")
    cases = [
        {"good": ids[2]},  # good is bad
        {"good": ids[1]},  # already true at good
        {"bad": ids[0]},  # bad is the root, where good defaults to
        {"good": "side"},  # good is off bad's first-parent history
    ]
    for where in cases:
        with pytest.raises(InvalidRefError) as helper:
            bstore.bisect(node="plan", equals="pro", **where)
        with pytest.raises(InvalidRefError) as local:
            bstore.bisect(is_pro, **where)
        assert str(local.value) == str(helper.value)
    with pytest.raises(InvalidRefError) as helper:
        bstore.bisect(node="plan", equals="gold")
    with pytest.raises(InvalidRefError) as local:
        bstore.bisect(lambda memory: memory["plan"].content == "gold")
    assert str(local.value) == str(helper.value)
