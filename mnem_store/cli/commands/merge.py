"""``mnem merge THEIRS``: merge a branch or commit into the current branch.

Flags are validated in upstream's order before the store is opened; the
merge itself (or, with ``--dry-run``, its preview) is ``mnem_store.merge``.
A merge that stops on conflicts prints them and exits 1 in text mode; with
``--json`` it is a result (status ``conflicts``), not an error.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NamedTuple

from ... import porcelain
from ...errors import CommandError, rust_debug
from ...limits import Limits, in_message
from ...merge import SIDES, STRATEGIES, Conflict, Resolution, Strategy
from ...objects import MemoryNode
from ...repo import default_author
from ..context import Context, Outcome, check_text, commit_time, parse_json_arg
from ..render import BRANCH, DIM, GOOD, ID, WARN, Painter, first_line, short, value_text

_RETRY = "resolve with `--resolve <id>=<side>` (or `--strategy ours|theirs`) and merge"


class _InOrder(argparse.Action):
    """Collect ``--resolve`` and ``--resolve-json`` into one list in command-line order.

    Both set a resolution for an id, and a later one for the same id wins
    whichever flag it came from, so their relative order must survive parsing.
    """

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        collected = list(getattr(namespace, self.dest) or [])
        collected.append((self.option_strings[0], values))
        setattr(namespace, self.dest, collected)


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``merge``'s arguments: what to merge, how to resolve conflicts, and the commit to record."""
    parser.add_argument("theirs", metavar="THEIRS", help="a branch name or commit id to merge in")
    add_resolution_flags(parser)
    parser.add_argument("--dry-run", action="store_true",
                        help="show what merging would do without writing; not combined with --resolve or --strategy")


def add_resolution_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that say how to settle conflicts and record the merge commit (``merge``'s, and ``pull``'s)."""
    parser.add_argument("--resolve", dest="resolutions", action=_InOrder, default=[], metavar="ID=SIDE",
                        help="resolve one conflict: <id>=<ours|theirs|base|delete>; repeatable")
    parser.add_argument("--resolve-json", dest="resolutions", action=_InOrder, metavar="ID=JSON",
                        help="resolve one conflict to a new node with this JSON content (extension); repeatable")
    parser.add_argument("--strategy", metavar="SIDE", help="resolve every other conflict one way: ours or theirs")
    parser.add_argument("-m", "--message", help="override the merge commit message")
    parser.add_argument("--author", help='who made the merge; falls back to $MNEM_AUTHOR, then "unknown"')
    parser.add_argument("--time", type=commit_time, metavar="MS",
                        help="merge commit time in Unix ms (extension; default now)")


def _strategy(raw: str | None) -> Strategy | None:
    if raw is None:
        return None
    if raw in STRATEGIES:
        return raw
    raise CommandError(f"unknown --strategy {rust_debug(raw)}; use `ours` or `theirs`", "usage")


def _resolution(flag: str, spec: str) -> tuple[str, Resolution]:
    """Parse one ``ID=SIDE`` (or ``ID=JSON``), split at the first ``=``.

    A new value (``ID=JSON``) is held to the ``Limits`` a written one is: its
    text's size before it is parsed, then the value's.  The id is not: it
    names a node in conflict, which the store holds already.
    """
    node_id, sep, value = spec.partition("=")
    quoted = rust_debug(spec)
    if flag == "--resolve-json":
        if not sep:
            raise CommandError(f"--resolve-json {quoted} must be <id>=<json>", "usage")
        where, limits = f"--resolve-json {rust_debug(in_message(node_id))}", Limits.current()
        limits.check_text(value, where)
        content = parse_json_arg(value, f"--resolve-json {quoted} is not valid JSON")
        limits.check_value(content, (), where)
        return node_id, MemoryNode(check_text(node_id, "--resolve-json"), content)
    if not sep:
        raise CommandError(f"--resolve {quoted} must be <id>=<ours|theirs|base|delete>", "usage")
    if value in SIDES:
        return node_id, value
    raise CommandError(
        f"--resolve {quoted}: unknown side {rust_debug(value)}; use `ours`, `theirs`, `base` or `delete`", "usage"
    )


def _conflict_block(outcome: porcelain.MergeOutcome, conflict: Conflict, paint: Painter) -> str:
    """One conflict as upstream prints it.

    The theirs side is often another party's (a remote's, when ``pull``
    prints this); what in it a terminal would act on is escaped with the
    rest of the text output (``render.terminal_safe``), and JSON output
    keeps it exact.
    """
    lines = [f"  {paint(ID, conflict.id)} {paint(DIM, f'({conflict.kind})')}"]
    for label, raw in (("base:", conflict.base), ("ours:", conflict.ours), ("theirs:", conflict.theirs)):
        shown = value_text(outcome.nodes[raw]) if raw is not None else "(deleted)"
        lines.append(f"    {paint(DIM, f'{label:<7}')} {shown}")
    return "\n".join(lines) + "\n"


class Settlement(NamedTuple):
    """``add_resolution_flags``' values, checked: how conflicts are settled and who records the merge."""

    resolutions: dict[str, Resolution]
    strategy: Strategy | None
    message: str | None
    author: str


