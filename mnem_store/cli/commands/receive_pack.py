"""``mnem receive-pack``: the serving half of a push, for an HTTP server (extension, plumbing).

``mnem-mcp`` answers an HTTP remote's push with it (docs/remotes.md), as
git's HTTP backend runs ``git receive-pack``.  It reads
``{"pack": BASE64, "branch": B, "old": ID or null, "new": ID, "force": bool}``
(JSON on stdin) and, in one write, takes the pack and moves the branch from
``old`` to ``new``: refused with ``conflict`` when the branch is elsewhere
or the move is not a fast-forward and not forced (``peers.receive``).
``"pusher"`` (feature ``receive-pusher``) names who sent the push: the same
write records that name, the time, the move and the commits the pack
brought (``pushed``), and with ``"own_commits_only": true`` a pack bringing
a commit someone else authored is ``invalid_ref`` and nothing is written.
``"redactions": false`` (feature ``pack-redactions``; a server's pusher
without the right to redact) refuses a pack carrying a redaction record the
store lacks (``usage``, nothing written); by default they are applied.  With
``--pack-file PATH`` (feature ``pack-file``) the pack is read from PATH, a
file the server spooled the request's body into, and the request holds no
``"pack"``: the pack is then read value by value, never whole in memory.
``{"records_only": true}`` (feature ``redaction-ranges``), with no branch,
takes a page of redaction records (a pack carrying nothing else) in a write
of its own and answers ``{"redactions": N}``, the records new here
(``peers.receive_records``); ``"redactions": false`` refuses any new one.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import io
from typing import BinaryIO

from ... import peers
from ...errors import CommandError, UsageError
from ..context import Context, Outcome, parse_json_arg, read_payload
from .upload_pack import commit_ids


def register(parser: argparse.ArgumentParser) -> None:
    """``receive-pack`` takes its request on stdin, and the pack there or in ``--pack-file``."""
    parser.add_argument("--pack-file", metavar="PATH", help='read the pack from PATH instead of "pack" in the request')


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Take one pack and move one branch."""
    request = parse_json_arg(read_payload(None, ctx), "reading the push request")
    inline = args.pack_file is None  # the pack is base64 in the request, else in the file
    allowed = request.get("redactions", True) if isinstance(request, dict) else True
    if not isinstance(allowed, bool):
        raise UsageError('"redactions" is true or false: whether the push may bring redaction records')
    if isinstance(request, dict) and request.get("records_only") is True and "branch" not in request \
            and isinstance(request.get("pack"), str) == inline:
        with _pack(request, args.pack_file) as blob:
            applied = peers.receive_records(ctx.repo(), blob, redactions_allowed=allowed)
        return Outcome({"redactions": applied}, f"{applied} redaction record(s) applied\n")
    if not isinstance(request, dict) or not isinstance(request.get("branch"), str) \
            or isinstance(request.get("pack"), str) != inline or not isinstance(request.get("force", False), bool):
        raise UsageError('the push request needs "branch", "old", "new", optional "force", and "pack" (base64) '
                         "unless --pack-file names the pack's file")
    old = commit_ids({"old": [] if request.get("old") is None else [request["old"]]}, "old")
    new = commit_ids({"new": [request.get("new")]}, "new")[0]
    update = peers.Update(request["branch"], old[0] if old else None, new, request.get("force", False))
    pusher, own = _pusher(request)
    with _pack(request, args.pack_file) as blob:
        received = peers.receive(ctx.repo(), blob, update, pusher=pusher, own_commits_only=own,
                                 redactions_allowed=allowed)
    doc = {"branch": update.branch, "old": old[0].hex() if old else None, "new": new.hex(), **received.to_dict()}
    return Outcome(doc, f"{update.branch}: {received.status} ({received.sent.commits} commit(s), "
                        f"{received.sent.objects} object(s))\n")


def _pack(request: dict[str, object], path: str | None) -> BinaryIO:
    """The pack to take: the file at ``path``, or the request's base64 ``"pack"`` in memory."""
    if path is not None:
        try:
            return open(path, "rb")
        except OSError as exc:
            raise CommandError(f"reading the pack from {path}", "store_io", cause=exc.strerror or str(exc)) from None
    try:
        return io.BytesIO(base64.b64decode(str(request["pack"]), validate=True))
    except binascii.Error:
        raise UsageError('"pack" is not base64') from None


def _pusher(request: dict[str, object]) -> tuple[str | None, bool]:
    """Who sent the push (``"pusher"``, recorded with it), and whether only their own commits may go in.

    Raises:
        UsageError: ``"pusher"`` is not a non-empty text, ``"own_commits_only"`` not a boolean, or
            ``"own_commits_only"`` is true without a pusher to compare the authors with.
    """
    pusher, own = request.get("pusher"), request.get("own_commits_only", False)
    if pusher is not None and not (isinstance(pusher, str) and pusher):
        raise UsageError('"pusher" names who sent the push: a non-empty text')
    if not isinstance(own, bool) or (own and pusher is None):
        raise UsageError('"own_commits_only" is true or false, and true needs "pusher"')
    return pusher, own
