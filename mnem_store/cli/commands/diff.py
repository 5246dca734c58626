"""``mnem diff [FROM [TO]]``, ``mnem diff A..B`` and ``mnem diff A...B``: what changed between two memory states.

The first forms are upstream's.  The range forms are git's, an extension:
``A..B`` is ``diff A B``, and ``A...B`` is what merging B into A would
propose (B against the merge base of the two), each change with the commit
on B that made it, so a reviewer sees which beliefs a branch changes and
why.  Branch names cannot hold ``..`` and a commit prefix is hex, so no
revision of upstream's reads as a range.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ... import porcelain
from ...errors import UsageError
from ..context import Context, Outcome
from ..render import DIM, ID, Painter, first_line, fmt_time, marker, short, value_text

if TYPE_CHECKING:
    from ...review import ChangedBy


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``diff``'s arguments: the two states, and how much of each change to show."""
    parser.add_argument("from_", metavar="FROM", nargs="?",
                        help="a branch or commit (default: the HEAD commit); A..B or A...B for a range")
    parser.add_argument("to", nargs="?", help="a branch or commit (default: working memory)")
    parser.add_argument("--stat", action="store_true", help="one classified line per node, no content")
    parser.add_argument("--name-only", action="store_true", help="just the changed node ids")


def split_range(spec: str) -> tuple[str, str, bool] | None:
    """``A...B`` or ``A..B`` as ``(A, B, three_dots)``, an empty side being ``HEAD`` as in git; None for a revision.

    The first ``...`` wins over ``..``, so ``A...B`` is never read as ``A`` and ``.B``.
    """
    for dots in ("...", ".."):
        left, found, right = spec.partition(dots)
        if found:
            return left or "HEAD", right or "HEAD", dots == "..."
    return None


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """List the changed nodes with old and new content (less with ``--stat`` or ``--name-only``)."""
    repo = ctx.repo()
    ranged = split_range(args.from_) if args.from_ is not None else None
    if ranged is not None and args.to is not None:
        raise UsageError(f"`mnem diff {args.from_}` names both sides already; drop {args.to!r}, "
                         "or give two revisions without dots")
    if ranged is not None and ranged[2]:
        return _proposed(porcelain.diff_proposed(repo, ranged[0], ranged[1]), ranged[1], args, ctx.paint)
    old, new = (ranged[0], ranged[1]) if ranged is not None else (args.from_, args.to)
    changes = porcelain.diff(repo, old, new)
    data = [c.to_dict() for c in changes]
    if not changes:
        return Outcome(data, "no changes\n")
    return Outcome(data, _render(changes, [None] * len(changes), args, ctx.paint))


def _proposed(proposal: porcelain.Proposal, branch: str, args: argparse.Namespace, paint: Painter) -> Outcome:
    """``A...B``: the changes with a ``by`` each, and in text a header naming the merge base and a ``by`` line."""
    data = [proposed.to_dict() for proposed in proposal.changes]
    if not data:
        return Outcome(data, "no changes\n")
    changes = [proposed.change for proposed in proposal.changes]
    body = _render(changes, [proposed.by for proposed in proposal.changes], args, paint)
    if args.name_only:
        return Outcome(data, body)
    head = f"Changes on {branch} since the merge base {paint(ID, short(proposal.base))}:\n"
    return Outcome(data, head + body)


def _render(changes: Sequence[porcelain.NodeChange], by: Sequence[ChangedBy | None], args: argparse.Namespace,
            paint: Painter) -> str:
    """Upstream's lines per change, and after each change's a ``by`` line where one is given (``A...B``)."""
    lines: list[str] = []
    for change, made in zip(changes, by, strict=True):
        if args.name_only:
            lines.append(change.id)
            continue
        lines.append(paint.change(f"{marker(change.kind)} {change.id}", change.kind))
        if not args.stat:
            if change.old is not None:
                lines.append(paint("167", f"  - {value_text(change.old)}"))
            if change.new is not None:
                lines.append(paint("71", f"  + {value_text(change.new)}"))
        if made is not None:
            lines.append(f"  {paint(DIM, 'by')} {made.author} in {paint(ID, short(made.commit))} "
                         f"{paint(DIM, f'({fmt_time(made.time)})')}: {first_line(made.message)}")
    return "\n".join(lines) + "\n"
