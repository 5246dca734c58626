"""A malformed checkpoint node is a typed error naming it; the thread's other checkpoints stay readable.

Anyone who may write a store with checkpoints in it (a pusher, ``mnem write --allow-reserved``) can leave a node
the saver did not write so.  hypothesis draws such nodes (``MALFORMED_EXAMPLES`` of them in every run; CI's
profile draws the same ones each time, tests/conftest.py): a whole node that is not an object, keys missing or of
the wrong type, values whose bytes are not one-byte text or base64, an unknown serialization (``pickle``), msgpack
that does not decode or decodes to the wrong shape, a type the serializer does not build.  Each lands on one of
the three nodes of a thread's latest checkpoint (the checkpoint, its channel value, its pending write), and then:

* ``get_tuple``, ``aget_tuple``, ``list`` and ``alist`` raise ``UnreadableCheckpointError`` (``corrupt_store``)
  naming that node: never ``KeyError``, ``TypeError``, ``AttributeError`` or ``NotImplementedError``, and never a
  checkpoint that silently lost or changed a value;
* the checkpoint before it, which shares none of its nodes, still reads whole.

``list`` raises rather than skipping the node: a history with a step silently missing is one a replay or a
time-travel would act on as if it were whole.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ormsgpack
import pg_stores
import pytest
from conftest import BACKENDS, MNEM, new_store
from fuzzing import tried
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.base import empty_checkpoint
from planted import calls

import mnem_bridge
from mnem_langgraph import MnemosyneSaver, UnreadableCheckpointError
from mnem_langgraph.checkpoint import CHECKPOINT_BRANCH

#: Malformed nodes drawn per run, on each backend.
MALFORMED_EXAMPLES = 300

THREAD = "t"


class Thread:
    """A thread of two checkpoints put by the saver: ``good``, then ``latest`` with its own value and a write."""

    def __init__(self, saver: MnemosyneSaver, bridge: mnem_bridge.Store) -> None:
        self.saver, self.bridge = saver, bridge
        good = empty_checkpoint()
        good["channel_values"], good["channel_versions"] = {"v": "good"}, {"v": "1"}
        self.good = saver.put(config(), good, {"step": 0}, {"v": "1"})
        latest = empty_checkpoint()
        latest["channel_values"], latest["channel_versions"] = {"v": "latest"}, {"v": "2"}
        self.latest = saver.put(self.good, latest, {"step": 1}, {"v": "2"})
        saver.put_writes(self.latest, [("v", "pending")], "task")
        node = f".checkpoint:{THREAD}::"
        self.ids = {"checkpoint": f"{node}c:{latest['id']}", "value": f"{node}b:v:2",
                    "write": f"{node}w:{latest['id']}:task:0"}
        page = bridge.memory_page(limit=10, prefixes=list(self.ids.values())).document["memory"]
        self.original = {kind: page[node_id]["content"] for kind, node_id in self.ids.items()}

    def replace(self, kind: str, content: Any) -> None:
        """One commit: ``kind``'s node holds ``content``, the other two what the saver wrote."""
        puts = [{"id": node_id, "content": content if name == kind else self.original[name]}
                for name, node_id in self.ids.items()]
        self.bridge.write(puts, message=f"malformed {kind}", allow_reserved=True)


def config(checkpoint_id: str | None = None) -> Any:
    return {"configurable": {"thread_id": THREAD, "checkpoint_ns": "",
                             **({"checkpoint_id": checkpoint_id} if checkpoint_id else {})}}


@pytest.fixture(scope="module", params=BACKENDS)
def thread(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Thread]:
    folder = new_store(tmp_path_factory.mktemp("malformed") / "memory", request.param)
    address = pg_stores.address(folder)
    with MnemosyneSaver(address, mnem=MNEM) as saver, mnem_bridge.open(address, client=mnem_bridge.Mnem(MNEM)) as b:
        try:
            yield Thread(saver, b)
        finally:
            b.client.close()


# ----------------------------------------------------------------------------------------------- strategies
text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
number = st.integers(-(2**63), 2**63 - 1)
json_value = st.recursive(st.none() | st.booleans() | number | text,
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
                          max_leaves=6)
not_object = st.none() | st.booleans() | number | text | st.lists(json_value, max_size=3)
#: Neither text nor null: what a key that must hold text cannot be mistaken for missing.
wrong_not_null = st.booleans() | number | st.lists(json_value, max_size=3) | st.dictionaries(text, json_value,
                                                                                             max_size=3)
not_text = st.none() | wrong_not_null
#: Text no byte string is: it holds a character above U+00FF.
wide_text = st.builds(lambda head, wide, tail: head + wide + tail, text,
                      st.characters(min_codepoint=0x100, exclude_categories=["Cs"]), text)
