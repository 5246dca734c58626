"""``mnem search`` / ``mnem namespaces`` answer as the adapter's own read path did, on fixed generated cases.

Until #46 moved LangGraph's reads into the engine, ``mnem_langgraph``
answered them itself (its ``snapshot``, ``ranking`` and ``hybrid``
modules).  Before those were deleted, their answers to 240 seeded random
searches (items, every mode, filters, paging, index fields) and 120
namespace listings were recorded in ``data/search_answers.json``; here the
engine must give the same pages, values and scores.  (Both sides read item
ids with ``mnem_ids.items``; ``test_keys`` holds that layout.)

Scores are compared to 1e-9: BM25 added a document's term parts in a set
order, which differed between processes; the order is compared exactly,
ties included.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_bridge import Mnem, Store
from mnem_langgraph.keys import node_id, parse_node_id

MODEL = "e"
CASES = json.loads((Path(__file__).parent / "data" / "search_answers.json").read_text())


def vector(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    client = Mnem()
    opened = Store(Path(tmp_path_factory.mktemp("differential")), client=client)
    client.call(opened.root, "init", str(opened.root))
    yield opened
    client.close()


def put_items(store: Store, tag: str, drawn: list[Any]) -> None:
    puts = []
    for namespace, key, content, vec in drawn:
        put: dict[str, Any] = {"id": node_id((tag, *namespace), key), "content": content}
        if vec is not None:
            put["vectors"] = {"model": MODEL, "fields": {"text": vector(vec)}}
        puts.append(put)
    if puts:
        store.write(puts, message="w")


@pytest.mark.parametrize("number", range(len(CASES["searches"])))
def test_search_answers_as_the_adapter_did(store: Store, number: int) -> None:
    case = CASES["searches"][number]
    tag = f"t{number}"
    put_items(store, tag, case["items"])
    ranked = case["mode"] in ("vector", "hybrid")
    got = store.search((tag, *case["under"]), query=case["query"] or None, mode=case["mode"], filter=case["filter"],
                       limit=case["limit"], offset=case["offset"], fields=case["fields"],
                       model=MODEL if ranked else None, vector=[1.0, 0.5] if ranked else None)
    expected = case["expected"]
    assert [[list(hit.namespace), hit.key] for hit in got] == [[namespace, key] for namespace, key, _, _ in expected]
    for hit, (_, _, value, score) in zip(got, expected, strict=True):
        assert hit.value == value and hit.namespace[0] == tag
        assert (hit.score is None) == (score is None)
        if score is not None:
            assert hit.score is not None and math.isclose(hit.score, score, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("number", range(len(CASES["listings"])))
def test_namespaces_answers_as_the_adapter_did(store: Store, number: int) -> None:
    case = CASES["listings"][number]
    put_items(store, f"n{number}", case["items"])  # the conditions name this tag
    got = store.namespaces(conditions=[(kind, path) for kind, path in case["conditions"]],
                           max_depth=case["max_depth"], limit=case["limit"], offset=case["offset"])
    assert [list(namespace) for namespace in got] == case["expected"]


@given(st.lists(st.text(alphabet=":%2A5.3xk", min_size=1, max_size=12), max_size=30))
@settings(max_examples=60)
def test_a_listing_finds_exactly_the_namespaces_parse_node_id_finds(store: Store, ids: list[str]) -> None:
    """Moved from test_keys (it read the adapter's listing): ids no put could write name no namespace."""
    tag = f"ids{next(COUNTER)}"
    store.write([{"id": f"{tag}:{nid}", "content": 1} for nid in dict.fromkeys(ids)], message="w")
    expected = {parsed[0] for nid in ids if (parsed := parse_node_id(f"{tag}:{nid}")) is not None}
    assert store.namespaces(prefix=(tag,), limit=1000) == sorted(expected)


COUNTER = iter(range(10**9))
