"""docs/security.md names a test for every claim: each test it names must exist, so a claim cannot lose its test.

The threat model cites tests as ``tests/PATH.py::name``, or as ``::name``
for another test of the file cited just before, or as a whole file.  A
renamed or deleted test turns its claim into an unheld promise; this finds
it.  It also holds the page to every party issue #44 names.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "security.md"
#: A cited test: a file (``tests/...py`` or a bare ``test_*.py`` under tests/), and optionally ``::name``.
CITED = re.compile(r"`((?:tests/)?[\w/]*test_\w+\.py)?(?:::(\w+))?`")
PARTIES = ("## The local user", "## An agent over stdio", "## An HTTP client, by scope", "## A tenant",
           "## A remote we fetch from", "## A client that pushes", "## A LangGraph app reading checkpoints")


def test_every_test_the_threat_model_names_exists() -> None:
    text = DOC.read_text()
    last: Path | None = None
    cited = 0
    for match in CITED.finditer(text):
        name, function = match.groups()
        if name is None and function is None:
            continue
        if name is not None:
            found = [path for path in (ROOT / name, *ROOT.joinpath("tests").rglob(name)) if path.is_file()]
            assert found, f"docs/security.md cites {name}, which is not a file of the suite"
            last = found[0]
        if function is not None:
            assert last is not None, f"docs/security.md cites ::{function} before any file"
            source = last.read_text()
            assert re.search(rf"^(?:async )?def {function}\(", source, re.MULTILINE), \
                f"docs/security.md cites {last.relative_to(ROOT)}::{function}, which that file does not define"
        cited += 1
    assert cited > 50


def test_the_threat_model_names_every_party() -> None:
    text = DOC.read_text()
    assert [party for party in PARTIES if party not in text] == []
