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
"""

from __future__ import annotations

import argparse
import base64
import binascii

from ... import peers
from ...errors import UsageError
from ..context import Context, Outcome, parse_json_arg, read_payload
from .upload_pack import commit_ids


def register(parser: argparse.ArgumentParser) -> None:
    """``receive-pack`` takes its request on stdin only."""


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    """Take one pack and move one branch."""
    request = parse_json_arg(read_payload(None, ctx), "reading the push request")
    if not isinstance(request, dict) or not isinstance(request.get("branch"), str) \
            or not isinstance(request.get("pack"), str) or not isinstance(request.get("force", False), bool):
        raise UsageError('the push request needs "pack" (base64), "branch", "old", "new" and optional "force"')
    try:
        blob = base64.b64decode(request["pack"], validate=True)
    except binascii.Error:
        raise UsageError('"pack" is not base64') from None
    old = commit_ids({"old": [] if request.get("old") is None else [request["old"]]}, "old")
    new = commit_ids({"new": [request.get("new")]}, "new")[0]
    update = peers.Update(request["branch"], old[0] if old else None, new, request.get("force", False))
    pusher, own = _pusher(request)
    received = peers.receive(ctx.repo(), blob, update, pusher=pusher, own_commits_only=own)
    doc = {"branch": update.branch, "old": old[0].hex() if old else None, "new": new.hex(), **received.to_dict()}
    return Outcome(doc, f"{update.branch}: {received.status} ({received.sent.commits} commit(s), "
                        f"{received.sent.objects} object(s))\n")


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
