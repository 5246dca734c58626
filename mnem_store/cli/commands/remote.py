"""``mnem remote add NAME URL | remove NAME | list``: the other stores this store knows by name (extension).

A remote's URL is what ``mnem -C`` takes (a folder or a ``postgresql://``
store URL).  ``list`` also shows each remote's tracking branches
(``origin/main``) as the last fetch or push left them; docs/remotes.md.
"""

from __future__ import annotations

import argparse

from ... import sync
from ...errors import UsageError
from ..context import Context, Outcome, check_text
from ..render import short

#: Each action and the positional arguments it takes.
_ARITY = {"add": ("NAME", "URL"), "remove": ("NAME",), "list": ()}


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``remote``'s arguments: the action, then its name and URL."""
    parser.add_argument("action", choices=sorted(_ARITY), help="add, remove or list remotes")
    parser.add_argument("name", nargs="?", metavar="NAME", help="the remote's name (add, remove)")
    parser.add_argument("url", nargs="?", metavar="URL", help="a store folder, postgresql://...?store=NAME or a "
                        "mnem-mcp server's http(s):// URL (add)")


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Add, remove or list remotes."""
    wanted = _ARITY[args.action]
    given = [value for value in (args.name, args.url) if value is not None]
    if len(given) != len(wanted):
        usage = " ".join(("mnem remote", args.action, *wanted))
        raise UsageError(f"usage: {usage}")
    repo = ctx.repo()
    if args.action == "add":
        remote = sync.remote_add(repo, check_text(args.name, "NAME"), check_text(args.url, "URL"))
        return Outcome(remote.to_dict(), f"Added remote {remote.name} ({remote.shown}); "
                                         f"fetch it with `mnem fetch {remote.name}`\n")
    if args.action == "remove":
        remote = sync.remote_remove(repo, check_text(args.name, "NAME"))
        return Outcome(remote.to_dict(), f"Removed remote {remote.name} and its tracking branches\n")
    remotes = sync.remote_list(repo)
    lines = []
    for remote in remotes:
        lines.append(f"{remote.name}\t{remote.shown}\n")
        lines.extend(f"  {name}  {short(tip)}\n" for name, tip in remote.tracking())
    return Outcome([remote.to_dict() for remote in remotes], "".join(lines) or "no remotes yet\n")
