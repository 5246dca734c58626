"""``mnem diff [FROM [TO]]``: what changed between two memory states."""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome
from ..render import compact, marker


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``diff``'s arguments: the two states, and how much of each change to show."""
    parser.add_argument("from_", metavar="FROM", nargs="?", help="a branch or commit (default: the HEAD commit)")
    parser.add_argument("to", nargs="?", help="a branch or commit (default: working memory)")
    parser.add_argument("--stat", action="store_true", help="one classified line per node, no content")
    parser.add_argument("--name-only", action="store_true", help="just the changed node ids")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """List the changed nodes with old and new content (less with ``--stat`` or ``--name-only``)."""
    repo = ctx.repo()
    paint = ctx.paint
    changes = porcelain.diff(repo, args.from_, args.to)
    data = [c.to_dict() for c in changes]
    if not changes:
        return Outcome(data, "no changes\n")
    lines: list[str] = []
    for change, view in zip(changes, data, strict=True):
        if args.name_only:
            lines.append(change.id)
            continue
        lines.append(paint.change(f"{marker(change.kind)} {change.id}", change.kind))
        if args.stat:
            continue
        if view["old"] is not None:
            lines.append(paint("167", f"  - {compact(view['old']['content'])}"))
        if view["new"] is not None:
            lines.append(paint("71", f"  + {compact(view['new']['content'])}"))
    return Outcome(data, "\n".join(lines) + "\n")