#: Bytes no msgpack decoder reads: a reserved first byte, or a document cut short.
bad_msgpack = st.one_of(
    st.binary(max_size=8).map(lambda rest: b"\xc1" + rest),
    st.dictionaries(text, json_value, min_size=1, max_size=3).map(lambda value: ormsgpack.packb(value)[:-1]),
    st.just(b""),
)
#: Modules and names LangGraph's serializer does not build (none is in SAFE_MSGPACK_TYPES).
blocked_call = st.builds(calls, st.sampled_from(["os", "subprocess", "builtins", "shutil", "pathlib"]),
                         st.sampled_from(["system", "mkdir", "rmtree", "eval", "Popen", "unlink"]), text)
#: The tags LangGraph's serializer reads, and the saver's tag for a version with no value.
KNOWN_TAGS = {"null", "bytes", "bytearray", "json", "msgpack", "empty"}


def packed(value: Any) -> dict[str, str]:
    return {"type": "msgpack", "latin1": ormsgpack.packb(value, option=ormsgpack.OPT_NON_STR_KEYS).decode("latin-1")}


def unreadable_value() -> st.SearchStrategy[tuple[str, Any]]:
    """A stored value (``{"type", "latin1" | "data"}``) that no serializer setting reads: (what, value)."""
    return st.one_of(
        not_object.map(lambda value: ("not an object", value)),
        st.fixed_dictionaries({"latin1": text}).map(lambda value: ("no type", value)),
        st.fixed_dictionaries({"type": not_text, "latin1": text}).map(lambda value: ("type not text", value)),
        st.fixed_dictionaries({"type": text.filter(lambda tag: tag not in KNOWN_TAGS) | st.just("pickle"),
                               "latin1": text}).map(lambda value: ("unknown tag", value)),
        st.fixed_dictionaries({"type": st.just("msgpack"), "latin1": wrong_not_null})
        .map(lambda value: ("latin1 not text", value)),
        st.fixed_dictionaries({"type": st.just("msgpack"), "latin1": wide_text})
        .map(lambda value: ("latin1 wider than a byte", value)),
        st.fixed_dictionaries({"type": st.just("msgpack")}, optional={"data": not_text | st.just("not base64!")})
        .map(lambda value: ("no bytes", value)),
        bad_msgpack.map(lambda raw: ("msgpack that does not decode", {"type": "msgpack",
                                                                     "data": base64.b64encode(raw).decode()})),
        bad_msgpack.map(lambda raw: ("msgpack that does not decode", {"type": "msgpack",
                                                                     "latin1": raw.decode("latin-1")})),
        text.map(lambda body: ("json that does not decode", {"type": "json", "latin1": f"[{body}{{"})),
        st.lists(blocked_call, min_size=1, max_size=2).map(lambda found: ("a blocked type", packed(found))),
    )


#: A checkpoint as the saver stores one (without its channel values), to make wrong in one place.
CHECKPOINT = {"v": 4, "id": "x", "ts": "2026-01-01", "channel_versions": {"v": "2"}, "versions_seen": {}}


def bad_versions() -> st.SearchStrategy[Any]:
    wrong = st.none() | st.booleans() | st.lists(text, max_size=2) | st.dictionaries(text, text, max_size=1)
    return st.one_of(not_object, st.dictionaries(text, wrong, min_size=1, max_size=2),
                     st.dictionaries(st.integers(0, 9), text, min_size=1, max_size=2))


def checkpoint_changes() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """What is wrong with a checkpoint node, and the keys that make it so (``REMOVED``: the key is gone)."""
    not_a_dict = not_object.map(packed)
    return st.one_of(
        unreadable_value().map(lambda found: (f"metadata: {found[0]}", {"metadata": found[1]})),
        unreadable_value().map(lambda found: (f"checkpoint: {found[0]}", {"checkpoint": found[1]})),
        st.sampled_from(["metadata", "checkpoint"]).map(lambda key: (f"no {key}", {key: REMOVED})),
        wrong_not_null.map(lambda parent: ("parent not text", {"parent": parent})),
        not_a_dict.map(lambda value: ("metadata not an object", {"metadata": value})),
        not_a_dict.map(lambda value: ("checkpoint not an object", {"checkpoint": value})),
        bad_versions().map(lambda versions: ("bad channel_versions", {
            "checkpoint": packed({**CHECKPOINT, "channel_versions": versions})})),
        st.sampled_from(["channel_versions", "versions_seen"]).map(lambda key: (f"checkpoint without {key}", {
            "checkpoint": packed({name: value for name, value in CHECKPOINT.items() if name != key})})),
        not_object.map(lambda seen: ("versions_seen not an object", {
            "checkpoint": packed({**CHECKPOINT, "versions_seen": seen})})),
    )


TASK_KEYS = ("task_id", "channel", "idx", "task_path")


