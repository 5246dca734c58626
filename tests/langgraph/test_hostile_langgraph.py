"""Hostile namespaces, keys and values for ``MnemosyneStore``: an exact round trip or a typed refusal.

A key is a node id here, never a path, so ``("..",)``, ``"../../x"``,
``"/etc/passwd"`` and friends are just text.  Each example runs one
``put`` / ``get`` / ``delete`` / ``search`` / ``list_namespaces`` /
``batch`` with labels and keys drawn from ``:``, ``%`` and its escapes,
``..``, ``/``, a leading ``-``, control characters, NUL, lone surrogates,
empty strings and 100 000-character strings, and values with NaN, deep
nesting, non-string keys and non-JSON types.  A model dict of what has been
put is kept beside the store, and:

* a put of a legitimate namespace and key with a JSON value must succeed,
  and then ``get`` returns the value exactly (``_meta`` stripped) and
  ``search`` / ``list_namespaces`` report the original namespace and key,
  every odd character intact (the model is compared whole each time);
* a refused input raises a ``ValueError``, which ``batch`` documents: an
  ``InvalidNamespaceError`` for a namespace (LangGraph's own class), a
  ``mnem_bridge.UsageError`` for a key or value that cannot be stored
  (code ``usage``); never another exception from deep inside, and the
  store's fingerprint is unchanged;
* no file outside ``.mnem/`` appears, disappears or changes under the test's
  directory (which is also the cwd).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import MNEM, store_fingerprint, strict_equal
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp

import mnem_bridge
from mnem_langgraph import MnemosyneStore

#: The ``store_root`` fixture (tests/langgraph has no conftest.py: see that module).
pytest_plugins = ["langgraph_fixtures"]

ANY_CHAR = st.characters(exclude_categories=())
#: A long label, yet one whose id stays within ``mnem``'s limit (``MNEM_MAX_ID_BYTES``, 1024 bytes) when three of
#: them and a key make one; a longer id is refused (tests/langgraph/test_langgraph_call_limits.py).
LONG = "L" * 200
#: Labels BaseStore and mnem accept, however odd: these must round-trip.
ODD_LABELS = [":", "a:b", "%", "%3A", "%25", "%%3A", "/", "//x", "/etc/passwd", "-x", "--", "~", "*", " ", "\t",
              "\x1b[31m", "\r\n", "\x7f", "日本", "é\u0301", "\u202e", "$(touch pwned)", "`id`", "a=b", LONG]
#: Keys may also hold dots and be empty.
ODD_KEYS = [*ODD_LABELS, "", "..", ".", "../../x", "a.b", "/..", "C:\\x"]
#: Labels and keys no store can take (``.`` and NUL in labels, langgraph's rules; lone surrogates and
#: NUL in keys, mnem's), a wrong type, and the reserved root.
BAD_LABELS = ["", ".", "..", "a.b", "\x00", "a\x00", "\ud800", "x\udcff", 5, None, "langgraph"]
BAD_KEYS = ["\x00", "a\x00b", "\ud800", "x\udcffy"]

legit_text = st.text(ANY_CHAR.filter(lambda c: c not in ".\x00" and not 0xD800 <= ord(c) <= 0xDFFF), max_size=8)
legit_label = st.one_of(st.sampled_from(ODD_LABELS), legit_text.filter(bool))
legit_namespace = st.lists(legit_label, min_size=1, max_size=3).map(tuple).filter(lambda ns: ns[0] != "langgraph")
legit_key = st.one_of(st.sampled_from(ODD_KEYS), legit_text, st.text(max_size=8).filter(lambda k: "\x00" not in k))
any_label = st.one_of(legit_label, st.sampled_from(BAD_LABELS), st.text(ANY_CHAR, max_size=4))
any_namespace = st.lists(any_label, max_size=3).map(tuple)
any_key = st.one_of(legit_key, st.sampled_from(BAD_KEYS), st.text(ANY_CHAR, max_size=4))

json_scalar = (st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
               | st.floats(allow_nan=False, allow_infinity=False) | legit_key)
json_value = st.recursive(json_scalar, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(legit_key.filter(lambda k: k != "_meta"), inner, max_size=3), max_leaves=8)
meta = st.fixed_dictionaries({}, optional={"source": legit_key, "step": legit_key | st.integers(0, 99),
                                           "note": legit_key, "tool_call": st.none()})
legit_value = st.builds(lambda data, provenance: {**data, **({"_meta": provenance} if provenance is not None else {})},
                        st.dictionaries(legit_key.filter(lambda k: k != "_meta"), json_value, max_size=3),
                        st.none() | meta)


def nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


#: Values nothing can store: not JSON, too deep, or a bad ``_meta``.  Each must be refused with UsageError.
BAD_VALUES = [{"v": math.nan}, {"v": [math.inf]}, {"v": -math.inf}, {"v": nested(127)}, {"v": nested(10_000)},
              {"v": {1, 2}}, {"v": b"bytes"}, {1: "int key"}, {"v": {None: 1}}, {"v": datetime(2024, 1, 1)},
              {"v": object()}, {"v": "\ud800"}, {"\udcff": 1}, {"_meta": "not a dict"}, {"_meta": {"sorce": "x"}},
              {"_meta": {"source": 1.5}}, [1, 2], "a string"]
any_value = st.one_of(legit_value, st.sampled_from(BAD_VALUES))




def files_outside_store(root: Path) -> dict[Path, bytes]:
    """Every file under ``root`` (with its bytes) and every directory, except the store's ``.mnem``."""
    return {p: (p.read_bytes() if p.is_file() else b"<dir>") for p in root.rglob("*")
            if ".mnem" not in p.relative_to(root).parts}


