"""One very large value through the bridge's worker: write it, read it back, compare the two.

An agent may remember a whole document (a transcript, a scraped page) as
one node.  The value crosses the worker pipe twice: as the ``mnem write``
request going in and as the ``mnem show --node`` answer coming back, each a
single JSON line of about the value's size.  Reading it back once took far
longer than writing it (the worker runner rescanned the whole answer for
its newline after every 64 KiB read: ~89 s for a 120 MB answer), so this
times both directions on the same value and reports their ratio; the target
is a read at most 3x the write.

Setup, untimed: ``mnem``'s limits on one value and one write lifted
(``MNEM_MAX_VALUE_BYTES=0``, ``MNEM_MAX_WRITE_BYTES=0``), a store made with ``mnem init``, opened with
``mnem_bridge.open`` in worker mode (``Mnem(mode="worker")``, which the
bridge uses by default unless ``MNEM_BRIDGE_MODE=oneshot``; the script
checks the worker really is in use), the worker started by a first read,
and the value built in memory: printable ASCII with quotes, backslashes,
newlines and some non-ASCII, so JSON escaping is on the path (an emoji among
it makes Python hold the string at 4 bytes a character, the costliest case
for the copies on the bridge's side).

- **write**: ``agents.remember(store, id, value)``, one durable commit of a
  new node (each sample writes its own node, so no write is a no-op);
- **read**: ``store.working_node(id)`` of that node, checked equal to the
  value after timing.

Run: ``python benchmarks/big_value.py [--mb N] [--repeat N]``; writes ``benchmarks/results/big_value.md``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report

import mnem_bridge
from mnem_bridge import agents
from mnem_bridge.worker import WorkerRunner

MNEM = str(Path(sys.executable).with_name("mnem"))
#: The read may take at most this many times the write.
TARGET_RATIO = 3.0
#: One KiB-ish block the value repeats: what JSON has to escape, and multi-byte UTF-8.
BLOCK = "".join(chr(c) for c in range(0x20, 0x7F)) + '\n\t"\\ ünïcödé 日本語 🦀 ' + "memory " * 120


def big_value(megabytes: float, salt: int) -> str:
    """A string of about ``megabytes`` MB of UTF-8, distinct per ``salt`` (so each sample is a new object)."""
    block_bytes = len(BLOCK.encode("utf-8"))
    return f"sample {salt}\n" + BLOCK * round(megabytes * 1_000_000 / block_bytes)


def measure(store: mnem_bridge.Store, megabytes: float, repeat: int) -> tuple[Samples, Samples, int]:
    """Time ``repeat`` writes and read-backs of a fresh value each; returns them and the value's UTF-8 size."""
    writes, reads = Samples(), Samples()
    size = 0
    for n in range(repeat):
        value = big_value(megabytes, n)
        size = len(value.encode("utf-8"))
        node_id = f"document-{n}"
        start = time.perf_counter()
        agents.remember(store, node_id, value, source="big_value benchmark")
        writes.add(time.perf_counter() - start)
        start = time.perf_counter()
        node = store.working_node(node_id)
        reads.add(time.perf_counter() - start)
        if node is None or node.content != value:
            raise SystemExit(f"read back a different value for {node_id}")
        del node, value  # keep at most one copy alive between samples
    return writes, reads, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="size of the value in MB of UTF-8 (default 100)")
    parser.add_argument("--repeat", type=int, default=3, help="samples, each a new value and node (default 3)")
    args = parser.parse_args()
    # far past what mnem takes in one call by default (docs/cli-json.md, "Input limits"): lifted for the worker
    os.environ.update({"MNEM_MAX_VALUE_BYTES": "0", "MNEM_MAX_WRITE_BYTES": "0"})
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        subprocess.run([MNEM, "init", str(root)], check=True, capture_output=True)
        with mnem_bridge.open(root, client=mnem_bridge.Mnem(MNEM, mode="worker")) as store:
            if not isinstance(store.client.runner, WorkerRunner):
                raise SystemExit(f"{MNEM} does not list the serve feature, so the bridge cannot run it as a worker")
            store.working_memory()  # start the worker before timing
            writes, reads, size = measure(store, args.mb, args.repeat)
    megabytes = size / 1_000_000
    ratio = reads.p50 / writes.p50
    rows = [
        ["write (`agents.remember`)", f"{writes.p50 / 1000:.2f}", f"{writes.p90 / 1000:.2f}",
         f"{megabytes / (writes.p50 / 1000):.0f}"],
        ["read (`store.working_node`)", f"{reads.p50 / 1000:.2f}", f"{reads.p90 / 1000:.2f}",
         f"{megabytes / (reads.p50 / 1000):.0f}"],
    ]
    verdict = "met" if ratio <= TARGET_RATIO else "missed"
    write_report("big_value", "One large value through the bridge worker: write and read back", [
        f"Value: one string of {megabytes:.1f} MB of UTF-8 (escapes and multi-byte characters included), "
        f"a new node per sample; {args.repeat} samples. Bridge in worker mode (`mnem serve --stdio`); "
        "the write is a durable commit (fsync); the read-back is checked equal to the value, untimed.",
        table(["operation", "p50 s", "p90 s", "MB/s at p50"], rows),
        f"Read / write at p50: **{ratio:.2f}x** (target ≤ {TARGET_RATIO:g}x: {verdict}).",
    ])


if __name__ == "__main__":
    main()
