"""``mnem-mcp`` with the conformance suite's reference fixtures beside the memory tools (run as a script).

The fixtures are test code (``conformance_fixtures.py``), so the product has
no flag for them: this script runs the real ``mnem_mcp.cli.main`` with its
arguments, adding the fixtures to the server it builds.
"""

from __future__ import annotations

import sys
from typing import Any

from conformance_fixtures import add_fixtures  # this script's folder is on its path

import mnem_mcp.server
from mnem_mcp import cli

_build_server = mnem_mcp.server.build_server


def build_server_with_fixtures(*args: Any, **kwargs: Any) -> mnem_mcp.server.MnemServer:
    """``build_server``, then the fixtures."""
    server = _build_server(*args, **kwargs)
    add_fixtures(server)
    return server


mnem_mcp.server.build_server = build_server_with_fixtures  # cli imports it when it builds the server

if __name__ == "__main__":
    sys.exit(cli.main())
