"""``mnem log [REV]``: history from HEAD (or, an extension, from ``REV``), newest first.

With ``--json``, a commit that someone other than its author pushed into
this store carries ``pushed_by`` and ``pushed_at`` (``pushed``; an
extension: the text output stays upstream's).  Extensions filter it by
what each commit changed (``--touching PREFIX``,
``--thread T``), so a person debugging a LangGraph run sees one thread's
checkpoints and the memory commits between them on one timeline, and by
when it was made (``--since TIME``, ``--until TIME``).
"""

from __future__ import annotations

import argparse

from mnem_ids.checkpoints import CHECKPOINT_PREFIX

from ... import porcelain
from ...pushed import shown_all
from ..context import Context, Outcome, wall_time
from ..render import first_line, fmt_time, message_lines, short


def count(text: str) -> int:
    """A non-negative commit count, as clap's ``usize``."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"invalid value '{text}': expected a non-negative integer")
    return int(text)


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``log``'s options: where to start (extension), which parents to follow, how many commits, the format.

    The filters are options rather than git's ``-- PATH``: ``REV`` is
    optional, so a bare prefix after it could not be told from a revision.
    """
    parser.add_argument("rev", nargs="?",
                        help="start from this commit-ish, e.g. main~2 or main@{2026-12-01} (default: HEAD; extension)")
    parser.add_argument("--first-parent", action="store_true", help="follow only the first parent of each commit")
    parser.add_argument("-n", "--max-count", type=count, metavar="N", help="show at most this many commits")
    parser.add_argument("--oneline", action="store_true", help="one line per commit")
    parser.add_argument("--touching", action="append", default=[], metavar="PREFIX",
                        help="only commits that changed a node whose id starts with PREFIX; repeatable (extension)")
    parser.add_argument("--thread", action="append", default=[], metavar="THREAD",
                        help="only LangGraph thread THREAD's checkpoint commits and the memory commits (those "
                             f"changing no {CHECKPOINT_PREFIX} node); repeatable (extension)")
    parser.add_argument("--since", type=wall_time, metavar="TIME",
                        help="only commits dated at or after TIME: ISO 8601 (no offset: UTC) or Unix ms (extension)")
    parser.add_argument("--until", type=wall_time, metavar="TIME",
                        help="only commits dated at or before TIME: ISO 8601 (no offset: UTC) or Unix ms (extension)")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """List commits from HEAD (or ``REV``), newest first, in full or one line each."""
    entries = porcelain.log(ctx.repo(), first_parent=args.first_parent, limit=args.max_count, rev=args.rev,
                            touching=args.touching, threads=args.thread, since=args.since, until=args.until)
    data = shown_all(entries, porcelain.pushes_of(ctx.repo(), [raw for raw, _ in entries]))
    if not entries:  # a filter that matched nothing prints nothing, as git's does
        filtered = args.touching or args.thread or args.since is not None or args.until is not None
        return Outcome(data, "" if filtered else "no commits yet\n")
    paint = ctx.paint
    out: list[str] = []
    for raw, commit in entries:
        if args.oneline:
            out.append(f"{paint('75', short(raw))} {first_line(commit.message)}\n")
            continue
        out.append(f"commit {paint('75', raw.hex())}\n")
        out.append(f"Author: {paint('245', commit.author)}\n")
        out.append(f"Date:   {paint('245', fmt_time(commit.time))}\n\n")
        out.extend(f"    {line}\n" for line in message_lines(commit.message))
        out.append("\n")
    return Outcome(data, "".join(out))
