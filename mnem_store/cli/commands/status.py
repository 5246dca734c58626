"""``mnem status``: branch, tip, and what is staged."""

from __future__ import annotations

import argparse

from ...repo import diff_nodes
from ..context import Context, Outcome
from ..render import first_line, marker, short
from ..views import change_dict


def register(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    repo = ctx.repo()
    paint = ctx.paint
    with repo.db.read():
        head = repo.head()
        tip = repo.head_commit()
        changes = diff_nodes(repo.commit_nodes(tip), repo.working_nodes())
        staged = repo.staged()
        deletions = repo.staged_deletions()
        tip_message = first_line(repo.commit_obj(tip).message) if tip else ""
        data = {
            "head": head.text,
            "branch": head.branch,
            "commit": tip.hex() if tip else None,
            "staged": [{"id": node_id, "object": raw.hex()} for node_id, raw in staged],
            "staged_deletions": deletions,
            "changes": [change_dict(repo, c) for c in changes],
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
        lines.extend(f"  {paint.change(f'{marker(c)} {c.id}', c.kind)}" for c in changes)
    return Outcome(data, "\n".join(lines) + "\n")
