"""Helpers shared by the bridge tests: fake ``mnem`` binaries."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

#: A valid self-description, so a fake passes the contract check and misbehaves afterwards.
DESCRIPTION = {
    "name": "mnem", "version": "9.9.9", "format_version": 1, "contract": 1,
    "implementation": "fake", "features": [],
}


def fake_mnem(directory: Path, body: str, *, describe: bool = True, name: str = "mnem") -> Path:
    """Write an executable Python script that stands in for ``mnem``.

    With ``describe``, ``--version --json`` answers with ``DESCRIPTION`` and
    every other invocation runs ``body`` (dedented; ``sys``, ``os``, ``json``,
    ``signal``, ``subprocess`` and ``time`` are imported).
    """
    prelude = "import json, os, signal, subprocess, sys, time\n"
    if describe:
        prelude += (f"if sys.argv[1:] == ['--version', '--json']:\n"
                    f"    print({json.dumps(json.dumps(DESCRIPTION))})\n    sys.exit(0)\n")
    path = directory / name
    path.write_text(f"#!{sys.executable}\n{prelude}{textwrap.dedent(body)}\n", encoding="utf-8")
    path.chmod(0o755)
    return path
