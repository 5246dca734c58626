"""``mnem reindex`` (extension): rebuild the derived change index from every stored commit.

The index is never authoritative (each entry can be recomputed from two
states), so rebuilding it is always safe; it repairs a store whose index was
lost or written by a tool that does not maintain it.
"""

from __future__ import annotations

import argparse

from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    count = ctx.repo().rebuild_index()
    return Outcome({"commits": count}, f"Reindexed {count} commit(s)\n")
