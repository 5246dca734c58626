"""Retrieval on LoCoMo: evidence recall@5/@10 of every search mode, next to LangGraph's stores with the same embedding.

LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory
of LLM Agents", ACL 2024; snap-research/LoCoMo, CC BY-NC 4.0) holds long
multi-session conversations and, for each question about one, the dialog
turns that hold its evidence.  The development half (conversations 0-4) is
read from ``../shared/data/locomo/locomo-dev.json`` beside the checkout,
never copied here.

Protocol: each dialog turn is one item in a namespace per conversation
(``("locomo", sample_id)``), key its ``dia_id``, value ``{"speaker",
"text", "date"}`` (the session's date and time; ``"image"`` holds the
caption of a shared photo), plus ``"context"``: the ``--context`` turns
before it in its session, ``"speaker: text"`` each (default 1, the turn it
answers; 0 leaves it out).  That is a general way to store a conversation's
turns, not a tuning: a reply ("Yes, last Saturday!") says little on its
own.  Every store gets the same values, one batch per session.  Each
question is asked as ``search(namespace, query=question, limit=10)``; its
recall@k is the fraction of its evidence turns in the top k, averaged over
the questions with evidence, per category (1 multi-hop, 2 temporal, 3
open-domain, 4 single-hop, 5 adversarial) and overall.

Stores: ``MnemosyneStore`` in each ``query_mode`` (``substring``, ``bm25``,
``vector``, ``hybrid``; one store written once with the index, opened once
per mode), LangGraph's ``InMemoryStore`` and ``SqliteStore`` (sqlite-vec on
a ``pysqlite3`` connection, as this machine's ``sqlite3`` cannot load
extensions), all with the same index: ``WordLlamaEmbeddings`` (256
dimensions, offline) over the whole value.  Each question is asked of every
store in turn, the order rotating, so search times are interleaved; they
include the embedding of the question (the same for every store).  Both
layouts are measured by default, the turn with the one before it and the
turn alone, so the table shows what the layout gains apart from the mode.

Run: ``python benchmarks/locomo.py [--quick] [--context N ...]``
(``--quick``: the first conversation only); writes
``benchmarks/results/locomo.md``.  The data is found as ``find_data`` says.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report
from langgraph.store.base import BaseStore, IndexConfig, PutOp
from langgraph.store.memory import InMemoryStore

from mnem_langgraph import MnemosyneStore
from mnem_langgraph.embeddings import DIMS, WordLlamaEmbeddings

#: Where LoCoMo's development half lies beside a checkout (or beside the checkout a clone was made from).
BESIDE = Path("shared", "data", "locomo", "locomo-dev.json")


def find_data() -> Path:
    """LoCoMo's file: ``$MNEM_LOCOMO``, else ``../shared/data/locomo/`` beside this checkout or its origin.

    A clean clone made from a local checkout (as CI's is) looks beside the
    checkout it was cloned from, so the data is read where it lies, never
    copied.  The first candidate is returned when none exists, for the
    error to name.
    """
    root = Path(__file__).resolve().parent.parent
    candidates = [Path(os.environ["MNEM_LOCOMO"])] if os.environ.get("MNEM_LOCOMO") else []
    candidates.append(root.parent / BESIDE)
    origin = subprocess.run(["git", "-C", str(root), "remote", "get-url", "origin"],
                            capture_output=True, text=True, check=False).stdout.strip()
    if origin and Path(origin).is_dir():
        candidates.append(Path(origin).resolve().parent / BESIDE)
    return next((path for path in candidates if path.is_file()), candidates[0])


DATA = find_data()
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
MODES = ("substring", "bm25", "vector", "hybrid")
_DIA_ID = re.compile(r"D\d+:\d+")


@dataclass
class Conversation:
    """One LoCoMo sample: its turns as items and its questions."""

    name: str
    sessions: list[list[tuple[str, dict[str, Any]]]]
    questions: list[tuple[str, int, list[str]]]  # (question, category, evidence dia_ids)


def conversations(path: Path = DATA, context: int = 1, limit: int | None = None) -> list[Conversation]:
    """The samples of ``path`` as items (``context`` turns before each, in its session) and questions."""
    found = []
    for sample in json.loads(path.read_text())[:limit]:
        talk = sample["conversation"]
        sessions = []
        n = 1
        while f"session_{n}" in talk:
            turns = talk[f"session_{n}"]
            items = []
            for i, turn in enumerate(turns):
                value: dict[str, Any] = {"speaker": turn["speaker"], "text": turn["text"],
                                         "date": talk[f"session_{n}_date_time"]}
                if turn.get("blip_caption"):
                    value["image"] = turn["blip_caption"]
                if context:
                    value["context"] = " ".join(f"{t['speaker']}: {t['text']}" for t in turns[max(0, i - context):i])
                items.append((turn["dia_id"], value))
            sessions.append(items)
            n += 1
        questions = []
        for qa in sample["qa"]:
            evidence = [e for text in qa.get("evidence", []) for e in _DIA_ID.findall(text)]
            if evidence:
                questions.append((qa["question"], int(qa["category"]), evidence))
        found.append(Conversation(sample["sample_id"], sessions, questions))
    return found


@dataclass
class Outcome:
    """One store's (or mode's) recall and times."""

    recall: dict[tuple[int | None, int], list[float]] = field(default_factory=dict)  # (category|None, k) -> per q
    searches: Samples = field(default_factory=Samples)

    def add(self, category: int, k: int, value: float) -> None:
        for key in ((category, k), (None, k)):
            self.recall.setdefault(key, []).append(value)

    def mean(self, category: int | None, k: int) -> float:
        got = self.recall.get((category, k), [])
        return sum(got) / len(got) if got else float("nan")


def index() -> IndexConfig:
    """The index every store gets: wordllama over the whole value."""
    return {"dims": DIMS, "embed": WordLlamaEmbeddings()}


def sqlite_store(folder: Path) -> BaseStore:
    """LangGraph's SqliteStore with sqlite-vec on a pysqlite3 connection (this machine's sqlite3 loads no extension)."""
    from langgraph.store.sqlite import SqliteStore
    from pysqlite3 import dbapi2

    conn = dbapi2.connect(str(folder / "lg.sqlite"), check_same_thread=False, isolation_level=None)
    store = SqliteStore(conn, index=index())
    store.setup()
    return store


def fill(store: BaseStore, talks: list[Conversation]) -> float:
    """Write every turn, one batch per session; the seconds it took."""
    start = time.perf_counter()
    for talk in talks:
        for session in talk.sessions:
            store.batch([PutOp(("locomo", talk.name), key, value) for key, value in session])
    return time.perf_counter() - start


def questions(talks: list[Conversation]) -> Iterator[tuple[tuple[str, ...], str, int, list[str]]]:
    """Every question with its namespace: ``(namespace, question, category, evidence)``."""
    for talk in talks:
        for question, category, evidence in talk.questions:
            yield ("locomo", talk.name), question, category, evidence


def ask(store: BaseStore, outcome: Outcome, namespace: tuple[str, ...], question: str, category: int,
        evidence: list[str]) -> None:
    """One question as ``search(namespace, query=question, limit=10)``: its recall@5/@10 and time into ``outcome``."""
    start = time.perf_counter()
    found = store.search(namespace, query=question, limit=10)
    outcome.searches.add(time.perf_counter() - start)
    keys = [item.key for item in found]
    for k in (5, 10):
        outcome.add(category, k, sum(1 for e in evidence if e in keys[:k]) / len(evidence))


def stores(folder: Path, only_mnemosyne: bool = False) -> Iterator[tuple[str, Callable[[], BaseStore], bool]]:
    """``(name, open, fills)``: every store to measure; ``fills`` is false for a mode opened on a filled store."""
    for n, mode in enumerate(MODES):
        yield (f"MnemosyneStore {mode}",
               lambda mode=mode: MnemosyneStore(folder / "mnem", index=index(), query_mode=mode), n == 0)
    if only_mnemosyne:
        return
    yield "InMemoryStore (vector)", lambda: InMemoryStore(index=index()), True
    yield "SqliteStore (vector)", lambda: sqlite_store(folder), True


def measure(talks: list[Conversation], folder: Path,
            only_mnemosyne: bool = False) -> tuple[dict[str, Outcome], dict[str, float]]:
    """Recall and times of every store, and each filled store's ingest seconds.

    Every store is filled first; then each question is asked of every
    store in turn, the order rotating by question, so the search times are
    interleaved: a slow moment of the machine falls on all stores alike.
    """
    opened: dict[str, BaseStore] = {}
    ingest: dict[str, float] = {}
    try:
        for name, opening, fills in stores(folder, only_mnemosyne):
            opened[name] = store = opening()
            if fills:
                ingest[name.split(" ")[0] if name.startswith("MnemosyneStore") else name] = fill(store, talks)
        outcomes = {name: Outcome() for name in opened}
        names = list(opened)
        for n, (namespace, question, category, evidence) in enumerate(questions(talks)):
            for name in names[n % len(names):] + names[:n % len(names)]:
                ask(opened[name], outcomes[name], namespace, question, category, evidence)
    finally:
        for store in opened.values():
            if isinstance(store, MnemosyneStore):
                store.close()
    return outcomes, ingest


def recall_table(outcomes: dict[str, Outcome], counts: dict[int, int]) -> list[str]:
    """One layout's table: recall@5/@10 overall and per category, and search p50/p95, per store or mode."""
    header = ["store / mode", "recall@5", "recall@10",
              *(f"{c} {CATEGORIES[c]} ({counts[c]}) @5 / @10" for c in CATEGORIES), "search p50 ms", "p95 ms"]
    rows = [[name, f"{got.mean(None, 5):.3f}", f"**{got.mean(None, 10):.3f}**",
             *(f"{got.mean(c, 5):.3f} / {got.mean(c, 10):.3f}" for c in CATEGORIES),
             f"{got.searches.p50:.1f}", f"{got.searches.p95:.1f}"] for name, got in outcomes.items()]
    return table(header, rows)


