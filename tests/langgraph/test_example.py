"""The worked example runs as a user would run it, and its story holds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph_memory.py"


def test_langgraph_memory_example_tells_its_story(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # where its temporary store goes, and must be gone from
    run = subprocess.run([sys.executable, str(EXAMPLE)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "merged hypothesis/ticket-4411 (merged)" in run.stdout
    assert "abandoned hypothesis/ticket-4502" in run.stdout
    assert "source=billing-export-2291" in run.stdout
    assert run.stdout.endswith("ok: the memory tells the story\n")
    assert list(tmp_path.iterdir()) == []  # nothing left behind


def test_the_store_it_leaves_in_dir_is_a_normal_store(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, str(EXAMPLE), str(tmp_path / "memory")], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    blame = subprocess.run([str(Path(sys.executable).with_name("mnem")), "-C", str(tmp_path / "memory"),
                            "blame", "customers:acme:seats"], capture_output=True, text=True, timeout=60)
    assert "billing-export-2291" in blame.stdout
