"""The worked examples run, as users would run them, and assert their own outcomes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_support_agent_traces_the_misread(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(EXAMPLES / "support_agent.py")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "billing-note-8842" in done.stdout and "step-31" in done.stdout
    assert done.stdout.rstrip().endswith(
        "OK: the wrong belief is traced to billing-note-8842 at step-31 and undone by one revert.")
    assert list(tmp_path.iterdir()) == []  # nothing left behind
