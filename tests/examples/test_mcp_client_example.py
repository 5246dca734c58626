"""The README's "run the main job" command: examples/mcp_client.py drives a real mnem-mcp over stdio."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_mcp_client_traces_the_misread_through_the_server(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(EXAMPLES / "mcp_client.py")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "why customer-4821" in done.stdout and "source billing-note-8842, step step-31" in done.stdout
    assert done.stdout.rstrip().endswith("All answers checked.")
    assert "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []  # the temporary store is gone


def test_given_a_folder_the_main_job_keeps_its_store_for_mnem_ui(tmp_path: Path) -> None:
    """The README's "See the memory" command: the example with ./support-memory, whose store mnem ui then opens."""
    done = subprocess.run([sys.executable, str(EXAMPLES / "mcp_client.py"), "./support-memory"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    blame = subprocess.run([str(Path(sys.executable).parent / "mnem"), "-C", str(tmp_path / "support-memory"),
                            "--json", "blame", "customer-4821"], capture_output=True, text=True, timeout=60)
    assert '"source":"billing-note-8842"' in blame.stdout, blame.stdout + blame.stderr
    again = subprocess.run([sys.executable, str(EXAMPLES / "mcp_client.py"), "./support-memory"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "a store already exists" in again.stderr and "Traceback" not in again.stderr
