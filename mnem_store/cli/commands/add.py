"""``mnem add ID [CONTENT]``: stage a node, with provenance, held to ``limits`` (its id, its value, the input read)."""

from __future__ import annotations

import argparse
from typing import Any

from ... import porcelain
from ...canonical import check_content
from ...errors import CommandError, UsageError
from ...limits import Limits, read_bounded
from ...objects import CONTENT_KINDS, PROVENANCE_KEYS, MemoryNode, Provenance
from ..context import (
    Context,
    Outcome,
    check_node_id,
    check_text,
    event_time,
    parse_json_arg,
)
from ..render import short


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``add``'s arguments: the node id, one content source, its kind and its provenance."""
    parser.add_argument("id", help="the node's stable id; staging the same id again is an update")
    parser.add_argument("content", nargs="?", help="the content as a plain string; omit to read stdin")
    parser.add_argument("--content-file", metavar="FILE", help="read the content from this file, parsed as JSON")
    parser.add_argument("--content-json", metavar="JSON", help="the content, parsed as JSON")
    parser.add_argument("--content-kind", choices=CONTENT_KINDS, default="note", help="(extension)")
    parser.add_argument("--step", help="provenance: which step of the run produced this")
    parser.add_argument("--source", help="provenance: an external source identifier")
    parser.add_argument("--observation", help="provenance: what was observed (extension)")
    parser.add_argument("--tool-call", help="provenance: the tool call that produced it (extension)")
    parser.add_argument("--note", help="provenance: a free-form note (extension)")
    parser.add_argument("--event-time", metavar="MS", type=event_time,
                        help="when the agent formed this, Unix ms (extension: or ISO 8601, UTC without an offset)")


def read_content(args: argparse.Namespace, ctx: Context, limits: Limits) -> Any:
    """Upstream's precedence: --content-file, --content-json, CONTENT, then stdin as a string.

    What is read or parsed is first held to the size one write may send (``Limits.check_input``).
    """
    if args.content_file is not None and args.content is not None:
        raise UsageError("the argument '--content-file <FILE>' cannot be used with '[CONTENT]'")
    if args.content_json is not None and (args.content is not None or args.content_file is not None):
        raise UsageError("the argument '--content-json <JSON>' cannot be used with '[CONTENT]' or '--content-file'")
    if args.content_file is not None:
        try:
            with open(args.content_file, "rb") as handle:
                text = read_bounded(handle, limits, args.content_file)
        except OSError as exc:
            raise CommandError(f"reading {args.content_file}", "store_io", cause=exc.strerror or str(exc)) from None
        return parse_json_arg(text, f"{args.content_file} is not valid JSON")
    if args.content_json is not None:
        limits.check_text(args.content_json, "--content-json")
        return parse_json_arg(args.content_json, "--content-json is not valid JSON")
    if args.content is not None:
        return check_text(args.content, "CONTENT")
    data = read_bounded(ctx.stdin, limits, "the content on stdin")
    try:
        return data.decode("utf-8").rstrip()
    except UnicodeDecodeError:
        raise UsageError("stdin is not valid UTF-8") from None


def build_node(args: argparse.Namespace, content: Any, limits: Limits) -> MemoryNode:
    """The node to stage from the parsed flags, each provenance value checked as UTF-8 text, held to ``limits``."""
    fields = {field: None if (value := getattr(args, key)) is None else check_text(value, f"--{key.replace('_', '-')}")
              for key, field in PROVENANCE_KEYS.items()}  # each key is the dest of its flag
    limits.check_id(check_node_id(args.id), "ID")
    limits.check_value(content, fields.values(), "the node")
    return MemoryNode(args.id, check_content(content), args.content_kind, Provenance(**fields), args.event_time)


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Stage one node; the result is the node and the id of its stored object."""
    limits = Limits.current()
    node = build_node(args, read_content(args, ctx, limits), limits)
    raw = porcelain.add(ctx.repo(), node)
    paint = ctx.paint
    return Outcome(
        {"node": node.to_dict(), "object": raw.hex()},
        f"Staged {paint('75', node.id)} as {paint('245', short(raw))}\n",
    )
