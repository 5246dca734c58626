"""``mnem fetch [REMOTE]``: bring a remote's new commits and move its tracking branches (extension)."""

from __future__ import annotations

import argparse

from ... import sync
from ..context import Context, Outcome, check_text
from ..render import short


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``fetch``'s one argument, the remote."""
    parser.add_argument("remote", nargs="?", default="origin", metavar="REMOTE", help="the remote (default origin)")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Fetch; the text names each moved tracking branch and the command that merges it."""
    fetched = sync.fetch(ctx.repo(), check_text(args.remote, "REMOTE"))
    return Outcome(fetched.to_dict(), lambda: render(fetched))


def records_line(count: int, where: str) -> str:
    """The line a transfer that applied redaction records adds (none when it applied none)."""
    return f"  {count} redaction record(s) applied {where}: the bytes they name are gone there\n" if count else ""


def render(fetched: sync.Fetched) -> str:
    """What a fetch (or a pull's fetch) prints: the counts, the records applied, each tracking branch that moved."""
    lines = [f"Fetched {fetched.sent.commits} commit(s), {fetched.sent.objects} object(s) from {fetched.remote}\n",
             records_line(fetched.sent.redactions, "here")]
    if fetched.residue is not None:
        lines.append(f"  warning: {fetched.residue}\n")
    for name, old, new in fetched.moved:
        was = short(old) if old is not None else "(new)"
        lines.append(f"  {was} -> {short(new)}  {name}  (merge with `mnem merge {name}`)\n")
    return "".join(lines)
