"""The other side of a transfer: a store a remote names, reached on this machine or over HTTP.

A *peer* answers three requests, git's smart protocol reduced to what a
memory store needs:

* ``advertise``: its store format, its HEAD and every branch tip, and the
  objects it has redaction records for (or, asked for a summary, what its
  records sum up to: ``redaction_ranges``);
* ``upload``: a pack (``transfer.pack``) of what the asker wants, less what
  its haves already hold, with the redaction records the asker names;
* ``receive``: take a pack and move one branch, in ONE write transaction,
  by compare-and-swap: only while the branch is still where the sender saw
  it (``Update.old``), and only as a fast-forward unless forced; else
  ``conflict`` and nothing is written;
* ``ranges`` and ``receive_records``, for a peer whose advertisement sums
  its records up: the summaries (or ids) of ranges of its record ids, and
  taking a page of records alone (``redaction_exchange``).

The records a store advertises let each side send only the records the
other lacks: a fetch asks for those, a push brings those, and a push that
brings none is a plain push (over HTTP, it needs no ``mnem:redact``).  An
older peer lists its records' ids in its advertisement, at most
``MAX_REDACTIONS``; a peer that sums them up is compared range by range,
and its records travel in pages, so their number has no bound.

``LocalPeer`` serves them from a store this process opens (a folder or a
PostgreSQL store); ``httppeer.HttpPeer`` asks a ``mnem-mcp`` HTTP server,
which answers each request with ``mnem upload-pack`` / ``mnem receive-pack``
on the store the caller's token maps to.  ``sync``'s verbs speak only to a
``Peer``, so a remote behaves the same whatever its address.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any, BinaryIO, NamedTuple, Protocol

from . import pushed
from .errors import CommandError, CorruptStoreError, InvalidRefError, printable
from .graph import Graph
from .layout import FORMAT_VERSION, Head, parse_head, validate_branch_name
from .location import address
from .redaction_ranges import Span, Summary, read_spans, spans, summary
from .redaction_travel import MAX_REDACTIONS, take
from .repo import Repo
from .transfer import Sent, carries_redactions, check_tips, missing, pack, records_only, spooled, unpack

__all__ = [
    "MAX_IDS", "STATUSES", "Advert", "LocalPeer", "Peer", "Received", "Update", "advertise", "receive",
    "receive_records", "upload",
]


class Advert(NamedTuple):
    """What a store shows a peer: its format, its HEAD, its branch tips and the objects it has redaction records for.

    ``redactions`` is None for a peer that does not say (an older one, which can take no records), or
    that sums its records up instead (``summary``: a peer asked for it that can answer ``ranges``).
    """

    format: int
    head: Head
    branches: dict[str, bytes]
    redactions: frozenset[bytes] | None = None
    summary: Summary | None = None

    def to_dict(self) -> dict[str, Any]:
        """``upload-pack --advertise --json`` (docs/cli-json.md) and the HTTP ``refs`` answer."""
        doc: dict[str, Any] = {"format": self.format, "head": self.head.text,
                               "branches": {name: tip.hex() for name, tip in sorted(self.branches.items())}}
        if self.redactions is not None:
            doc["redactions"] = sorted(raw.hex() for raw in self.redactions)
        if self.summary is not None:
            doc["redaction_summary"] = self.summary.to_dict()
        return doc

    @classmethod
    def from_dict(cls, doc: Any) -> Advert:
        """Read an advertisement a peer sent.

        Raises:
            CorruptStoreError: It is not one.
        """
        try:
            branches = {_branch_name(name): _commit_id(tip) for name, tip in doc["branches"].items()}
            if not isinstance(doc["format"], int) or not isinstance(doc["head"], str):
                raise TypeError("format or head")
            summed = doc.get("redaction_summary")
            return cls(doc["format"], parse_head(doc["head"]), branches, _redacted(doc.get("redactions")),
                       None if summed is None else Summary.from_dict(summed))
        except (KeyError, TypeError, AttributeError, ValueError, CorruptStoreError, InvalidRefError) as exc:
            raise CorruptStoreError(f"the remote answered an advertisement of the wrong shape "
                                    f"({printable(str(exc))})") from None


class Update(NamedTuple):
    """One branch a push moves: from ``old`` (None: it must not exist) to ``new``; ``force``: even backwards."""

    branch: str
    old: bytes | None
    new: bytes
    force: bool = False


#: Every status a receive answers with (``Received.status``).
STATUSES = frozenset({"up-to-date", "created", "fast-forwarded", "forced"})


class Received(NamedTuple):
    """What a receive did: what it wrote, and the branch's status (one of ``STATUSES``)."""

    sent: Sent
    status: str

    def to_dict(self) -> dict[str, Any]:
        """``receive-pack --json`` (docs/cli-json.md) and the HTTP ``receive`` answer."""
        return {"status": self.status, "commits": self.sent.commits, "objects": self.sent.objects,
                "redactions": self.sent.redactions}


