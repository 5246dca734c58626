"""``mnem gc`` (extension): drop the commits and objects nothing reaches any more, and give their space back.

What reaches a commit: a branch, HEAD, a remote's tracking branch; what is
kept besides: what those commits need, staged objects and redacted objects
with their records (``mnem_store.collect``).  ``--dry-run`` counts what
would go and changes nothing.
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome


def register(parser: argparse.ArgumentParser) -> None:
    """``gc [--dry-run] [--plain-vacuum]``."""
    parser.add_argument("--dry-run", action="store_true",
                        help="count what would be dropped, and change nothing")
    parser.add_argument("--plain-vacuum", action="store_true",
                        help="do not rewrite the store's files: they keep their size and later writes reuse the "
                        "space (SQLite: no VACUUM; PostgreSQL: a plain VACUUM, which holds no reader up)")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Collect the store's garbage; the result says what went and the store's size before and after."""
    done = porcelain.gc(ctx.repo(), dry_run=args.dry_run, rewrite=not args.plain_vacuum)
    if done.dry_run:
        text = f"(dry run) would drop {done.commits} commit(s) and {done.objects} object(s)\n"
    else:
        text = (f"dropped {done.commits} commit(s) and {done.objects} object(s); the store went from "
                f"{done.before} to {done.after} bytes\n")
    return Outcome(done.to_dict(), text)
