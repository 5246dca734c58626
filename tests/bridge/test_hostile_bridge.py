"""Hostile input through the real bridge: a round trip or a typed error, never a traceback; errors change nothing.

``tests/store/test_hostile.py`` throws hostile argv at the binary's
``invoke``.  This suite goes one layer up, through ``mnem_bridge.Store`` on
the real ``mnem``, because the bridge has failure modes of its own before the
binary sees anything: encoding content as JSON, putting text on an argv
(where the OS refuses NUL and lone surrogates), the worker's JSON-lines
protocol, the OS's limit on one argument.  Each example runs one operation
with hostile node ids, branch names, revisions, messages and contents, and
requires exactly one of:

* success, and then what was written reads back exactly (``working_node``,
  ``branches``, ``log``), type for type (``1`` is not ``1.0`` or ``True``);
* a ``MnemError`` whose ``code`` is in the contract's taxonomy and whose
  message is clear (non-empty, no traceback, no "internal error"), with the
  store's fingerprint (HEAD, config, every row) unchanged.

And never a file named by the input: no shell runs anywhere, so
``$(touch pwned)`` creates nothing, in the store's directory or the cwd.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from conftest import MNEM, run_mnem, store_fingerprint, strict_equal
from damaged_exports import damaged_export
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import mnem_bridge
from mnem_bridge import InvalidRefError, Mnem, MnemError, Provenance, Store, UsageError, agents

#: The contract's error codes (docs/cli-json.md); every error the bridge raises carries one.
CODES = frozenset({"not_found", "invalid_ref", "conflict", "corrupt_store", "format_version", "store_exists",
                   "no_store", "store_io", "busy", "usage"})
#: What the shell-metacharacter inputs would create if anything ever ran them through a shell.
PWNED = "pwned"
SHELL = ["$(touch pwned)", "`touch pwned`", "; touch pwned", "| touch pwned", "&& touch pwned", "'; touch pwned; '",
         '"$(touch pwned)"', "x\ntouch pwned", "$((1+1))", "${HOME}", "*", "~"]
ODD = ["", " ", "-", "--", "-x", "--json", "-C/tmp", "--store=/", "..", "a..b", "../../x", "/etc/passwd", ":", "a:b",
       "a=b", "HEAD", "main", "side", "'\"", "\\", "a\x00b", "\x00", "\x1b[31m", "\r\n", "\t", "\x7f", "é\u0301",
       "\u202e", "\ufeff", "\ud800", "\udcff", "x\udc80y", "0000", "abcd", "ABCD", "nan", "NaN", "null", "{}", "[]",
       "feature/x", "a-b_c.d", "日本", "x1"]  # the last four are legal branch names: success must round-trip too
#: Every code point, lone surrogates included (hypothesis's default text leaves them out).
ANY_CHAR = st.characters(exclude_categories=())
hostile_text = st.one_of(st.sampled_from(SHELL + ODD), st.text(ANY_CHAR, max_size=12), st.text(max_size=12))
#: Branch names: hostile ones, and plausible ones of which most are legal (so creation succeeds often enough to check).
branch_name = st.one_of(hostile_text, st.from_regex(r"[a-z][a-z0-9/_.-]{0,8}[a-z0-9]", fullmatch=True))


def nested(depth: int, leaf: Any = 0) -> Any:
    """``leaf`` inside ``depth`` lists, built iteratively (a 100 000-deep value must not need recursion to make)."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


class Unserialisable:
    """Not JSON: neither upstream's SDK nor the bridge can store it."""


json_scalar = (st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
               | st.floats(allow_nan=False, allow_infinity=False) | st.text(ANY_CHAR, max_size=8))
json_value = st.recursive(
    json_scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(ANY_CHAR, max_size=4), inner, max_size=3),
    max_leaves=8,
)
hostile_content = st.one_of(
    json_value,
    st.sampled_from([math.nan, math.inf, -math.inf, [1.5, math.nan], {"a": -math.inf}, b"bytes", {1: "int key"},
                     {None: 1}, {"a", "set"}, Unserialisable(), "\ud800", {"\udcff": 1}, "a\x00b", "$(touch pwned)"]),
    st.sampled_from([1, 64, 126, 127, 128, 129, 1000, 100_000]).map(nested),
)




