"""``mnem show [REV]``: the memory at a commit (or working memory); ``--stat``: what it changed.

Extensions: ``--node ID`` shows one node, ``--limit N`` (with
``--cursor ID`` and ``--prefix TEXT``) one page of memory in id order, as
``{"memory": {id: node}, "next_cursor": ID | null}``, and ``--valid-at
TIME`` what was true at a time by the facts' own event times
(``mnem_store.validtime``), in the same shapes.
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ...errors import InvalidRefError, UsageError
from ..context import Context, Outcome, wall_time
from ..render import value_text


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``show``'s arguments: the revision, and ``--stat``, ``--node`` or a page to show less."""
    parser.add_argument("rev", nargs="?", help="a branch name or commit id (extension: main~2, main@{2026-12-01})")
    parser.add_argument("--stat", action="store_true", help="list the node ids this commit changed")
    parser.add_argument("--node", metavar="ID", help="only this node: its MemoryNode, or null (extension)")
    parser.add_argument("--limit", type=int, metavar="N",
                        help="one page: at most N nodes in id order, and where the next page starts (extension)")
    parser.add_argument("--cursor", metavar="ID", help="with --limit: start after this id (a next_cursor)")
    parser.add_argument("--prefix", metavar="TEXT", action="append",
                        help="with --limit: only ids that start with TEXT (repeatable)")
    parser.add_argument("--valid-at", type=wall_time, metavar="TIME",
                        help="what was true at TIME by the facts' event times (else their commit times), along "
                             "REV's first-parent line; ISO 8601 (no offset: UTC) or Unix ms (extension)")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Print the memory at ``REV`` (working memory without one), one node, one page, or what a commit changed.

    A ``REV`` that names no commit but is a fact's id (``mnem show plan``, where ``--node plan`` was meant)
    is refused with that hint.
    """
    try:
        return _show(args, ctx)
    except InvalidRefError as error:
        if args.rev is None or args.node is not None or porcelain.show_node(ctx.repo(), args.rev, None) is None:
            raise
        import shlex  # for this hint alone: a one-shot read that succeeds never loads it

        raise InvalidRefError(f"{error.detail}; {args.rev!r} is a fact in memory: to see it, run "
                              f"mnem show --node {shlex.quote(args.rev)}") from error


def _show(args: argparse.Namespace, ctx: Context) -> Outcome:
    """``run`` itself."""
    repo = ctx.repo()
    paint = ctx.paint
    if args.valid_at is not None:
        return _valid(args, ctx)
    if args.stat:
        ordered = porcelain.show_stat(repo, args.rev)
        if not ordered:
            return Outcome(ordered, "no changes\n")
        signs = {"added": "+", "modified": "~", "removed": "-"}
        text = "".join(f"{paint.change(f'{signs[kind]} {node_id}', kind)}\n" for node_id, kind in ordered.items())
        return Outcome(ordered, text)
    if args.node is not None:  # one node: looked up alone, never loading the whole state
        node = porcelain.show_node(repo, args.node, args.rev)
        if node is None:
            return Outcome(None, f"{paint('245', '(absent)')}\n")
        return Outcome(node.to_dict(), lambda: f"{paint('75', args.node)}\n  {value_text(node)}\n")
    if args.limit is None and (args.cursor is not None or args.prefix):
        raise UsageError("--cursor and --prefix page through memory: give --limit N too")
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit must be at least 1, got {args.limit}")
    from ..documents import node_documents  # a page's nodes as JSON: a read of one node never loads it

    page = porcelain.page(repo, args.rev, prefixes=args.prefix, cursor=args.cursor, limit=args.limit)
    memory = node_documents(repo, page.nodes) if ctx.json else None  # text mode reads the nodes in _page_text
    if args.limit is None:  # upstream's document: the map itself
        return Outcome(memory, lambda: _page_text(ctx, page))
    return Outcome({"memory": memory, "next_cursor": page.next_cursor}, lambda: _page_text(ctx, page))


def _valid(args: argparse.Namespace, ctx: Context) -> Outcome:
    """``--valid-at``: the memory (or ``--node``'s node) valid at a time, in ``show``'s shapes."""
    if args.stat or args.limit is not None or args.cursor is not None or args.prefix:
        raise UsageError("--valid-at reads the whole memory or one --node; it does not combine with --stat, "
                         "--limit, --cursor or --prefix")
    repo = ctx.repo()
    valid = porcelain.valid_at(repo, args.valid_at, args.rev, None if args.node is None else [args.node])
    nodes = {node_id: entry.object for node_id, entry in valid.items()}
    if args.node is not None:
        raw = nodes.get(args.node)
        node = None if raw is None else porcelain.load_nodes(repo, [raw])[raw]
        if node is None:
            return Outcome(None, f"{ctx.paint('245', '(absent)')}\n")
        return Outcome(node.to_dict(), lambda: f"{ctx.paint('75', args.node)}\n  {value_text(node)}\n")
    from ..documents import node_documents

    page = porcelain.Page(nodes, None)
    return Outcome(node_documents(repo, nodes) if ctx.json else None, lambda: _page_text(ctx, page))


def _page_text(ctx: Context, page: porcelain.Page) -> str:
    """The nodes as upstream's ``show`` prints memory, then (for a page) how to ask for the next one."""
    if not page.nodes:
        return f"{ctx.paint('245', '(empty)')}\n"
    loaded = porcelain.load_nodes(ctx.repo(), list(page.nodes.values()))
    text = "".join(f"{ctx.paint('75', node_id)}\n  {value_text(loaded[raw])}\n"
                   for node_id, raw in page.nodes.items())
    if page.next_cursor is not None:
        text += ctx.paint("245", f"(more: --cursor {page.next_cursor})") + "\n"
    return text
