"""Bytes per step of a long-running graph: ``MnemosyneSaver`` with retention and without, next to ``SqliteSaver``.

Issue #47 asks that a long-running graph's store can stay small: the
saver's retention (``keep_last``) removes, as part of each ``put``, the
checkpoints beyond the last N with their pending writes and the channel
values no kept checkpoint reads, and redacts their bytes from history.  What
stays per step is what history itself is: the commit, its state's changed
blocks and its change rows, which name the removed versions by id.  This
runs one graph for ``--steps`` super-steps on three savers side by side and
measures each store's SQLite files (after a WAL checkpoint) as it goes:

* ``MnemosyneSaver(keep_last=K, keep_history=False)``: its checkpoints'
  branch lets go of its history every 100 writes and ``mnem gc
  --plain-vacuum`` follows, so the store should stay flat;
* ``MnemosyneSaver(keep_last=K)``: the store should grow by that overhead
  only;
* ``MnemosyneSaver()``: every step's new channel values stay in history;
* ``SqliteSaver``: LangGraph's own, which keeps every checkpoint row.

The bound it shows: with retention the store grows by history's own part
per step whatever the state's size (two commits per super-step, a put's
and its task's writes, their states' changed blocks and change rows, the
step's new node ids, and a redaction record per version removed), plus,
until ``mnem gc`` rewrites the SQLite file, the space a redacted version's
bytes leave inside its page (zeroed; SQLite reuses whole free pages only).
The last column measures each store after ``mnem gc``.

The graph is an agent loop over a bounded context: one node, run once per
super-step, keeps a rolling window of the last ``WINDOW`` messages (about
200 characters each) and a counter, so every checkpoint writes a new
window (about 4 KB) and the state does not grow with the run.  The loop
runs as a few long ``invoke`` calls (one per measuring mark), each going
round the node until the counter reaches the mark.

Run: ``python benchmarks/retention.py [--steps N] [--keep K]``; writes
``benchmarks/results/retention.md``.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import table, write_report
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

import mnem_bridge
from mnem_langgraph import MnemosyneSaver

#: Words of the chat: random letters, so the stored values compress about as prose does.
WORDS = ["".join(random.Random(i).choices(string.ascii_lowercase, k=1 + i % 9)) for i in range(3000)]
#: Messages the rolling window holds, unless ``--window`` says otherwise.
WINDOW = 20
#: How many measuring marks the run is cut into (one ``invoke`` each).
MARKS = 10


class Loop(TypedDict, total=False):
    window: list[str]
    counter: int
    until: int


def message(step: int) -> str:
    """The step's message, about 200 characters."""
    return " ".join(random.Random(-step).choices(WORDS, k=36))[:200]


def graph(saver: BaseCheckpointSaver[Any], window: int) -> Any:
    """One node, looped until the counter reaches the input's ``until``: the next message joins the window."""

    def advance(state: Loop) -> Loop:
        counter = state.get("counter", 0) + 1
        return {"counter": counter, "window": [*state.get("window", []), message(counter)][-window:]}

    builder = StateGraph(Loop)
    builder.add_node("step", advance)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", lambda state: "step" if state["counter"] < state["until"] else END)
    return builder.compile(checkpointer=saver)