def write_changes() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """What is wrong with a pending write node's task keys, and the keys that make it so."""
    return st.sampled_from(TASK_KEYS).flatmap(lambda key: st.one_of(
        (not_text if key != "idx" else json_value.filter(lambda value: type(value) is not int))
        .map(lambda wrong: (f"{key} of the wrong type", {key: wrong})),
        st.just((f"no {key}", {key: REMOVED}))))


#: In a change, a key to take out of the node.
REMOVED = "<removed>"


def malformed() -> st.SearchStrategy[tuple[str, str, str, Any]]:
    """(the node it lands on, what is wrong, how the change applies, the change).

    How: ``whole`` replaces the node's content, ``keys`` sets (or removes) some of its keys, ``value`` replaces
    a pending write's stored value and keeps its task keys.
    """
    return st.one_of(
        not_object.map(lambda value: ("checkpoint", "not an object", "whole", value)),
        checkpoint_changes().map(lambda found: ("checkpoint", found[0], "keys", found[1])),
        unreadable_value().map(lambda found: ("value", found[0], "whole", found[1])),
        not_object.map(lambda value: ("write", "not an object", "whole", value)),
        unreadable_value().map(lambda found: ("write", f"value: {found[0]}", "value", found[1])),
        write_changes().map(lambda found: ("write", found[0], "keys", found[1])),
    )


def applied(original: dict[str, Any], how: str, change: Any) -> Any:
    """The node's content once ``change`` is applied ``how`` (see ``malformed``)."""
    if how == "whole":
        return change
    if how == "value":
        tasks = {key: original[key] for key in TASK_KEYS}
        return {**tasks, **change} if isinstance(change, dict) else change
    content = {**original, **change}
    return {key: value for key, value in content.items() if value != REMOVED}


# ----------------------------------------------------------------------------------------------- the test
def refused(read: Any, node_id: str) -> None:
    with pytest.raises(UnreadableCheckpointError) as error:
        read()
    assert error.value.node_id == node_id and error.value.code == "corrupt_store"
    assert node_id[:40] in error.value.message and "delete_thread" in error.value.message


async def listed(saver: MnemosyneSaver) -> list[Any]:
    return [item async for item in saver.alist(config())]


@settings(max_examples=MALFORMED_EXAMPLES, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=malformed())
def test_a_malformed_node_is_a_typed_error_naming_it_and_the_rest_of_the_thread_reads(thread: Thread,
                                                                                      case: Any) -> None:
    kind, what, how, change = case
    tried("checkpoint nodes")
    event(f"{kind}: {what}")
    thread.replace(kind, applied(thread.original[kind], how, change))
    node_id, saver = thread.ids[kind], thread.saver
    refused(lambda: saver.get_tuple(thread.latest), node_id)
    refused(lambda: list(saver.list(config())), node_id)
    refused(lambda: asyncio.run(saver.aget_tuple(config())), node_id)
    refused(lambda: asyncio.run(listed(saver)), node_id)
    good = saver.get_tuple(thread.good)
    assert good is not None and good.checkpoint["channel_values"] == {"v": "good"} and good.pending_writes == []
    assert [item.config for item in saver.list(config(), before=thread.latest)] == [good.config]


def test_the_thread_reads_whole_again_once_the_node_is_the_savers(thread: Thread) -> None:
    thread.replace("write", thread.original["write"])
    latest = thread.saver.get_tuple(config())
    assert latest is not None and latest.checkpoint["channel_values"] == {"v": "latest"}
    assert latest.pending_writes == [("task", "v", "pending")]


@pytest.fixture
def store_root_address(store: Path) -> str:
    return pg_stores.address(store)


def test_a_coupled_savers_memory_pin_that_is_not_one_is_the_same_error(store_root_address: str) -> None:
    with MnemosyneSaver(store_root_address, mnem=MNEM, couple_memory=True) as saver:
        checkpoint = empty_checkpoint()
        saver.put(config(), checkpoint, {"step": 0}, {})
        node_id = f".checkpoint:{THREAD}::c:{checkpoint['id']}"
        with mnem_bridge.open(store_root_address, client=mnem_bridge.Mnem(MNEM)) as bridge:
            try:
                content = bridge.working_node(node_id, at=CHECKPOINT_BRANCH)
                assert content is not None and content.content["memory"]["branch"] is None
                bridge.write([{"id": node_id, "content": {**content.content, "memory": {"branch": ["main"]}}}],
                             message="a pin that is not one", branch=CHECKPOINT_BRANCH, allow_reserved=True)
            finally:
                bridge.client.close()
    with MnemosyneSaver(store_root_address, mnem=MNEM, couple_memory=True) as fresh:  # no pin kept from the put
        for read in (lambda: fresh.memory_pin(THREAD, checkpoint["id"]), lambda: fresh.get_tuple(config())):
            with pytest.raises(UnreadableCheckpointError, match="memory pin") as refused:
                read()
            assert refused.value.node_id == node_id