#: The most ids one upload request names in each list (wants, haves): an HTTP server refuses more
#: (``mnem_mcp.remote_sync.MAX_IDS``, the same number), so a fetch sends its wants in batches and its best haves.
MAX_IDS = 10_000


class Peer(Protocol):
    """A store at the other end of a remote (see the module's docstring)."""

    def advertise(self) -> Advert:
        """The peer's format, HEAD and branch tips."""
        ...

    def upload(self, wants: list[bytes], haves: list[bytes], redactions: list[bytes] | None = None,
               held: Summary | None = None) -> BinaryIO:
        """The pack of what ``wants`` reach and ``haves`` do not: a rewound file, the caller's to close.

        It also carries the records of the objects in ``redactions`` (ones the peer advertised or listed);
        ``held``: the asker holds every record the peer's summed up to (``transfer.pack``).
        """
        ...

    def ranges(self, prefixes: list[str]) -> list[Span]:
        """The peer's records in each range (``redaction_ranges``), checked; only a peer that advertised a summary."""
        ...

    def receive_records(self, blob: BinaryIO) -> int:
        """Take the records of the pack in ``blob`` (a page: no commits), in one write; how many were new there."""
        ...

    def receive(self, blob: BinaryIO, update: Update) -> Received:
        """Take the pack in the file ``blob`` and move one branch by compare-and-swap, in one write of the peer."""
        ...

    def close(self) -> None:
        """Release what the peer holds open."""
        ...


def _branch_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"branch name {name!r}")
    validate_branch_name(name)
    return name


def _commit_id(text: Any) -> bytes:
    raw = bytes.fromhex(text)
    if len(raw) != 32:
        raise ValueError(f"{text!r} is not a commit id")
    return raw


def _redacted(ids: Any) -> frozenset[bytes] | None:
    """The objects an advertisement says its store has records for (at most ``MAX_REDACTIONS``); None if unsaid."""
    if ids is None:
        return None
    if not isinstance(ids, list) or len(ids) > MAX_REDACTIONS:
        raise ValueError(f"redactions is not a list of at most {MAX_REDACTIONS} object ids")
    found = frozenset(bytes.fromhex(text) for text in ids)
    if any(len(raw) != 32 for raw in found):
        raise ValueError("redactions names an id that is not 32 bytes")
    return found


# ------------------------------------------------------------------ the serving side, on an open store
def advertise(repo: Repo, *, summed: bool = False) -> Advert:
    """``repo``'s advertisement (one read): its records' ids, or with ``summed`` their summary.

    Raises:
        CommandError: ``usage``: without ``summed`` (an older asker), the store has more redaction records than
            such an asker takes in one transfer.
    """
    with repo.backend.read():
        if summed:
            return Advert(FORMAT_VERSION, repo.head(), dict(repo.branches()), None, summary(repo))
        records = repo.backend.redactions
        count = records.count()
        if count > MAX_REDACTIONS:
            raise CommandError(f"this store has {count} redaction records, more than the {MAX_REDACTIONS} an older "
                               "mnem takes in one transfer; upgrade mnem where the fetch, clone or push runs",
                               "usage")
        return Advert(FORMAT_VERSION, repo.head(), dict(repo.branches()),
                      frozenset(records.ids(bytes(32), None, None, max(count, 1))))


def upload(repo: Repo, wants: list[bytes], haves: list[bytes], out: BinaryIO,
           redactions: Iterable[bytes] = (), held: Summary | None = None) -> int:
    """Write the pack for an asker to ``out``; how many commits it holds (one read of ``repo``).

    It carries the records of the redacted versions its commits set (unless
    the asker ``held`` them all: ``transfer.pack``) and of the objects in
    ``redactions`` (the asker's pick from the advertisement, or a page of them).

    Raises:
        CommandError: ``not_found``: a wanted commit is not here (the asker's advertisement is stale).
    """
    with repo.backend.read():
        for want in wants:
            if repo.states.graph(want) is None:
                raise CommandError(f"commit {want.hex()} is not in this store (its branches moved since they were "
                                   "advertised); fetch again", "not_found")
        commits = missing(repo, wants, haves)
        pack(repo, commits, out, redactions, held)
        return len(commits)


