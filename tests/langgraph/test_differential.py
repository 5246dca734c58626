"""Differential test: random op sequences give MnemosyneStore's and InMemoryStore's answers.

Each generated step is run against both stores and the answers compared,
after removing the documented differences:

* timestamps (ours come from history, InMemoryStore's from the clock) are
  not compared; items are compared as ``(namespace, key, value)``;
* search order: we return ``(namespace, key)`` order, InMemoryStore
  insertion order, so the oracle's full result is sorted before the
  page (``offset``/``limit``) is cut from it;
* phantom namespaces: InMemoryStore keeps listing a namespace after a get
  on it or after its last item is deleted, so the oracle's namespaces are
  listed from a replay of only its live items;
* a search's ``query``: InMemoryStore without an index ignores it, where
  ADR-0016 makes it a plain substring filter (case ignored) over the node id
  and the stringified value, so the oracle's answer is filtered by that
  rule, restated here from the docs, before it is paged.

Every step costs one or two ``mnem`` processes, so the budget is small:
about 25 sequences of up to 8 steps.  Namespaces and keys include the
separator and the escape character so escaping is exercised too.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from conftest import MNEM
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

import mnem_bridge
from mnem_langgraph import MnemosyneStore

NAMESPACES = [("a",), ("a", "b"), ("a", "b:c"), ("c",), ("p%",)]
KEYS = ["k1", "k:2", "k%3A"]
BIG = 10_000

values = st.fixed_dictionaries(
    {"n": st.integers(0, 5), "tag": st.sampled_from(["x", "y"])},
    optional={"nested": st.fixed_dictionaries({"lvl": st.integers(0, 2)})},
)
filters = st.none() | st.sampled_from([
    {"tag": "x"},
    {"n": {"$gt": 2}},
    {"n": {"$gte": 1, "$lte": 3}},
    {"n": {"$ne": 4}},
    {"nested": {"lvl": 1}},
    {"tag": {"$eq": "y"}, "n": {"$lt": 4}},
])
namespace = st.sampled_from(NAMESPACES)
key = st.sampled_from(KEYS)
#: Queries that hit a value's text, a key, a node id (escapes included) or nothing, in either case.
queries = st.sampled_from([None, "X", '"TAG": "y"', '"N": 3', "Lvl", "A:B", "b%3Ac", "K%253a", "zz", ""])
# Lambdas, not the NamedTuples themselves: ``builds`` would also draw the optional fields.
puts = st.builds(lambda ns, k, v: PutOp(ns, k, v), namespace, key, values)
deletes = st.builds(lambda ns, k: PutOp(ns, k, None), namespace, key)
gets = st.builds(lambda ns, k: GetOp(ns, k), namespace, key)
searches = st.builds(
    lambda prefix, conditions, limit, offset, query: SearchOp(prefix, conditions, limit, offset, query),
    st.sampled_from([(), ("a",), ("a", "b"), ("c",), ("p%",)]), filters, st.integers(1, 4), st.integers(0, 3),
    queries,
)
paths = st.sampled_from([("a",), ("a", "*"), ("*", "b"), ("b",), ("b:c",), ("c",), ("*",)])
listings = st.builds(
    lambda conditions, depth, limit, offset: ListNamespacesOp(tuple(conditions), depth, limit, offset),
    st.lists(st.builds(lambda kind, path: MatchCondition(kind, path), st.sampled_from(["prefix", "suffix"]), paths),
             max_size=2),
    st.none() | st.integers(1, 2),
    st.integers(1, 5),
    st.integers(0, 2),
)
single = st.one_of(puts, deletes, gets, searches, searches, listings)
#: A batch always writes a key and reads it back, in some order, beside other ops.
batches = st.builds(
    lambda ns, k, v, rest: [PutOp(ns, k, v), GetOp(ns, k), *rest],
    namespace, key, values | st.none(), st.lists(st.one_of(puts, deletes, searches), max_size=2),
).flatmap(st.permutations)
#: Every sequence starts from a few items, so reads and pages have something to find.
seeds = st.lists(puts, min_size=3, max_size=6)
steps = st.builds(
    lambda seed, rest: [seed, *rest],
    seeds, st.lists(st.one_of(single.map(lambda op: [op]), batches), min_size=4, max_size=7),
)


def as_tuples(items):
    return [(i.namespace, i.key, i.value) for i in items]


def adr_match(query, namespace, key, value):
    """ADR-0016's search as docs/langgraph.md states it: the node id (each part with ``%`` and ``:`` escaped,
    joined by ``:``) or the value's JSON text contains the query, case ignored."""
    nid = ":".join(part.replace("%", "%25").replace(":", "%3A") for part in (*namespace, key))
    return any(query.casefold() in text.casefold() for text in (nid, json.dumps(value, ensure_ascii=False)))


def oracle_answers(oracle: InMemoryStore, ops: list) -> list:
    """The oracle's results for one batch, normalised to our documented behaviour."""
    live = InMemoryStore()  # the oracle's live items, with no phantom namespaces
    for item in oracle.search((), limit=BIG):
        live.put(item.namespace, item.key, item.value)
    sent = [op._replace(limit=BIG, offset=0) if isinstance(op, SearchOp) else op for op in ops]
    raw = oracle.batch(sent)
    answers = []
    for op, result in zip(ops, raw, strict=True):
        if isinstance(op, SearchOp):
            ordered = sorted(as_tuples(result), key=lambda t: (t[0], t[1]))
            kept = [t for t in ordered if not op.query or adr_match(op.query, *t)]
            answers.append(kept[op.offset : op.offset + op.limit])
        elif isinstance(op, ListNamespacesOp):
            answers.append(live.batch([op])[0])
        elif isinstance(op, GetOp):
            answers.append(None if result is None else as_tuples([result])[0])
        else:
            answers.append(result)
    return answers


def our_answers(store: MnemosyneStore, ops: list) -> list:
    answers = []
    for op, result in zip(ops, store.batch(ops), strict=True):
        if isinstance(op, SearchOp):
            assert all(item.score is None for item in result)  # a filter, not a ranking
            answers.append(as_tuples(result))
        elif isinstance(op, GetOp):
            answers.append(None if result is None else as_tuples([result])[0])
        else:
            answers.append(result)
    return answers


@settings(max_examples=25, deadline=None, derandomize=True)
@given(steps)
def test_same_answers_as_inmemorystore(sequence):
    oracle = InMemoryStore()
    with tempfile.TemporaryDirectory() as tmp:
        with mnem_bridge.Mnem(MNEM) as client:  # closed here: its worker must not outlive the example
            mnem_bridge.init(Path(tmp), client=client).close()
        with MnemosyneStore(tmp, mnem=MNEM) as ours:
            for ops in sequence:
                assert our_answers(ours, ops) == oracle_answers(oracle, ops), ops
            final = ours.search((), limit=BIG)
            assert sorted(as_tuples(final)) == sorted(as_tuples(oracle.search((), limit=BIG)))
