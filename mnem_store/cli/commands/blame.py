"""``mnem blame NODE [REV]``: the commit and provenance that introduced a node's current value.

``--json`` answers the SDK's ``Blame`` (``{"commit", "node", "time"}``) plus
``author``, the blamed commit's author: provenance says where a value came
from, the author says which agent wrote it (an extension; the text output
is upstream's, without it); and ``pushed_by`` / ``pushed_at`` when someone
other than the author pushed that commit into this store (``pushed``).
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ...blame import Blame
from ...pushed import shown
from ..context import Context, Outcome
from ..render import DIM, ID, WARN, Painter, first_line, fmt_time, short, value_text


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``blame``'s arguments: the node and the revision to blame it at."""
    parser.add_argument("node_id", metavar="NODE_ID", help="the node id to blame")
    parser.add_argument("rev", nargs="?", help="blame as of this branch or commit (default: HEAD)")


def _render(found: Blame, message: str, paint: Painter) -> str:
    """Upstream's blame block: id and time, the commit's subject, the content, the provenance."""
    lines = [
        f"{paint(ID, short(found.commit))}  {paint(DIM, fmt_time(found.time))}",
        f"  {paint(DIM, 'commit: ')} {first_line(message)}",
        f"  {paint(DIM, 'content:')} {value_text(found.node)}",
    ]
    shown = found.node.provenance.labelled().items()
    lines.extend(f"  {paint(DIM, f'{label}:')} {paint(WARN, value)}" for label, value in shown)
    if not shown:
        lines.append(f"  {paint(DIM, '(no provenance recorded)')}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Blame one node: the commit that set its current value, and that value's provenance."""
    found, commit = porcelain.blame(ctx.repo(), args.node_id, args.rev)
    pushed = shown(commit, porcelain.pushes_of(ctx.repo(), [found.commit]).get(found.commit))
    return Outcome({**found.to_dict(), "author": commit.author, **pushed}, _render(found, commit.message, ctx.paint))