def receive_records(repo: Repo, blob: BinaryIO, *, redactions_allowed: bool = True) -> int:
    """Take a page of redaction records (a pack carrying nothing else) in one erasing write; how many were new.

    The records are checked as a pack's are (``redaction_travel.take``)
    before any is applied, so a refused page writes nothing.  A push sends
    its records this way before its pack, when the remote sums its records
    up (``redaction_exchange``); a page moves no branch.

    Raises:
        CorruptStoreError: The bytes are not such a page, or a record is refused.
        CommandError: ``usage``: a record the store lacks, without ``redactions_allowed``.
    """
    records = records_only(blob, MAX_REDACTIONS)
    with repo.backend.erasing():
        return len(take(repo, records, "the pushed page of redaction records", new_allowed=redactions_allowed))


def receive(repo: Repo, blob: BinaryIO, update: Update, *, pusher: str | None = None,
            own_commits_only: bool = False, redactions_allowed: bool = True) -> Received:
    """Take a pack and move one branch (one write of ``repo``; see the module's docstring).

    With ``pusher`` (who sent the push: a server's caller), the same write
    records who pushed the move and the commits the pack brought
    (``pushed.record``); with ``own_commits_only`` too, a pack that brings a
    commit someone else authored is refused (``pushed.refuse_foreign``).
    A pack carrying redaction records is taken in an erasing write
    (``Backend.erasing``), so the bytes they remove are in no file of the
    store afterwards; without ``redactions_allowed`` (a pusher who may not
    redact here), a record the store lacks is refused.

    Raises:
        CommandError: ``conflict``: the branch is no longer at ``update.old``,
            or the move is not a fast-forward and not forced; ``invalid_ref``:
            with ``own_commits_only``, a commit ``pusher`` did not author.
        InvalidRefError: A bad branch name.
        CorruptStoreError: The pack did not verify, or ``new`` is not a
            commit the store holds with its whole history once the pack is in
            (``transfer.check_tips``).
        CommandError: ``usage``: a redaction record the store lacks, without ``redactions_allowed``.
    """
    validate_branch_name(update.branch)
    if own_commits_only and pusher is None:
        raise ValueError("own_commits_only needs the pusher")
    with repo.backend.erasing() if carries_redactions(blob) else repo.backend.write():
        sent = unpack(repo, blob, redactions_allowed=redactions_allowed)
        if own_commits_only and pusher is not None:
            pushed.refuse_foreign(repo, pusher, sent.ids)
        current = repo.branch_tip(update.branch)
        if current != update.old:
            shown = current.hex()[:12] if current is not None else "nothing"
            raise CommandError(f'push refused: "{update.branch}" is now at {shown}, not where this push expected '
                               "it (it moved meanwhile); fetch, then push again", "conflict")
        check_tips(repo, [(update.branch, update.new)], "the push")
        forward = current is None or Graph(repo).is_ancestor(current, update.new)
        if not forward and not update.force:
            raise CommandError(f'push refused: "{update.branch}" has commits the pushed one lacks (not a '
                               "fast-forward); fetch and merge, then push again, or push with --force-with-lease",
                               "conflict")
        if current != update.new:
            repo.move_branch(update.branch, current, update.new)
        if pusher is not None and (sent.ids or current != update.new):
            pushed.record(repo, pusher, update.branch, current, update.new, sent.ids)
        status = ("up-to-date" if current == update.new else "created" if current is None
                  else "fast-forwarded" if forward else "forced")
        return Received(sent, status)


class LocalPeer:
    """A peer this process opens itself: a store folder or a PostgreSQL store URL."""

    def __init__(self, url: str) -> None:
        self.repo = Repo.open(address(url))

    def advertise(self) -> Advert:
        """See ``Peer``: the summary, since this engine answers ``ranges``."""
        return advertise(self.repo, summed=True)

    def upload(self, wants: list[bytes], haves: list[bytes], redactions: list[bytes] | None = None,
               held: Summary | None = None) -> BinaryIO:
        """See ``Peer``."""
        return spooled(partial(upload, self.repo, wants, haves, redactions=redactions or [], held=held))

    def ranges(self, prefixes: list[str]) -> list[Span]:
        """See ``Peer``: checked as another party's answer is, since the store is another's."""
        return read_spans({"spans": spans(self.repo, prefixes)}, prefixes, "the remote store")

    def receive_records(self, blob: BinaryIO) -> int:
        """See ``Peer``."""
        return receive_records(self.repo, blob)

    def receive(self, blob: BinaryIO, update: Update) -> Received:
        """See ``Peer``."""
        return receive(self.repo, blob, update)

    def close(self) -> None:
        """Close the store."""
        self.repo.close()
