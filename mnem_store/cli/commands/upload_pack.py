"""``mnem upload-pack [--advertise]``: the serving half of a fetch, for an HTTP server (extension, plumbing).

``mnem-mcp`` answers an HTTP remote's requests with it (docs/remotes.md), as
git's HTTP backend runs ``git upload-pack``.  With ``--advertise`` it prints
the store's format, HEAD and branch tips; without, it reads
``{"want": [ID...], "have": [ID...]}`` (JSON on stdin) and answers with the
pack of what the asker lacks, base64 in the JSON document, or with
``--pack-file PATH`` (feature ``pack-file``) written to PATH as it is made,
so that neither this process nor the server holds the pack in memory.
The advertisement lists the objects the store has redaction records for,
and a request may name some of them in ``"redactions"`` (feature
``pack-redactions``): the pack then carries their records.
"""

from __future__ import annotations

import argparse
import base64
import io
from typing import Any

from ... import peers
from ...errors import CommandError, UsageError
from ...redaction_travel import MAX_REDACTIONS
from ..context import Context, Outcome, parse_json_arg, read_payload


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``upload-pack``'s one option."""
    parser.add_argument("--advertise", action="store_true", help="print the format, HEAD and branch tips instead")
    parser.add_argument("--pack-file", metavar="PATH",
                        help="write the pack to PATH (created or emptied) instead of base64 in the answer")


def commit_ids(doc: Any, key: str, what: str = "commit") -> list[bytes]:
    """The list of full ids (of commits, or ``what``) under ``key`` of a request document.

    Raises:
        UsageError: It is missing or not a list of 64-hex ids.
    """
    values = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(values, list):
        raise UsageError(f'the request needs "{key}": a list of full {what} ids')
    try:
        found = [bytes.fromhex(value) for value in values]
    except (TypeError, ValueError):
        found = []
    if len(found) != len(values) or any(len(raw) != 32 for raw in found):
        raise UsageError(f'"{key}" must hold full {what} ids (64 hex characters each)')
    return found


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Advertise, or answer one want/have request with a pack."""
    repo = ctx.repo()
    if args.advertise:
        advert = peers.advertise(repo)
        lines = [f"{tip.hex()}\t{name}\n" for name, tip in sorted(advert.branches.items())]
        return Outcome(advert.to_dict(), f"{advert.head.text}\tHEAD\n" + "".join(lines))
    request = parse_json_arg(read_payload(None, ctx), "reading the want/have request")
    wants, haves = commit_ids(request, "want"), commit_ids(request, "have")
    asked = commit_ids(request, "redactions", "object") if "redactions" in request else []
    if len(asked) > MAX_REDACTIONS:
        raise UsageError(f'"redactions" names at most {MAX_REDACTIONS} objects')
    if args.pack_file is not None:
        try:
            with open(args.pack_file, "wb") as out:
                commits = peers.upload(repo, wants, haves, out, asked)
                size = out.tell()
        except OSError as exc:
            raise CommandError(f"writing the pack to {args.pack_file}", "store_io",
                               cause=exc.strerror or str(exc)) from None
        return Outcome({"commits": commits, "bytes": size},
                       f"{commits} commit(s), {size} byte(s) in {args.pack_file}\n")
    buffer = io.BytesIO()
    commits = peers.upload(repo, wants, haves, buffer, asked)
    blob = buffer.getvalue()
    return Outcome({"commits": commits, "bytes": len(blob), "pack": base64.b64encode(blob).decode("ascii")},
                   f"{commits} commit(s), {len(blob)} byte(s); the pack is in --json output\n")