def check_error(exc: MnemError) -> None:
    """A typed error a caller can act on: a taxonomy code and a clear message."""
    message = str(exc)
    assert exc.code in CODES, repr(exc)
    assert message.strip(), repr(exc)
    assert "Traceback" not in message and b"Traceback" not in exc.stderr, repr(exc)
    assert "internal error" not in message, repr(exc)


def files_outside_store(root: Path) -> set[Path]:
    """Every path under ``root`` except the store's own ``.mnem`` files."""
    return {p for p in root.rglob("*") if ".mnem" not in p.relative_to(root).parts}


#: An operation: given the store and the hypothesis data, returns (action, check of its success).
Operation = Callable[[Store, st.DataObject], tuple[Callable[[], Any], Callable[[Any], None]]]


def no_check(_: Any) -> None:
    """Reads: success is enough (the shapes are the models' own parsing)."""


def committed(store: Store, node_id: str) -> Any:
    """The node as HEAD's commit holds it.

    Earlier examples may have staged the same id, and staging wins in ``working_node``.
    """
    timed = store.node_times([node_id]).get(node_id)
    return None if timed is None else timed.node


def op_remember(store: Store, data: st.DataObject) -> tuple[Callable[[], Any], Callable[[Any], None]]:
    node_id, content = data.draw(hostile_text), data.draw(hostile_content)
    prov = {name: data.draw(st.none() | hostile_text) for name in ("source", "step", "note")}

    def check(_: Any) -> None:
        node = committed(store, node_id)
        assert node is not None and strict_equal(node.content, content), (node_id, content, node)
        assert node.provenance == Provenance(agent_step=prov["step"], source=prov["source"], note=prov["note"])

    return lambda: agents.remember(store, node_id, content, **prov), check


item = st.one_of(
    st.fixed_dictionaries({"id": hostile_text, "content": hostile_content}, optional={"source": hostile_text}),
    st.sampled_from([{"content": 1}, {"id": "x"}, {"id": 1, "content": 2}, {"id": None, "content": 2}, "not a dict",
                     None, 42, {"id": "x", "content": 1, "step": 7}]),
)


def op_remember_many(store: Store, data: st.DataObject) -> tuple[Callable[[], Any], Callable[[Any], None]]:
    items = data.draw(st.lists(item, max_size=3))

    def check(_: Any) -> None:
        last = {entry["id"]: entry for entry in items}  # the last put of an id wins
        for node_id, entry in last.items():
            node = committed(store, node_id)
            assert node is not None and strict_equal(node.content, entry["content"]), (entry, node)
            assert node.provenance.source == entry.get("source")

    return lambda: agents.remember_many(store, items), check


def op_forget(store: Store, data: st.DataObject) -> tuple[Callable[[], Any], Callable[[Any], None]]:
    node_id = data.draw(st.sampled_from(["plan"]) | hostile_text)

    def check(_: Any) -> None:
        assert committed(store, node_id) is None

    return lambda: agents.forget(store, node_id), check


def op_add(store: Store, data: st.DataObject) -> tuple[Callable[[], Any], Callable[[Any], None]]:
    node_id, content = data.draw(hostile_text), data.draw(hostile_content)
    kind = data.draw(st.sampled_from(["note", "claim"]) | st.sampled_from(["fact", ""]))
    event_time = data.draw(st.none() | st.integers(-(2**63), 2**63 - 1) | st.sampled_from([2**63, -(2**63) - 1, 2**64]))
    tool_call = data.draw(st.none() | hostile_text)

    def check(staged_object: Any) -> None:
        node = store.working_node(node_id)
        assert node is not None and strict_equal(node.content, content), (node_id, content, node)
        assert (node.content_kind, node.event_time, node.provenance.tool_call) == (kind, event_time, tool_call)
        assert (node_id, staged_object) in store.staged()

    return (lambda: store.add(node_id, content, content_kind=kind, event_time=event_time,  # type: ignore[arg-type]
                              provenance=Provenance(tool_call=tool_call))), check