@dataclass
class World:
    """The store under test and what it must hold: ``{(namespace, key): value without _meta}``."""

    store: MnemosyneStore
    root: Path
    top: Path
    model: dict[tuple[tuple[str, ...], str], dict[str, Any]] = field(default_factory=dict)

    def check_whole(self) -> None:
        """search and list_namespaces report exactly the model: every namespace and key, character for character."""
        found = {(item.namespace, item.key): item.value for item in self.store.search((), limit=10_000)}
        assert found.keys() == self.model.keys()
        assert all(strict_equal(found[k], self.model[k]) for k in found)
        assert self.store.list_namespaces(limit=10_000) == sorted({ns for ns, _ in self.model})


@pytest.fixture
def world(store_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """A ``MnemosyneStore`` on a fresh store, the cwd in the test's directory."""
    monkeypatch.chdir(tmp_path)
    with MnemosyneStore(store_root, author="tester", mnem=MNEM) as store:
        yield World(store, store_root, tmp_path)


def refused(world: World, exc: Exception, before: Any) -> None:
    """A refusal: the documented classes, a clear message, nothing written."""
    assert isinstance(exc, (InvalidNamespaceError, mnem_bridge.UsageError)), repr(exc)
    assert str(exc).strip() and "Traceback" not in str(exc) and "internal error" not in str(exc), repr(exc)
    assert store_fingerprint(world.root) == before


def stripped(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k != "_meta"}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hostile_puts_gets_deletes_and_listings(world: World, data: st.DataObject) -> None:
    legit = data.draw(st.booleans(), label="legitimate")
    namespace = data.draw(legit_namespace if legit else any_namespace, label="namespace")
    key = data.draw(legit_key if legit else any_key, label="key")
    action = data.draw(st.sampled_from(["put", "put", "get", "delete", "search", "batch"]), label="action")
    value = data.draw(legit_value if legit else any_value, label="value")
    before, files = store_fingerprint(world.root), files_outside_store(world.top)
    store = world.store
    try:
        if action == "put":
            store.put(namespace, key, value)
        elif action == "get":
            item = store.get(namespace, key)
            expected = world.model.get((namespace, key))
            assert (item is None) == (expected is None)
            if item is not None:
                assert (item.namespace, item.key) == (namespace, key) and strict_equal(item.value, expected)
        elif action == "delete":
            store.delete(namespace, key)
        elif action == "search":
            hits = store.search(namespace, limit=10_000)
            expected_hits = sorted(k for k in world.model if k[0][: len(namespace)] == namespace)
            assert [(hit.namespace, hit.key) for hit in hits] == expected_hits
        else:  # one batch: a get, a put and a search together; all or nothing
            store.batch([GetOp(namespace, key), PutOp(namespace, key, value), SearchOp(namespace)])
    except (ValueError, mnem_bridge.MnemError) as exc:
        assert not legit or action not in ("put", "batch", "get", "delete"), f"{action} refused legit input: {exc!r}"
        event(f"{action} refused: {type(exc).__name__}")
        refused(world, exc, before)
    else:
        event(f"{action}: ok")
        if action in ("put", "batch"):
            world.model[(namespace, key)] = stripped(value)
            item = store.get(namespace, key)
            assert item is not None and (item.namespace, item.key) == (namespace, key)
            assert strict_equal(item.value, stripped(value)), (item.value, value)
        elif action == "delete":
            world.model.pop((namespace, key), None)
            assert store.get(namespace, key) is None
    world.check_whole()
    assert files_outside_store(world.top) == files  # only .mnem/ may change
    assert not any("pwned" in p.name for p in Path.cwd().rglob("*"))


@pytest.mark.parametrize("key", ["../../x", "/etc/passwd", "..", ".", "../" * 50 + "tmp/escape", "~/x", "C:\\x"])
def test_path_like_keys_never_reach_the_disk(world: World, key: str) -> None:
    """Path-like namespaces and keys are node ids: the only files that change are the store's own."""
    files = files_outside_store(world.top)
    for namespace in ((key.replace(".", "_"),), ("..x", "/"), ("-",)):
        namespace = tuple(label.replace(".", "_") for label in namespace)
        world.store.put(namespace, key, {"path": key})
        assert world.store.get(namespace, key).value == {"path": key}  # type: ignore[union-attr]
        world.store.delete(namespace, key)
    assert files_outside_store(world.top) == files
    assert not (world.top / "x").exists() and not (world.top.parent / "x").exists()


@pytest.mark.parametrize("value", BAD_VALUES, ids=range(len(BAD_VALUES)))
def test_every_bad_value_is_a_usage_error_that_writes_nothing(world: World, value: Any) -> None:
    before = store_fingerprint(world.root)
    with pytest.raises(mnem_bridge.UsageError) as caught:
        world.store.put(("ns",), "k", value)
    refused(world, caught.value, before)
    assert world.store.get(("ns",), "k") is None


@pytest.mark.parametrize("key", [*BAD_KEYS, 5])
def test_a_key_no_command_line_can_carry_is_refused_up_front(world: World, key: Any) -> None:
    """NUL, a lone surrogate, a non-string: refused by ``batch`` itself, naming the key, for gets and puts alike."""
    before = store_fingerprint(world.root)
    for op in (PutOp(("ns",), key, {"v": 1}), GetOp(("ns",), key), PutOp(("ns",), key, None)):
        with pytest.raises(mnem_bridge.UsageError, match="the key") as caught:
            world.store.batch([op])
        refused(world, caught.value, before)
