"""What serving MCP loads: the stdio server never imports the PostgreSQL driver, numpy or LangGraph.

Those belong to other paths (a PostgreSQL store is ``mnem``'s business, in
its own process; LangGraph is the other adapter), so a ``mnem-mcp`` start
must not pay for them, nor need them installed to import.
"""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("psycopg", "psycopg_pool", "numpy", "langgraph", "langchain_core")


def test_the_mcp_server_imports_none_of_the_other_paths_packages() -> None:
    code = ("import sys, mnem_mcp, mnem_mcp.cli, mnem_mcp.server, mnem_mcp.http; "
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]", done.stdout