def op_commit(store: Store, data: st.DataObject) -> tuple[Callable[[], Any], Callable[[Any], None]]:
    message, author = data.draw(hostile_text), data.draw(hostile_text)
    when = data.draw(st.integers(-(2**63), 2**64 - 1) | st.sampled_from([2**64, -(2**63) - 1, 10**30]))
    if data.draw(st.booleans(), label="stage something first"):
        store.add("to-commit", data.draw(st.integers(-(2**63), 2**64 - 1)))  # what a store keeps exactly

    def check(commit_id: Any) -> None:
        assert store.head_commit() == commit_id
        [made] = [c for c in store.log() if c.id == commit_id]  # log orders by time, and ours is hostile
        assert (made.message, made.author, made.time) == (message, author, when)

    return lambda: store.commit(message, author=author, time_ms=when), check


def op_branch(store: Store, data: st.DataObject) -> tuple[Callable[[], Any], Callable[[Any], None]]:
    name, start = data.draw(branch_name), data.draw(st.sampled_from([None, "main"]) | hostile_text)

    def check(_: Any) -> None:
        assert name in dict(store.branches())

    return lambda: store.new_branch(name, start=start), check


def op_delete_branch(store: Store, data: st.DataObject) -> tuple[Callable[[], Any], Callable[[Any], None]]:
    name = data.draw(branch_name)

    def check(existed: Any) -> None:
        assert isinstance(existed, bool) and name not in dict(store.branches())

    return lambda: store.delete_branch(name), check


def op_checkout(store: Store, data: st.DataObject) -> tuple[Callable[[], Any], Callable[[Any], None]]:
    target = data.draw(branch_name)

    def check(_: Any) -> None:
        head = store.head()
        assert head == f"ref: {target}" or head == store.resolve(target), (target, head)
        store.checkout("main")  # back, so later examples can write

    return lambda: store.checkout(target), check


def op_read(store: Store, data: st.DataObject) -> tuple[Callable[[], Any], Callable[[Any], None]]:
    text, other = data.draw(hostile_text), data.draw(st.none() | hostile_text)
    reads: dict[str, Callable[[], Any]] = {
        "working_node": lambda: store.working_node(text),
        "resolve": lambda: store.resolve(text),
        "state_at": lambda: store.state_at(text),
        "blame": lambda: store.blame(text, at=other),
        "diff": lambda: store.diff(text, other),
        "changed_by": lambda: store.changed_by(text),
        "node_times": lambda: store.node_times([text], at=other),
        "log": lambda: store.log(limit=data.draw(st.integers(-5, 5))),
        "bisect": lambda: store.bisect_explain(text, equals=data.draw(hostile_content), good=other),
        "rm": lambda: store.rm(text),
        "unstage": lambda: store.unstage(text),
        "merge": lambda: store.merge(text, resolutions={other or "plan": "ours"}, message=other),
    }
    return reads[data.draw(st.sampled_from(sorted(reads)))], no_check


OPERATIONS: list[Operation] = [op_remember, op_remember_many, op_forget, op_add, op_commit, op_branch,
                               op_delete_branch, op_checkout, op_read]


def seeded(root: Path, mode: str) -> Store:
    """A store with a commit on ``main`` (node ``plan``) and a branch ``side``."""
    store = mnem_bridge.init(root, client=Mnem(MNEM, mode=mode))
    agents.remember(store, "plan", "pro", time_ms=1)
    store.new_branch("side")
    return store


def one_hostile_call(store: Store, data: st.DataObject) -> None:
    """Draw an operation and its hostile arguments, run it, and hold it to the module's property."""
    operation = data.draw(st.sampled_from(OPERATIONS))
    action, check = operation(store, data)
    root = store.root
    before, files = store_fingerprint(root), files_outside_store(root.parent)
    try:
        result = action()
    except MnemError as exc:
        event(f"{operation.__name__}: {exc.code}")  # --hypothesis-show-statistics: both outcomes are exercised
        check_error(exc)
        assert store_fingerprint(root) == before, f"{operation.__name__} failed with {exc!r} and changed the store"
    else:
        event(f"{operation.__name__}: ok")
        check(result)
    assert files_outside_store(root.parent) == files
    assert not any(PWNED in p.name for p in Path.cwd().rglob("*"))


@pytest.fixture
def worker_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """A seeded store on the default runner (a worker), with the cwd where a stray ``touch pwned`` would land."""
    monkeypatch.chdir(tmp_path)
    with seeded(tmp_path / "store", "worker") as store:
        yield store


