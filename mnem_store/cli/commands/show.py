"""``mnem show [REV]``: the memory at a commit (or working memory); ``--stat``: what it changed."""

from __future__ import annotations

import argparse

from ... import porcelain
from ..context import Context, Outcome
from ..render import compact


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``show``'s arguments: the revision, and ``--stat`` or ``--node`` to show less."""
    parser.add_argument("rev", nargs="?", help="a branch name or commit id")
    parser.add_argument("--stat", action="store_true", help="list the node ids this commit changed")
    parser.add_argument("--node", metavar="ID", help="only this node: its MemoryNode, or null (extension)")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print the memory at ``REV`` (working memory without one), one node, or what a commit changed."""
    repo = ctx.repo()
    paint = ctx.paint
    if args.stat:
        ordered = porcelain.show_stat(repo, args.rev)
        if not ordered:
            return Outcome(ordered, "no changes\n")
        signs = {"added": "+", "modified": "~", "removed": "-"}
        text = "".join(f"{paint.change(f'{signs[kind]} {node_id}', kind)}\n" for node_id, kind in ordered.items())
        return Outcome(ordered, text)
    if args.node is not None:  # one node: looked up alone, never loading the whole state
        node = porcelain.show_node(repo, args.node, args.rev)
        data = node.to_dict() if node else None
        text = f"{paint('75', args.node)}\n  {compact(node.content)}\n" if node else f"{paint('245', '(absent)')}\n"
        return Outcome(data, text)
    memory = {node_id: node.to_dict() for node_id, node in porcelain.show(repo, args.rev).items()}
    if not memory:
        return Outcome(memory, f"{paint('245', '(empty)')}\n")
    return Outcome(memory, lambda: "".join(
        f"{paint('75', node_id)}\n  {compact(node['content'])}\n" for node_id, node in memory.items()))