def settlement(args: argparse.Namespace) -> Settlement:
    """Check the resolution flags (before any store is opened): a bad one is ``usage``."""
    strategy = _strategy(args.strategy)  # checked in upstream's order: the strategy, then each resolution
    resolutions = dict(_resolution(flag, spec) for flag, spec in args.resolutions)
    message = check_text(args.message, "--message") if args.message is not None else None
    return Settlement(resolutions, strategy, message, check_text(default_author(args.author), "--author"))


def report(outcome: porcelain.MergeOutcome, paint: Painter, dry_run: bool) -> tuple[str, str, int]:
    """Upstream's text for an outcome: stdout, stderr and the exit status."""
    result = outcome.result
    tip = paint(ID, short(result.commit)) if result.commit is not None else ""
    branch = paint(BRANCH, result.branch)
    if result.status == "up-to-date":
        return "Already up to date.\n", "", 0
    if result.status == "fast-forwarded":
        if not dry_run:
            return f"Fast-forwarded {branch} to {tip}\n", "", 0
        if result.ours is None:
            return f"(dry run) {branch} has no commits yet; would fast-forward to {tip}\n", "", 0
        return f"(dry run) would fast-forward {branch} to {tip}\n", "", 0
    if result.status == "merged" and result.commit is not None:
        subject = first_line(outcome.message or "")
        return f"{paint(GOOD, f'[{short(result.commit)}]')} {subject}\n", "", 0
    if result.status == "merged":
        return "(dry run) would merge cleanly, no conflicts.\n", "", 0
    count = len(result.conflicts)
    header = f"(dry run) would conflict in {count} node(s):" if dry_run else f"Merge conflict in {count} node(s):"
    blocks = "".join(_conflict_block(outcome, c, paint) for c in result.conflicts)
    retry = f"{_RETRY} for real" if dry_run else f"{_RETRY} again"
    return f"{paint(WARN, header)}\n{blocks}", f"Error: {retry}\n", 1


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Merge ``THEIRS`` into the current branch, or preview the merge with ``--dry-run``.

    Flags are checked before the store is opened.  Conflicts are a result
    in JSON mode and exit 1 in text mode.
    """
    if args.dry_run and (args.resolutions or args.strategy is not None):
        raise CommandError(
            "--dry-run previews whether a merge collides; it does not combine with --resolve or --strategy", "usage"
        )
    settle = settlement(args)
    outcome = porcelain.merge(ctx.repo(), args.theirs, resolutions=settle.resolutions, strategy=settle.strategy,
                              message=settle.message, author=settle.author, time_ms=args.time, dry_run=args.dry_run)
    text, stderr, code = report(outcome, ctx.paint, args.dry_run)
    return Outcome(outcome.to_dict(), text, stderr, code)
