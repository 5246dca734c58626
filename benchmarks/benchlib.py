"""Shared pieces of the benchmark scripts: timing, the machine, markdown output.

The scripts run the engine in-process (no ``mnem`` process start), so what
they time is the store itself.  They are run by hand, not in CI.
"""

from __future__ import annotations

import compileall
import os
import platform
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

__all__ = ["RESULTS", "Samples", "dir_size", "machine", "table", "timed", "write_report"]

RESULTS = Path(__file__).parent / "results"


class Samples:
    """Durations in seconds, reported in milliseconds."""

    def __init__(self, seconds: Iterable[float] = ()) -> None:
        self.seconds = sorted(seconds)

    def add(self, seconds: float) -> None:
        self.seconds.append(seconds)
        self.seconds.sort()

    def _rank(self, fraction: float) -> float:
        """Nearest-rank percentile, in ms."""
        index = max(0, min(len(self.seconds) - 1, round(fraction * len(self.seconds) + 0.5) - 1))
        return self.seconds[index] * 1000

    @property
    def p50(self) -> float:
        return self._rank(0.5)

    @property
    def p90(self) -> float:
        return self._rank(0.9)

    @property
    def p95(self) -> float:
        return self._rank(0.95)

    @property
    def p99(self) -> float:
        return self._rank(0.99)


def timed(action: Callable[[], object], repeat: int, setup: Callable[[], object] | None = None) -> Samples:
    """Time ``action`` ``repeat`` times; ``setup`` runs before each, untimed."""
    samples = Samples()
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter()
        action()
        samples.add(time.perf_counter() - start)
    return samples


def compile_packages() -> None:
    """Write our packages' bytecode, as installing a wheel does, before timing any process start.

    An editable install under ``PYTHONDONTWRITEBYTECODE`` would otherwise
    compile every changed module from source on each start and time that.
    """
    root = Path(__file__).resolve().parent.parent
    for package in ("mnem_ids", "mnem_store", "mnem_bridge", "mnem_mcp", "mnem_langgraph"):
        compileall.compile_dir(root / package, quiet=1)


def machine() -> list[str]:
    """What the numbers were measured on."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip() or str(os.cpu_count())
    return [
        f"- machine: `nproc` = {nproc}, CPU {cpu}",
        f"- Python {platform.python_version()} ({sys.implementation.name}), SQLite {sqlite3.sqlite_version}",
        f"- command: `{' '.join([Path(sys.executable).name, _shown(sys.argv[0]), *sys.argv[1:]])}`",
    ]


def _shown(script: str) -> str:
    """The script as run from the repository root, so reports carry no machine paths."""
    path = Path(script).resolve()
    try:
        return str(path.relative_to(Path(__file__).resolve().parent.parent))
    except ValueError:
        return path.name


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


def write_report(name: str, title: str, sections: Iterable[str | list[str]]) -> Path:
    """Write ``results/<name>.md`` (title, machine, then the sections) and echo it."""
    RESULTS.mkdir(exist_ok=True)
    lines = [f"# {title}", "", *machine(), ""]
    for section in sections:
        lines += [section] if isinstance(section, str) else section
        lines.append("")
    text = "\n".join(lines)
    path = RESULTS / f"{name}.md"
    path.write_text(text)
    print(text)
    return path


def dir_size(path: Path) -> int:
    """Bytes of every file under ``path``."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
