"""The official MCP conformance suite (npm ``@modelcontextprotocol/conformance``) against ``mnem-mcp`` over HTTP.

The suite connects to a real ``mnem-mcp --transport streamable-http`` as a
client and checks its wire behaviour against the spec, once per spec
revision: 2025-11-25 (the ``initialize`` handshake and sessions) and
2026-07-28 (stateless).  The server is ``mnem-mcp`` run through
``conformance_server.py``, which adds the tools, resources and prompts of
the suite's reference server that many scenarios call
(``conformance_fixtures.py``); the memory tools are served beside them.
``conformance-expected-failures.yml`` lists the
scenarios expected to fail, each with its reason; the suite itself fails
the run on any other failure and on an entry that passes.
``bin/install-inspector`` installs the suite (pinned) under ``.cache/npm/``;
CI runs it before the tests, so a missing suite fails here instead of
skipping.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import new_store
from http_support import HttpServer

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / ".cache" / "npm" / "bin" / "mcp-conformance"
EXPECTED = Path(__file__).with_name("conformance-expected-failures.yml")
#: ``mnem-mcp`` with the suite's reference fixtures (test code, so not a flag of the product).
FIXTURE_SERVER = Path(__file__).with_name("conformance_server.py")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    store = new_store(tmp_path_factory.mktemp("conformance") / "store", "sqlite")
    served = HttpServer(store, ["--auth", "none"], program=[sys.executable, str(FIXTURE_SERVER)])
    try:
        yield served
    finally:
        served.stop()


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
def test_the_conformance_suite_passes_but_for_the_expected_failures(
        server: HttpServer, revision: str, tmp_path: Path) -> None:
    if not SUITE.exists():
        pytest.fail(f"the MCP conformance suite is not installed at {SUITE}: run bin/install-inspector")
    argv = [str(SUITE), "server", "--url", server.url, "--requirements", revision,
            "--expected-failures", str(EXPECTED), "-o", str(tmp_path)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path, stdin=subprocess.DEVNULL)
    summary = done.stdout[done.stdout.find("=== SUMMARY ==="):]
    assert done.returncode == 0, f"{summary}\n{done.stderr}\nserver log (end):\n{server.stderr()[-1500:]}"


def test_every_expected_failure_gives_its_reason() -> None:
    entries = [line for line in EXPECTED.read_text().splitlines() if line.lstrip().startswith("- ")]
    unexplained = [line for line in entries if not re.search(r"\S\s+#\s+\S", line)]
    assert unexplained == []