def report(runs: list[tuple[int, dict[str, Outcome], dict[str, float]]], talks: list[Conversation]) -> None:
    """Write ``results/locomo.md``: a table per value layout (``--context``), then each layout's ingest times."""
    counts = {c: sum(1 for t in talks for _, cat, _ in t.questions if cat == c) for c in CATEGORIES}
    items = sum(len(s) for t in talks for s in t.sessions)
    questions = sum(counts.values())
    sections: list[str | list[str]] = [
        f"LoCoMo's development half ({len(talks)} conversation{'s' * (len(talks) > 1)}: "
        f"{', '.join(t.name for t in talks)}), {items} turns as items, {questions} questions with evidence; "
        "each asked as `search(namespace, query=question, limit=10)`. Data: LoCoMo (Maharana et al., ACL 2024, "
        "snap-research/LoCoMo), CC BY-NC 4.0, read from `../shared/data/locomo/`, not redistributed here.",
        "Each value is `{speaker, text, date}` (+ `image`, a shared photo's caption) and, with `--context N` "
        "above 0, `context`: the N turns before it in its session. Every store has the same index: "
        "`WordLlamaEmbeddings` (wordllama l2_supercat, 256 dimensions, offline) over the whole value; "
        "`substring` and `bm25` do not use it. Recall@k: the share of a question's evidence turns in the top k, "
        "averaged over questions; per category, @5 / @10. Each question is asked of every store in turn, the "
        "order rotating, so the times are interleaved; they include embedding the question (the same for every "
        "store).",
    ]
    for context, outcomes, _ in runs:
        layout = "the turn before it as `context`" if context == 1 else (
            f"the {context} turns before it as `context`" if context else "each turn alone")
        sections += [f"**`--context {context}`: {layout}**", recall_table(outcomes, counts)]
    ingest_header = ["store", *(f"ingest s, --context {context}" for context, _, _ in runs)]
    names = list(runs[0][2])
    sections += ["Ingest (one batch per session, embedding every turn; MnemosyneStore's is one commit per batch):",
                 table(ingest_header, [[name, *(f"{ingest[name]:.1f}" for _, _, ingest in runs)] for name in names])]
    write_report("locomo", "Retrieval on LoCoMo: evidence recall per search mode", sections)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first conversation only")
    parser.add_argument("--context", type=int, nargs="+", default=[1, 0],
                        help="value layouts to measure: turns before each turn stored with it (default: 1 0)")
    parser.add_argument("--data", type=Path, default=DATA, help="LoCoMo's JSON (default ../shared/data/locomo/)")
    args = parser.parse_args()
    if not args.data.is_file():
        parser.error(f"LoCoMo's development half is not at {args.data}: put it in ../shared/data/locomo/ beside "
                     "the checkout, or name it with --data or MNEM_LOCOMO")
    runs = []
    for context in args.context:
        talks = conversations(args.data, context, 1 if args.quick else None)
        with tempfile.TemporaryDirectory() as tmp:
            outcomes, ingest = measure(talks, Path(tmp))
        runs.append((context, outcomes, ingest))
    report(runs, talks)


if __name__ == "__main__":
    main()
