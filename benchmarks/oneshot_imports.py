"""What a one-shot ``mnem --json`` read spends before it reads: its imports, module by module.

``ops.py`` times the whole process next to ``python -c pass``.  This script
shows where the difference goes: ``python -X importtime`` of the same
one-shot read, repeated, each module's own import time (without what it
imports) summed by the package it belongs to: our own modules, each
third-party package, and the standard library modules our code (or a
dependency) pulls in that a bare interpreter does not.  The interpreter's
own start-up (``site``, the editable-install finder, which ``python -c
pass`` pays too) is listed apart.

Usage: ``python benchmarks/oneshot_imports.py [--runs N]``; writes
``benchmarks/results/oneshot_imports.md``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import compile_packages, table, write_report

BIN = Path(sys.executable).parent
OURS = ("mnem_ids", "mnem_store", "mnem_bridge", "mnem_mcp", "mnem_langgraph")
THIRD_PARTY = ("orjson", "cbor2", "blake3", "platformdirs", "psycopg", "numpy")


def imports(command: list[str]) -> dict[str, float]:
    """Each module's own import time (µs) in one run of ``command`` under ``-X importtime``."""
    done = subprocess.run([sys.executable, "-X", "importtime", *command], capture_output=True, text=True, check=True)
    own: dict[str, float] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = line.removeprefix("import time:").split("|")
        own[name.strip()] = float(self_us)
    return own


def group(name: str, bare: set[str]) -> str:
    """The row a module is counted in."""
    top = name.split(".")[0]
    if top in OURS:
        return f"our code ({top})"
    if top in THIRD_PARTY or top.startswith("_cbor2"):
        return f"third party: {top.lstrip('_')}"
    if name in bare or top in ("site", "sitecustomize") or "editable" in name:
        return "interpreter start-up (python -c pass imports these too)"
    return f"standard library: {top}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs to take the median of")
    args = parser.parse_args()
    compile_packages()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        subprocess.run([str(BIN / "mnem"), "init", str(store)], check=True, capture_output=True)
        subprocess.run([str(BIN / "mnem"), "-C", str(store), "add", "plan", "pro"], check=True, capture_output=True)
        subprocess.run([str(BIN / "mnem"), "-C", str(store), "commit", "-m", "m"], check=True, capture_output=True)
        bare = set(imports(["-c", "pass"]))
        runs = [imports(["-m", "mnem_store", "-C", str(store), "--json", "show", "--node", "plan"])
                for _ in range(args.runs)]
    totals: dict[str, list[float]] = defaultdict(list)
    for run in runs:
        by_group: dict[str, float] = defaultdict(float)
        for name, micros in run.items():
            by_group[group(name, bare)] += micros
        for name, micros in by_group.items():
            totals[name].append(micros)
    medians = sorted(((statistics.median(v) / 1000, k) for k, v in totals.items()), reverse=True)
    everything = sum(ms for ms, _ in medians)
    rows = [[name, f"{ms:.1f}", f"{ms / everything:.0%}"] for ms, name in medians if ms >= 0.3]
    write_report("oneshot_imports", "One-shot start-up: what `mnem --json show --node` imports", [
        "`python -X importtime -m mnem_store --json show --node plan` (what the `mnem` script runs), "
        f"{args.runs} runs; each module's own "
        "import time (without what it imports) summed by where it comes from, median per row; rows under 0.3 ms "
        "left out. Run under `-X importtime`, so every figure is inflated a little alike.",
        table(["imported", "ms", "share"], rows),
    ])


if __name__ == "__main__":
    main()