@pytest.fixture
def oneshot_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """The same on one process per call, where the OS itself sees every argument."""
    monkeypatch.chdir(tmp_path)
    with seeded(tmp_path / "store", "oneshot") as store:
        yield store


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hostile_calls_through_a_worker(worker_store: Store, data: st.DataObject) -> None:
    one_hostile_call(worker_store, data)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hostile_calls_one_process_each(oneshot_store: Store, data: st.DataObject) -> None:
    """Fewer examples: each call starts a Python (tens of ms)."""
    one_hostile_call(oneshot_store, data)


@pytest.mark.parametrize("depth", [126, 127])
@pytest.mark.parametrize("how", ["remember", "add"])
def test_nesting_up_to_upstreams_limit_round_trips(bstore: Store, depth: int, how: str) -> None:
    """serde_json (upstream) parses 127 levels of nesting and refuses the 128th; both write paths agree."""
    value = nested(depth - 2, {"leaf": [1.5, True]})  # the leaf's dict and list are the last two levels
    if how == "remember":
        agents.remember(bstore, "deep", value)
    else:
        bstore.add("deep", value)
    node = bstore.working_node("deep")
    assert node is not None and strict_equal(node.content, value)


@pytest.mark.parametrize("depth", [128, 129, 1000, 100_000])
@pytest.mark.parametrize("how", ["remember", "add", "remember_many"])
def test_nesting_past_upstreams_limit_is_a_usage_error(bstore: Store, depth: int, how: str) -> None:
    before = store_fingerprint(bstore.root)
    with pytest.raises(UsageError) as caught:
        if how == "remember":
            agents.remember(bstore, "deep", nested(depth))
        elif how == "add":
            bstore.add("deep", nested(depth))
        else:
            agents.remember_many(bstore, [{"id": "ok", "content": 1}, {"id": "deep", "content": nested(depth)}])
    check_error(caught.value)
    assert "nested" in str(caught.value) or "deep" in str(caught.value)
    assert store_fingerprint(bstore.root) == before


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, {"seats": [1, math.nan]}],
                         ids=["nan", "inf", "-inf", "nested-nan"])
@pytest.mark.parametrize("mode", ["worker", "oneshot"])
def test_nan_and_infinity_are_usage_errors(tmp_path: Path, value: Any, mode: str) -> None:
    """Upstream's JSON has no NaN or Infinity; the bridge refuses them before running anything."""
    with mnem_bridge.init(tmp_path / "s", client=Mnem(MNEM, mode=mode)) as store:
        before = store_fingerprint(store.root)
        for write in (lambda: agents.remember(store, "x", value), lambda: store.add("x", value),
                      lambda: store.bisect_explain("x", equals=value)):
            with pytest.raises(UsageError, match="JSON") as caught:
                write()
            check_error(caught.value)
        assert store_fingerprint(store.root) == before