def sqlite_bytes(path: Path) -> int:
    """A SQLite database's files once its WAL is folded in (its writer closed first)."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def free_bytes(path: Path) -> int:
    """The bytes of a SQLite database's free pages (zeroed by a redaction, reused by later writes)."""
    with sqlite3.connect(path) as conn:
        free = conn.execute("PRAGMA freelist_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    return int(free)


class Run:
    """One saver's store and graph, run a mark at a time, with its files' size and the time taken at each mark."""

    def __init__(self, name: str, folder: Path, keep: int | None, window: int, *, history: bool = True) -> None:
        self.name = name
        self.keep = keep
        if name == "SqliteSaver":
            self.file = folder / "lg.sqlite"
            lite = SqliteSaver(sqlite3.connect(self.file, check_same_thread=False))
            lite.setup()
            self.saver: BaseCheckpointSaver[Any] = lite
        else:
            mnem_bridge.init(folder).close()
            self.file = folder / ".mnem" / "store.sqlite3"
            self.saver = MnemosyneSaver(folder, keep_last=keep, keep_history=history)
        self.folder = folder
        self.app = graph(self.saver, window)
        self.sizes: dict[int, int] = {0: self.measure()}
        self.free: dict[int, int] = {}
        self.seconds: dict[int, float] = {}

    def measure(self) -> int:
        if isinstance(self.saver, MnemosyneSaver):
            self.saver.close()  # its worker's connection closed, so the checkpoint folds in the whole WAL
        return sqlite_bytes(self.file)

    def run_to(self, step: int, previous: int) -> None:
        config: RunnableConfig = {"configurable": {"thread_id": "agent"}, "recursion_limit": step - previous + 10}
        started = time.perf_counter()
        self.app.invoke({"until": step}, config)
        self.seconds[step] = time.perf_counter() - started
        self.sizes[step] = self.measure()
        self.free[step] = free_bytes(self.file)

    def close(self) -> None:
        if isinstance(self.saver, MnemosyneSaver):
            self.saver.close()
        else:
            self.saver.conn.close()  # type: ignore[attr-defined]

    def collected(self) -> str:
        """The store's size after ``mnem gc`` (what no ref reaches dropped, the file rewritten); "-" for SqliteSaver."""
        if not isinstance(self.saver, MnemosyneSaver):
            return "-"
        done = subprocess.run([str(Path(sys.executable).with_name("mnem")), "-C", str(self.folder), "gc"],
                              capture_output=True, text=True)
        return f"{sqlite_bytes(self.file):,}" if done.returncode == 0 else f"gc failed: {done.stderr.strip()[:80]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000, help="super-steps the graph runs (default 10000)")
    parser.add_argument("--keep", type=int, default=10, help="keep_last for the retained saver (default 10)")
    parser.add_argument("--window", type=int, default=WINDOW, help=f"messages in the state (default {WINDOW})")
    args = parser.parse_args()
    marks = [args.steps * (i + 1) // MARKS for i in range(MARKS)]
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        runs = [Run(f"MnemosyneSaver(keep_last={args.keep}, keep_history=False)", Path(tmp) / "steady", args.keep,
                    args.window, history=False),
                Run(f"MnemosyneSaver(keep_last={args.keep})", Path(tmp) / "kept", args.keep, args.window),
                Run("MnemosyneSaver()", Path(tmp) / "all", None, args.window),
                Run("SqliteSaver", Path(tmp), None, args.window)]
        previous = 0
        for mark in marks:
            for run in runs:
                run.run_to(mark, previous)
            print(f"step {mark}: " + ", ".join(f"{run.name} {run.sizes[mark]:,} B" for run in runs), flush=True)
            previous = mark
        for run in runs:
            run.close()
        after_gc = {run.name: run.collected() for run in runs}
    half = marks[MARKS // 2 - 1]
    rows = []
    for run in runs:
        whole = (run.sizes[marks[-1]] - run.sizes[0]) / marks[-1]
        late = (run.sizes[marks[-1]] - run.sizes[half]) / (marks[-1] - half)
        per_step_ms = sum(run.seconds.values()) / marks[-1] * 1000
        late_ms = sum(run.seconds[m] for m in marks if m > half) / (marks[-1] - half) * 1000
        rows.append([run.name, f"{run.sizes[marks[-1]]:,}", f"{whole:,.0f}", f"{late:,.0f}",
                     f"{run.free[marks[-1]]:,}", after_gc[run.name], f"{per_step_ms:.1f}", f"{late_ms:.1f}"])
    growth = [[f"{mark:,}", *(f"{run.sizes[mark]:,}" for run in runs)] for mark in marks]
    write_report("retention", "Bytes per step of a long-running graph: retention vs none vs SqliteSaver", [
        f"One graph run for {marks[-1]:,} super-steps on each saver (interleaved a mark at a time): one node keeps "
        f"a rolling window of the last {args.window} messages of about 200 characters (about "
        f"{args.window * 200 // 1000} KB, new every step) and a counter. Store size is the SQLite files after a WAL "
        f"checkpoint (the savers' connections closed first). "
        f"`MnemosyneSaver(keep_last={args.keep})` removes, in each put's commit, the checkpoints beyond the last "
        f"{args.keep} with their writes and unread channel values, and redacts their bytes in the same write "
        f"(`mnem write --erase-deleted`): what "
        f"stays per step is history's own part (two commits, their states' changed blocks and change rows, the new "
        f"node ids, a redaction record per version removed), plus the space a redacted value leaves inside its page "
        f"(zeroed; SQLite reuses only whole free pages) until `mnem gc` rewrites the file. With "
        f"`keep_history=False` the checkpoints' own branch is written as a root every 100 writes and `mnem gc "
        f"--plain-vacuum` follows (docs/langgraph.md), so history's part goes too and the store should stay flat: "
        f"at most what the saver keeps plus about 100 writes of history, however many steps run. "
        f"`MnemosyneSaver()` keeps "
        f"every value in history; `SqliteSaver` keeps every checkpoint row. Load average when this run started: "
        f"{load:.1f} on {os.cpu_count()} cores.",
        "### Bytes per step",
        f"\"Late\" is steps {half:,}-{marks[-1]:,}, where a bound on the store shows as flat growth.",
        table(["saver", "store bytes at the end", "bytes/step (whole run)", "bytes/step (late)",
               "free bytes at the end", "after `mnem gc`", "ms/step (whole run)", "ms/step (late)"], rows),
        "### Store size at each mark",
        table(["step", *(run.name for run in runs)], growth),
    ])


if __name__ == "__main__":
    main()
