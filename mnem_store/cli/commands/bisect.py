"""``mnem bisect --node ID (--equals JSON | --absent | --present) [--good REV | --include-root] [BAD]``.

Finds the first commit on BAD's first-parent chain where the node reaches
the given state, then explains it with a blame of the node there.

``--include-root`` is an extension (upstream has no such flag): with no
``--good``, the chain's root is a candidate too, so a state that already
holds at the root answers the root instead of failing with "the predicate is
already true at good" (or, on a one-commit chain, "good and bad are the same
commit").  Without the flag the search and its errors are upstream's.
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ...bisect import Predicate, absent, content_equals, present
from ...blame import Blame
from ...errors import CommandError, UsageError, rust_debug
from ..context import Context, Outcome, check_text, parse_json_arg
from ..render import DIM, ID, WARN, Painter, first_line, short


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``bisect``'s arguments: the node, one predicate flag and the range to search."""
    parser.add_argument("--node", required=True, metavar="NODE", help="the node id the predicate is about")
    parser.add_argument("--equals", metavar="JSON", help="true when the node's content equals this JSON value")
    parser.add_argument("--absent", action="store_true", help="true when the node is not in memory")
    parser.add_argument("--present", action="store_true", help="true when the node is in memory")
    parser.add_argument("--good", metavar="GOOD",
                        help="a commit where the predicate is false (default: the history root)")
    parser.add_argument("--include-root", action="store_true",
                        help="extension: with no --good, the history root is a candidate too (answered when the "
                             "predicate already holds there)")
    parser.add_argument("bad", metavar="BAD", nargs="?", help="a commit where the predicate is true (default: HEAD)")


def _check_conflicts(args: argparse.Namespace) -> None:
    """Mutually exclusive flags are usage errors (exit 2), reported before the store is opened, as clap does."""
    if args.equals is not None and (args.absent or args.present):
        other = "--absent" if args.absent else "--present"
        raise UsageError(f"the argument '--equals <JSON>' cannot be used with '{other}'")
    if args.absent and args.present:
        raise UsageError("the argument '--absent' cannot be used with '--present'")
    if args.include_root and args.good is not None:
        raise UsageError("the argument '--include-root' cannot be used with '--good <GOOD>'")


def _predicate(args: argparse.Namespace) -> Predicate:
    """The predicate the flags ask for; upstream checks this only once the store is open."""
    if args.equals is not None:
        value = parse_json_arg(args.equals, f"--equals {rust_debug(args.equals)} is not valid JSON")
        return content_equals(args.node, value)
    if args.absent:
        return absent(args.node)
    if args.present:
        return present(args.node)
    raise CommandError("bisect needs one of --equals <json>, --absent or --present", "usage")


def _explain(node_id: str, found: Blame | None, paint: Painter) -> str:
    """Line 2: where the node's value at the boundary came from, or that it is absent there."""
    if found is None:
        return f"  {paint(DIM, f'{node_id} is absent here')}\n"
    bits = [f"{label} {value}" for label, value in found.node.provenance.labelled().items()
            if label in ("step", "observation", "source")]  # the three upstream explains a value by
    tail = f", from {', '.join(bits)}" if bits else ", no provenance recorded"
    return f"  {paint(WARN, f'{node_id} set here')}{paint(DIM, tail)}\n"


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Find the first commit where the predicate holds, and blame the node there."""
    node_id = check_text(args.node, "--node")
    _check_conflicts(args)
    repo = ctx.repo()
    predicate = _predicate(args)
    found = porcelain.bisect(repo, node_id, predicate, bad=args.bad, good=args.good, include_root=args.include_root)
    paint = ctx.paint
    data = {"commit": found.commit.hex(), "blame": found.blame.to_dict() if found.blame is not None else None}
    text = f"{paint(ID, short(found.commit))}  {first_line(found.message)}\n{_explain(node_id, found.blame, paint)}"
    return Outcome(data, text)
