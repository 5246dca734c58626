"""``mnem-mcp --port``: the same rule as ``mnem ui --port`` (issue #45, point 9).

``--port 0`` picks a free port, and the log line says which one it got; a
port that is taken is refused before anything is said to listen, naming the
two ways out; over stdio, ``--port`` (0 included) is refused with a message
that reads as English.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
from mcp_support import MNEM_MCP, server_env

LISTENING = re.compile(r"mnem-mcp: INFO mnem_mcp\.http: listening on http://127\.0\.0\.1:(\d+)/mcp "
                       r"\(no authentication\)")


@contextmanager
def started(*argv: str) -> Iterator[subprocess.Popen[str]]:
    """``mnem-mcp`` with ``argv``, its stderr a pipe; ended (SIGTERM, then reaped) on exit."""
    proc = subprocess.Popen([MNEM_MCP, *argv], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=server_env())
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)


def test_port_0_picks_a_free_port_and_logs_the_one_it_got(tmp_path: Path) -> None:
    with started("--store", str(tmp_path / "hub"), "--transport", "http", "--auth", "none", "--port", "0") as proc:
        assert proc.stderr is not None
        lines = []
        for line in proc.stderr:  # the server's own log decides when it listens
            lines.append(line)
            if found := LISTENING.fullmatch(line.strip()):
                break
        else:
            raise AssertionError(f"mnem-mcp ended without a listening line:\n{''.join(lines)}")
        port = int(found[1])
        assert port != 0
        answer = httpx2.get(f"http://127.0.0.1:{port}/mcp/sync/refs", timeout=30)
        assert answer.status_code == 200 and answer.json()["head"] is not None, answer.text


def test_a_taken_port_is_refused_before_anything_claims_to_listen(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([MNEM_MCP, "--store", str(tmp_path / "hub"), "--transport", "http", "--auth", "none",
                               "--port", str(port)], capture_output=True, text=True, env=server_env(), timeout=60,
                              stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert "listening on" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"mnem-mcp: ERROR mnem_mcp.cli: cannot listen on 127.0.0.1:{port} (Address already in use); pick another "
        "with --port N, or --port 0 for any free port"), done.stderr


def test_port_over_stdio_is_refused_in_english_for_0_too(tmp_path: Path) -> None:
    for argv, says in [(["--port", "0"], "--port applies to HTTP only: add --transport streamable-http"),
                       (["--port", "0", "--host", "127.0.0.1"],
                        "--host, --port apply to HTTP only: add --transport streamable-http")]:
        done = subprocess.run([MNEM_MCP, "--store", str(tmp_path / "s"), *argv], capture_output=True, text=True,
                              env=server_env(), timeout=60, stdin=subprocess.DEVNULL)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines()[-1] == f"mnem-mcp: error: {says}", done.stderr