@pytest.mark.parametrize("mode", ["worker", "oneshot"])
def test_huge_values_round_trip_or_are_refused_clearly(tmp_path: Path, mode: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Several MB of content, a long id, a long message: stored exactly (stdin has no size limit) or a clear error.

    ``remember`` sends content on stdin, so any size works in both modes.
    ``add`` puts content on the command line; in one-shot mode the OS caps
    one argument at 128 KiB, and that is a usage error saying so, not a
    missing binary.  What ``mnem`` itself allows one call is lifted here
    (``MNEM_MAX_*=0``): the test is about the way there.
    """
    for name in ("MNEM_MAX_ID_BYTES", "MNEM_MAX_VALUE_BYTES"):
        monkeypatch.setenv(name, "0")
    big = "x" * (4 << 20) + "é"
    long_id = "k" * 200_000
    with mnem_bridge.init(tmp_path / "s", client=Mnem(MNEM, mode=mode)) as store:
        agents.remember(store, "big", {"text": big, "list": list(range(50_000))})
        assert store.working_node("big").content == {"text": big, "list": list(range(50_000))}  # type: ignore[union-attr]
        for action in (lambda: store.add("big2", big), lambda: agents.remember(store, long_id, 1),
                       lambda: store.commit("m" * 300_000)):
            before = store_fingerprint(store.root)
            try:
                action()
            except MnemError as exc:
                assert mode == "oneshot", exc  # a worker carries any size
                check_error(exc)
                assert isinstance(exc, UsageError) and "too long" in str(exc)
                assert store_fingerprint(store.root) == before
        if mode == "worker":
            assert store.working_node("big2").content == big  # type: ignore[union-attr]
            assert store.working_node(long_id).content == 1  # type: ignore[union-attr]
            assert store.log(limit=1)[0].message == "m" * 300_000


def test_a_store_at_a_path_that_is_not_utf8(tmp_path: Path) -> None:
    """A directory name is bytes: one that is not UTF-8 works in both modes (the worker protocol is JSON text)."""
    root = tmp_path / Path(b"st\xff\xfe".decode("utf-8", "surrogateescape"))
    for mode in ("worker", "oneshot"):
        with mnem_bridge.init(root / mode, client=Mnem(MNEM, mode=mode)) as store:
            agents.remember(store, "plan", "pro")
            assert store.working_node("plan").content == "pro"  # type: ignore[union-attr]
            assert store.root == root / mode and len(store.log()) == 1


# ----------------------------------------------------------------- revisions: unknown, short, ambiguous


@pytest.fixture(scope="module")
def ambiguous(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, list[str], str]]:
    """A store whose history holds two commits sharing a 4-hex prefix, the commit ids, and that prefix.

    Commit ids are hashes, so a shared 4-hex prefix is made by committing
    until one appears (a birthday search over 65 536 prefixes: a few hundred
    commits).  Times are fixed, so the history, and the prefix, are the same
    on every run.
    """
    with Mnem(MNEM) as client, mnem_bridge.init(tmp_path_factory.mktemp("ambiguous") / "store", client=client) as store:
        seen: dict[str, str] = {}
        for n in range(5000):
            commit = agents.remember(store, "counter", n, time_ms=1_000 + n)
            prefix = commit[:4]
            if prefix in seen:
                yield store, [c.id for c in store.log()], prefix
                return
            seen[prefix] = commit
        raise AssertionError("no shared 4-hex prefix in 5000 commits")


def named(spec: str, commits: list[str]) -> str | None:
    """The commit ``spec`` names in a linear history (``commits``, newest first, main's tip first), or None."""
    ancestry = re.fullmatch(r"(.+?)((?:[~^][0-9]*)+)", spec)
    base, steps = (ancestry.group(1), ancestry.group(2)) if ancestry else (spec, "")
    matches = [c for c in commits if c.startswith(base)]
    at = (0 if base in ("main", "HEAD") else
          commits.index(matches[0]) if re.fullmatch(r"[0-9a-f]{4,64}", base) and len(matches) == 1 else None)
    for op, count in re.findall(r"([~^])([0-9]*)", steps):
        n = int(count) if count else 1
        if at is None or (op == "^" and n > 1):
            return None
        at += n if op == "~" else min(n, 1)
        if at >= len(commits):
            return None
    return None if at is None else commits[at]


revision = st.one_of(
    st.sampled_from(["main", "MAIN", "HEAD", "", "-", "--", "0000", "ffff", "abc", "a" * 64, "g" * 64, "HEAD~1",
                     "main^", "main~2^", "HEAD^0", "HEAD^2", "main~9999", "~1", "HEAD~x", "head~1"]),
    hostile_text, st.text("0123456789abcdefABCDEF", max_size=66))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_revisions_resolve_exactly_when_they_name_one_commit(ambiguous: tuple[Store, list[str], str],
                                                             data: st.DataObject) -> None:
    """The oracle: a branch name, ``HEAD``, or 4 to 64 lowercase hex that prefix exactly one commit, then any
    ``~N`` / ``^N`` steps along the (linear) history that stay inside it.

    Anything else is invalid_ref.
    """
    store, commits, shared = ambiguous
    spec = data.draw(st.one_of(
        st.just(shared), st.sampled_from(commits).flatmap(lambda c: st.integers(1, 64).map(lambda n: c[:n])),
        st.sampled_from(commits).map(str.upper), revision))
    expected = named(spec, commits)
    read = data.draw(st.sampled_from(["resolve", "state_at", "changed_by", "blame", "node_times"]))
    before = store_fingerprint(store.root)
    try:
        result = {"resolve": lambda: store.resolve(spec), "state_at": lambda: store.state_at(spec),
                  "changed_by": lambda: store.changed_by(spec), "blame": lambda: store.blame("counter", at=spec),
                  "node_times": lambda: store.node_times(["counter"], at=spec)}[read]()
    except MnemError as exc:
        check_error(exc)
        assert expected is None, f"{spec!r} names {expected} but {read} failed: {exc!r}"
        assert isinstance(exc, (InvalidRefError, UsageError)), repr(exc)
        if spec == shared and read == "resolve":
            assert "ambiguous" in str(exc)
    else:
        assert expected is not None, f"{read}({spec!r}) succeeded: {result!r}"
        if read == "resolve":
            assert result == expected
        if read == "state_at":
            assert result["counter"].content == len(commits) - 1 - commits.index(expected)
    assert store_fingerprint(store.root) == before


# ----------------------------------------------------------------- both runners give the same answer


@pytest.fixture(scope="module")
def both_runners(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, Store]]:
    """One seeded store, open twice: through a worker and one process per call (the calls below change nothing)."""
    with (seeded(tmp_path_factory.mktemp("agree") / "store", "worker") as worker,
          Store(worker.root, client=Mnem(MNEM, mode="oneshot")) as oneshot):
        yield worker, oneshot


@settings(max_examples=30, deadline=None)
@given(text=hostile_text, other=st.none() | hostile_text, read=st.sampled_from(
    ["working_node", "resolve", "state_at", "blame", "node_times", "unstage", "changed_by", "diff"]))
def test_worker_and_oneshot_agree(both_runners: tuple[Store, Store], text: str, other: str | None, read: str) -> None:
    """The worker is an optimisation: any input gets the same result, or the same error, as a one-shot call."""
    outcomes = []
    for store in both_runners:
        call = {"working_node": partial(store.working_node, text), "resolve": partial(store.resolve, text),
                "state_at": partial(store.state_at, text), "blame": partial(store.blame, text, at=other),
                "node_times": partial(store.node_times, [text], at=other),
                "unstage": partial(store.unstage, text), "changed_by": partial(store.changed_by, text),
                "diff": partial(store.diff, text, other)}[read]
        try:
            outcomes.append(("ok", call()))
        except MnemError as exc:
            check_error(exc)
            outcomes.append((exc.code, str(exc)))
    assert outcomes[0] == outcomes[1], (read, text, other)


# ----------------------------------------------------------------- Store.import_ of a damaged export


@pytest.fixture(scope="module")
def good_export(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Mnem, dict[str, Any]]]:
    """A shared worker client, and the export of a store with branches, a merge and a deletion."""
    client = Mnem(MNEM)
    with seeded(tmp_path_factory.mktemp("export") / "store", "worker") as first:
        store = Store(first.root, client=client)
    agents.remember_many(store, [{"id": "seats", "content": [40, {"tier": "pro"}]}, {"id": "gone", "content": 1}],
                         time_ms=2)
    with store.branch("hypothesis"):
        agents.remember(store, "branch-only", {"x": None}, time_ms=3)
    agents.forget(store, "gone", time_ms=4)
    store.merge("hypothesis", time_ms=5)
    yield client, store.export()
    client.close()


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_import_of_a_damaged_export_is_whole_or_a_typed_refusal(good_export: tuple[Mnem, dict[str, Any]],
                                                                 tmp_path_factory: pytest.TempPathFactory,
                                                                 data: st.DataObject) -> None:
    """As text or as a mapping: a store that verifies and holds exactly the export, or a MnemError leaving nothing."""
    client, good = good_export
    raw = data.draw(damaged_export(good))
    try:
        given_data: Any = json.loads(raw) if data.draw(st.booleans(), label="as a mapping") else None
    except ValueError:
        given_data = None
    if given_data is None:
        given_data = raw.decode("utf-8", "surrogateescape")  # invalid UTF-8 becomes lone surrogates
    target = tmp_path_factory.mktemp("imported") / "copy"
    try:
        imported = Store.import_(target, given_data, client=client)
    except MnemError as exc:
        event(f"import_: {exc.code}")
        check_error(exc)
        assert not (target / ".mnem").exists() and not target.exists(), repr(exc)
        return
    event("import_: ok")
    assert run_mnem("verify", cwd=target).code == 0
    source = json.loads(raw)
    copy = imported.export()
    assert copy["objects"] == {key.lower(): body for key, body in source["objects"].items()}
    assert copy["refs"] == {name: tip.lower() for name, tip in source["refs"].items()}
