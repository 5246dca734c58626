"""``mnem reindex`` (extension): check every commit's state against its id and repair what is derived.

States are stored as per-commit change rows (``mnem_store.states``).  Reindex
rebuilds each commit's state, requires it to hash to the commit's state id,
rewrites the change kinds from the verified states and replaces any snapshot
whose bytes no longer hash to their id.  Damaged change rows cannot be
rebuilt from anything else, so they are reported as a corrupt store.
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    """``reindex`` takes no arguments of its own."""


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Check every commit's state and re-derive what can be; the result is how many commits were checked."""
    count = porcelain.reindex(ctx.repo())
    return Outcome({"commits": count}, f"Reindexed {count} commit(s)\n")
