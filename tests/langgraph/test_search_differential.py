"""``mnem search`` / ``mnem namespaces`` answer exactly as the adapter's own read path does, on generated items.

TEMPORARY (issue #46, stage 1): the expected answers come from
``mnem_langgraph``'s ``snapshot``, ``keys`` and ``hybrid`` modules, which the
engine's verbs replace.  Stage 2 deletes those modules and must turn these
tests into fixed expectations.  The engine's item-id layout
(``mnem_store.items``) is held equal to ``mnem_langgraph.keys`` here too.

Scores are compared to 1e-9: BM25 adds a document's term parts in the
adapter's set order, which differs between processes; the order is compared
exactly, ties included.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from langgraph.store.base import ListNamespacesOp, MatchCondition, SearchOp
from langgraph.store.base.embed import tokenize_path

from mnem_bridge import Mnem, Store
from mnem_langgraph.convert import Entry
from mnem_langgraph.keys import id_prefix, node_id, parse_node_id
from mnem_langgraph.snapshot import Snapshot
from mnem_store import items

WORDS = ["pizza", "Pizzas", "tea", "adopted", "adopting", "the", "what", "Straße", "a:b", "50%", "x.y", "7", ""]
LABELS = st.sampled_from(["m", "u1", "u:2", "a%b", "x.y", "", "%3A"])
VALUES = st.recursive(
    st.one_of(st.sampled_from(WORDS), st.integers(-10, 20), st.booleans(), st.none(), st.floats(-5, 5, width=32)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["text", "n", "tier", "steps"]),
                                                                inner, max_size=3),
    max_leaves=8,
)
CONTENTS = st.one_of(st.dictionaries(st.sampled_from(["text", "n", "tier", "steps", "summary"]), VALUES, max_size=4),
                     VALUES)
FILTERS = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(["text", "n", "tier", "steps.summary"]),
                    st.one_of(st.sampled_from(WORDS), st.integers(-10, 20),
                              st.dictionaries(st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]),
                                              st.one_of(st.integers(-10, 20), st.sampled_from(WORDS)),
                                              min_size=1, max_size=2)),
                    min_size=1, max_size=2),
)
MODEL = "e"


def vector(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    client = Mnem()
    opened = Store(Path(tmp_path_factory.mktemp("differential")), client=client)
    client.call(opened.root, "init", str(opened.root))
    yield opened
    client.close()


@given(st.text(st.sampled_from("ab:%.\x00c"), max_size=12))
@settings(max_examples=500)
def test_the_engines_item_ids_are_the_adapters(text: str) -> None:
    assert items.parse_id(text) == parse_node_id(text)


@given(st.lists(LABELS, max_size=3), st.text(st.sampled_from("ab:%."), max_size=5))
def test_the_engine_writes_item_ids_as_the_adapter_does(labels: list[str], key: str) -> None:
    assert items.node_id(tuple(labels), key) == node_id(tuple(labels), key)
    assert items.id_prefix(tuple(labels)) == id_prefix(tuple(labels))


def put_items(store: Store, tag: str, drawn: list[tuple[tuple[str, ...], str, Any, list[float] | None]]) -> None:
    puts = []
    for namespace, key, content, vec in drawn:
        put: dict[str, Any] = {"id": node_id((tag, *namespace), key), "content": content}
        if vec is not None:
            put["vectors"] = {"model": MODEL, "fields": {"text": vector(vec)}}
        puts.append(put)
    store.write(puts, message="w")


ITEMS = st.lists(st.tuples(st.lists(st.sampled_from(["m", "u1", "u:2"]), min_size=0, max_size=2).map(tuple),
                           st.sampled_from(["a", "b", "c:d", "e%f", "g"]), CONTENTS,
                           st.one_of(st.none(), st.lists(st.sampled_from([0.0, 1.0, -1.0, 0.5]), min_size=2,
                                                         max_size=2))),
                 max_size=8, unique_by=lambda item: (item[0], item[1]))
counter = iter(range(10**9))


@given(ITEMS, st.sampled_from(["substring", "bm25", "vector", "hybrid"]), st.sampled_from([*WORDS, "pizza tea"]),
       FILTERS, st.integers(0, 4), st.integers(1, 5), st.sampled_from([(), ("m",), ("u:2",)]),
       st.sampled_from([["$"], ["text"], ["steps[*].summary", "n"], ["{text,n}"]]))
@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@example([(("u1",), "a", {"text": "tea"}, [1.0, 0.0]), (("u:2",), "a", {"text": "tea"}, [1.0, 0.0])], "vector",
         "tea", None, 0, 5, (), ["$"])  # tied vectors: node-id order ("u%3A2" first), not key order
@example([(("u1",), "a", {"text": "tea"}, [1.0, 0.0]), (("u:2",), "a", {"text": "tea"}, [1.0, 0.0])], "hybrid",
         "tea", None, 0, 5, (), ["$"])  # tied in both rankings: key order ("u1" first)
def test_search_answers_as_the_adapters_snapshot(store: Store, drawn: Any, mode: str, query: str, conditions: Any,
                                                 offset: int, limit: int, under: tuple[str, ...],
                                                 fields: list[str]) -> None:
    tag = f"t{next(counter)}"
    put_items(store, tag, drawn)
    prefix = (tag, *under)
    query_vector = [1.0, 0.5]
    op = SearchOp(prefix, conditions, limit, offset, query or None)
    scores = store.similar(MODEL, query_vector, prefixes=[id_prefix(prefix)]) if mode in ("vector", "hybrid") else None
    timed = store.node_times(prefixes=[id_prefix(prefix)])
    expected = Snapshot.of(timed).answer(op, scores, mode,  # type: ignore[arg-type]
                                         [(path, tokenize_path(path) if path != "$" else path) for path in fields])
    args = ["search", f"--namespace={json.dumps(list(prefix))}", f"--mode={mode}", f"--limit={limit}",
            f"--offset={offset}", *([f"--query={query}"] if query else []),
            *([f"--filter={json.dumps(conditions)}"] if conditions else []),
            *([f"--model={MODEL}", f"--vector={vector(query_vector)}"] if mode in ("vector", "hybrid") else []),
            *(f"--field={path}" for path in fields if mode == "hybrid")]
    got = store.client.call(store.root, *args)["items"]
    assert isinstance(expected, list)
    assert [[item["namespace"], item["key"]] for item in got] == [
        [list(hit.namespace), hit.key] for hit in expected]
    for item, hit in zip(got, expected, strict=True):
        assert item["value"] == hit.value and item["created"] == Entry.of(
            tuple(hit.namespace), hit.key, timed[item["id"]]).created
        assert (item["score"] is None) == (hit.score is None)
        if hit.score is not None:
            assert math.isclose(item["score"], hit.score, rel_tol=1e-9, abs_tol=1e-12)


@given(ITEMS, st.lists(st.tuples(st.sampled_from(["prefix", "suffix"]),
                                 st.lists(st.sampled_from(["m", "u1", "u:2", "*"]), max_size=2)), max_size=2),
       st.one_of(st.none(), st.integers(1, 3)), st.integers(0, 3), st.integers(0, 4))
@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_namespaces_answers_as_the_adapters_listing(store: Store, drawn: Any, conditions: Any, depth: int | None,
                                                    offset: int, limit: int) -> None:
    tag = f"n{next(counter)}"
    put_items(store, tag, drawn)
    match = [MatchCondition(kind, (tag, *path) if kind == "prefix" else tuple(path))  # type: ignore[arg-type]
             for kind, path in conditions] or [MatchCondition("prefix", (tag,))]
    if not any(condition.match_type == "prefix" for condition in match):
        match.append(MatchCondition("prefix", (tag,)))
    op = ListNamespacesOp(tuple(match), depth, limit, offset)
    expected = Snapshot.listing(store.node_ids(prefixes=[id_prefix((tag,))])).answer(op)
    args = ["namespaces", *(f"--{c.match_type}={json.dumps(list(c.path))}" for c in match),
            *([] if depth is None else [f"--max-depth={depth}"]), f"--limit={limit}", f"--offset={offset}"]
    got = store.client.call(store.root, *args)["namespaces"]
    assert got == [list(namespace) for namespace in expected]  # type: ignore[union-attr]
