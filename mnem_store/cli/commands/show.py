"""``mnem show [REV]``: the memory at a commit (or working memory); ``--stat``: what it changed."""

from __future__ import annotations

import argparse

from ...errors import CommandError
from ..context import Context, Outcome
from ..render import compact
from ..views import memory_dict


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rev", nargs="?", help="a branch name or commit id")
    parser.add_argument("--stat", action="store_true", help="list the node ids this commit changed")
    parser.add_argument("--node", metavar="ID", help="only this node: its MemoryNode, or null (extension)")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    repo = ctx.repo()
    paint = ctx.paint
    with repo.db.read():
        if args.stat:
            if args.rev is not None:
                commit = repo.resolve(args.rev)
            else:
                commit = repo.head_commit()
                if commit is None:
                    raise CommandError("nothing to show: HEAD has no commit")
            changed = repo.changes_of(commit)
            ordered = {node_id: changed[node_id] for node_id in sorted(changed)}
            if not ordered:
                return Outcome(ordered, "no changes\n")
            signs = {"added": "+", "modified": "~", "removed": "-"}
            text = "".join(f"{paint.change(f'{signs[kind]} {node_id}', kind)}\n" for node_id, kind in ordered.items())
            return Outcome(ordered, text)
        if args.node is not None:  # one node: looked up alone, never loading the whole state
            raw = repo.working_node(args.node) if args.rev is None else repo.node_at(repo.resolve(args.rev), args.node)
            node = repo.node(raw) if raw is not None else None
            data = node.to_dict() if node else None
            text = f"{paint('75', args.node)}\n  {compact(node.content)}\n" if node else f"{paint('245', '(absent)')}\n"
            return Outcome(data, text)
        nodes = repo.working_nodes() if args.rev is None else repo.commit_nodes(repo.resolve(args.rev))
        memory = memory_dict(repo, nodes)
    if not memory:
        return Outcome(memory, f"{paint('245', '(empty)')}\n")
    text = "".join(f"{paint('75', node_id)}\n  {compact(node['content'])}\n" for node_id, node in memory.items())
    return Outcome(memory, text)
