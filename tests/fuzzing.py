"""The fuzz suite's tally: how many inputs each hostile surface was tried with, stated at the end of every run.

Each fuzz test (hypothesis, over a surface another party reaches) calls
``tried(SURFACE)`` once per input its body runs with, and asserts what the
issue #44 asks of every input: no traceback, no 500, no untyped error, no
changed store on a refusal, no ref to a missing commit.  The counts are a
pytest process's; under xdist each worker hands its own to the controller
(``tests/conftest.py``), which prints the sums (``summary``).  They count
inputs actually run, so a surface that hypothesis could not fill shows it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

__all__ = ["SURFACES", "TRIED", "summary", "tried"]

#: Every surface the suite fuzzes, in the order the summary lists them, and what is thrown at it.
SURFACES: Mapping[str, str] = {
    "packs": "packs a peer sends (mutated real packs and built ones), taken on both backends",
    "pack records": "the redaction records a version 2 pack carries (hostile fields, ids and bounds), both backends",
    "sync requests": "sync routes' bodies, query strings and headers, over real HTTP",
    "http bodies and headers": "the MCP endpoint's bodies and headers, over real HTTP",
    "token claims": "signed tokens with malformed claims, over real HTTP",
    "write documents": "mnem write / add payloads, on both backends",
    "mcp tool arguments": "tool arguments over the real MCP protocol, on both backends",
    "stdio lines": "raw lines on mnem-mcp's stdin",
    "checkpoint nodes": "malformed checkpoint nodes read by MnemosyneSaver, on both backends",
}

#: Inputs tried in this pytest process, by surface.
TRIED: Counter[str] = Counter()


def tried(surface: str) -> None:
    """Count one input thrown at ``surface`` (one of ``SURFACES``)."""
    assert surface in SURFACES, f"an unknown fuzz surface {surface!r}: add it to tests/fuzzing.py"
    TRIED[surface] += 1


def summary(counts: Mapping[str, int]) -> list[str]:
    """The lines the run ends with: the total, then each surface's count (none when no fuzz test ran)."""
    total = sum(counts.values())
    if not total:
        return []
    lines = [f"fuzz: {total} hostile inputs tried; none gave a traceback, a 500, an untyped error, a changed store "
             "on refusal or a ref to a missing commit"]
    lines += [f"  {counts.get(surface, 0):>6}  {surface}: {what}" for surface, what in SURFACES.items()]
    return lines
