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

Feature ``redaction-ranges`` (``redaction_ranges``): ``--advertise
--redaction-summary`` sums the records up instead of listing them (an
asker that can compare ranges; the list is bounded, the summary is not);
``--redaction-ranges`` answers ``{"prefixes": [P...]}`` with ``{"spans":
[...]}``, the summary (or the ids) of each range; and a request's
``"held": {"count", "digest"}`` says the asker holds every record that sums
up to it, so the pack leaves out the records its commits' redacted
versions would carry while the store's records still sum up to it.
"""

from __future__ import annotations

import argparse
import base64
import io
from typing import Any

from ... import peers
from ...errors import CommandError, UsageError
from ...redaction_ranges import Summary, check_prefixes, spans
from ...redaction_travel import MAX_REDACTIONS
from ..context import Context, Outcome, parse_json_arg, read_payload


def register(parser: argparse.ArgumentParser) -> None:
    """Add ``upload-pack``'s one option."""
    parser.add_argument("--advertise", action="store_true", help="print the format, HEAD and branch tips instead")
    parser.add_argument("--pack-file", metavar="PATH",
                        help="write the pack to PATH (created or emptied) instead of base64 in the answer")
    parser.add_argument("--redaction-summary", action="store_true",
                        help="with --advertise: sum the redaction records up instead of listing their ids")
    parser.add_argument("--redaction-ranges", action="store_true",
                        help='answer {"prefixes": [...]} with the summary or ids of each range of record ids')


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
        advert = peers.advertise(repo, summed=args.redaction_summary)
        lines = [f"{tip.hex()}\t{name}\n" for name, tip in sorted(advert.branches.items())]
        return Outcome(advert.to_dict(), f"{advert.head.text}\tHEAD\n" + "".join(lines))
    if args.redaction_summary:
        raise UsageError("--redaction-summary goes with --advertise")
    if args.redaction_ranges:
        request = parse_json_arg(read_payload(None, ctx), "reading the ranges request")
        prefixes = check_prefixes(request.get("prefixes") if isinstance(request, dict) else None)
        answered = spans(repo, prefixes)
        return Outcome({"spans": answered}, "".join(f"{prefix or '(all)'}\t{span['count']}\n"
                                                    for prefix, span in zip(prefixes, answered, strict=True)))
    request = parse_json_arg(read_payload(None, ctx), "reading the want/have request")
    wants, haves = commit_ids(request, "want"), commit_ids(request, "have")
    asked = commit_ids(request, "redactions", "object") if "redactions" in request else []
    if len(asked) > MAX_REDACTIONS:
        raise UsageError(f'"redactions" names at most {MAX_REDACTIONS} objects')
    held = _held(request)
    if args.pack_file is not None:
        try:
            with open(args.pack_file, "wb") as out:
                commits = peers.upload(repo, wants, haves, out, asked, held)
                size = out.tell()
        except OSError as exc:
            raise CommandError(f"writing the pack to {args.pack_file}", "store_io",
                               cause=exc.strerror or str(exc)) from None
        return Outcome({"commits": commits, "bytes": size},
                       f"{commits} commit(s), {size} byte(s) in {args.pack_file}\n")
    buffer = io.BytesIO()
    commits = peers.upload(repo, wants, haves, buffer, asked, held)
    blob = buffer.getvalue()
    return Outcome({"commits": commits, "bytes": len(blob), "pack": base64.b64encode(blob).decode("ascii")},
                   f"{commits} commit(s), {len(blob)} byte(s); the pack is in --json output\n")


def _held(request: dict[str, Any]) -> Summary | None:
    """The summary of records the asker says it holds (``"held"``), if it says.

    Raises:
        UsageError: ``"held"`` is not ``{"count", "digest"}``.
    """
    if request.get("held") is None:
        return None
    try:
        return Summary.from_dict(request["held"])
    except ValueError as exc:
        raise UsageError(f'"held" must be the {{"count", "digest"}} of a redaction summary ({exc})') from None
