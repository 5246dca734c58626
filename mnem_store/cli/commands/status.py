"""``mnem status``: branch, tip, and what is staged."""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome
from ..render import first_line, marker, short


def register(parser: argparse.ArgumentParser) -> None:
    """``status`` takes no arguments of its own."""


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Report HEAD, its tip commit, and what is staged."""
    paint = ctx.paint
    found = porcelain.status(ctx.repo())
    head, tip, changes = found.head, found.tip, found.changes
    tip_message = first_line(found.tip_subject)
    data = {
        "head": head.text,
        "branch": head.branch,
        "commit": tip.hex() if tip else None,
        "staged": [{"id": node_id, "object": raw.hex()} for node_id, raw in found.staged],
        "staged_deletions": found.deletions,
        "changes": [c.to_dict() for c in changes],
        "format_version": found.format_version,
    }
    lines = [
        f"On branch {paint('140', head.branch)}" if head.branch is not None
        else f"HEAD detached at {paint('75', short(head.commit or b''))}",
        f"  {paint('75', short(tip))}  {tip_message}" if tip else f"  {paint('245', '(no commits yet)')}",
    ]
    if not changes:
        lines.append("nothing staged")
    else:
        lines.append("Staged:")
        lines.extend(f"  {paint.change(f'{marker(c.kind)} {c.id}', c.kind)}" for c in changes)
    return Outcome(data, "\n".join(lines) + "\n")
