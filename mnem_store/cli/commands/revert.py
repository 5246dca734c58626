"""``mnem revert`` (extension): undo, as one commit, every fact a source, step, observation, author or commit set.

The options are named after the provenance fields (``--source``,
``--step``, ``--observation``) and the commit that wrote a value
(``--author``, ``--commit``); every one given must hold.  A fact whose
value now is a matching version goes back to the value before it (or is
removed where there was none); one that another version changed since is
listed as skipped and left alone (``mnem_store.revert``).  ``--dry-run``
shows the same fact-level diff and writes nothing.  The commit is HEAD's
branch's, by ``--by`` (``--author`` names what is reverted).
"""

from __future__ import annotations

import argparse

from ... import porcelain
from ...errors import UsageError
from ...objects import MemoryNode
from ...repo import default_author
from ...revert import Match
from ..context import Context, Outcome, check_text, commit_time
from ..render import BAD, DIM, GOOD, ID, WARN, Painter, compact, first_line, short

_OPTIONS = ("--source", "--step", "--observation", "--author", "--commit")


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``revert``'s arguments: which versions to undo, and the commit to record."""
    parser.add_argument("--source", help="undo the values whose provenance source is SOURCE")
    parser.add_argument("--step", help="undo the values whose provenance agent_step is STEP")
    parser.add_argument("--observation", help="undo the values whose provenance observation is OBSERVATION")
    parser.add_argument("--author", help="undo the values written by commits of this author")
    parser.add_argument("--commit", metavar="COMMIT", help="undo the values this commit (a commit-ish) wrote")
    parser.add_argument("--dry-run", action="store_true", help="show what would be restored, removed and skipped; "
                        "write nothing")
    parser.add_argument("--by", help='who makes the revert commit; falls back to $MNEM_AUTHOR, then "unknown"')
    parser.add_argument("--time", type=commit_time, metavar="MS", help="the commit's time in Unix ms (default now)")


def _value(node: MemoryNode | None) -> str:
    return compact(node.content) if node is not None else "(absent)"


def _render(done: porcelain.Reverted, paint: Painter) -> str:
    """One line per fact: what it holds now, what it gets back and the versions undone; then the skipped."""
    lines = []
    for fact in done.facts:
        undone = paint(DIM, f"(undoes {', '.join(short(by.commit) for by in fact.undone)})")
        if fact.restored is not None:
            change = f"{_value(fact.current)} -> {_value(fact.restored)}"
            lines.append(f"{paint(GOOD, 'restore')} {fact.id}: {change}  {undone}")
        else:
            lines.append(f"{paint(BAD, 'remove ')} {fact.id}: {_value(fact.current)}  {undone}")
    for skip in done.skipped:
        lines.append(f"{paint(WARN, 'skipped')} {skip.id}: {_value(skip.current)}, changed later by "
                     f"{paint(ID, short(skip.by.commit))} ({skip.by.author}: {first_line(skip.by.message)})")
    made = done.commit
    if made is not None:
        lines.append(f"{paint(ID, f'[{short(made[0])}]')} {first_line(made[1].message)}")
    else:
        lines.append(paint(DIM, "dry run: nothing written"))
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Revert (or preview) the matching versions; JSON: ``{"commit", "reverted", "skipped"}`` (docs/cli-json.md)."""
    if all(getattr(args, option[2:]) is None for option in _OPTIONS):
        raise UsageError(f"mnem revert needs at least one of {', '.join(_OPTIONS)} to say what to undo")
    repo = ctx.repo()
    commit = porcelain.resolve(repo, args.commit) if args.commit is not None else None
    match = Match(args.source, args.step, args.observation, args.author, commit)
    author = check_text(default_author(args.by), "--by")
    done = porcelain.revert(repo, match, author=author, time_ms=args.time, dry_run=args.dry_run)
    return Outcome(done.to_dict(), _render(done, ctx.paint))
