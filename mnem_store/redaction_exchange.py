"""Redaction records exchanged with a peer that sums its records up: found range by range, carried in pages.

A store that redacts as it goes outgrows any list of its records' ids, so a
peer that can (``peers.Advert.summary``) advertises what its records sum up
to (``redaction_ranges``) and answers for ranges of ids.  The asker compares
each range with its own, descends only into ranges that differ, and learns
from the ranges small enough to be listed which ids one side holds and the
other lacks (``differences``).  Then the records travel in pages of at most
``MNEM_REDACTION_PAGE`` (``limits.TransferLimits``):

* a fetch or clone asks for each page of the ids it lacks (an ``upload``
  with no wants) and keeps the page's records in one unnamed temporary file
  (``Spool``), checked as they arrive and never all in memory, until the
  write that takes the transfer applies them page by page, before any pack
  (``take``), so a refused record writes nothing;
* a push sends each page of the records the remote lacks as a pack of
  records alone, which the remote takes in a write of its own
  (``peers.receive_records``), before the pack of commits.

Either way the pack of commits then leaves out the records of the redacted
versions its commits set (``transfer.pack``'s ``held``): the receiver holds
every one.

Every answer is another party's and bounded: a ranges answer by
``redaction_ranges.read_spans`` (one span per range asked, at most ``LEAF``
ids each), a page by the ids it was asked for, the ranges and ids one
transfer examines by ``MNEM_MAX_TRANSFER_REDACTIONS``, and the pages kept
for one fetch by ``MNEM_MAX_PACK_BYTES``, as a pack is.  So a peer that
answers for ever, or sends more than it was asked, is refused
(``corrupt_store``) before anything is written.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, BinaryIO

import cbor2

from .cborstream import Reader
from .errors import CorruptStoreError
from .limits import TRANSFER_ENV, TransferLimits
from .redaction_ranges import EMPTY, HEX, MAX_PREFIXES, Span, Summary, bounds, summarize
from .redaction_travel import MAX_REDACTIONS, read_entry, take, to_entry
from .transfer import pack, records_only, spooled

if TYPE_CHECKING:
    from types import TracebackType

    from .objects import Redaction
    from .peers import Peer
    from .repo import Repo

__all__ = ["Spool", "differences", "fetch_records", "push_records", "transfer_limits"]


def transfer_limits() -> TransferLimits:
    """This process's limits on a transfer's records (``limits.TransferLimits``), a page at most one message's."""
    return TransferLimits.current(MAX_REDACTIONS)


def differences(repo: Repo | None, peer: Peer, theirs: Summary, *, ours: bool, limits: TransferLimits,
                sender: str) -> Iterator[list[bytes]]:
    """Pages of record ids (at most ``limits.page`` each) one side holds and the other lacks.

    Without ``ours``, the peer's that ``repo`` lacks (a fetch's); with it, ``repo``'s that the peer lacks (a
    push's).  ``repo`` None is a store still to be made (a clone's), which has none.

    A depth-first walk of the ranges whose summaries differ, asking the peer
    for up to ``MAX_PREFIXES`` of them at a time; each read of ``repo`` is
    its own, between the peer's answers.

    Raises:
        CorruptStoreError: The peer's answers made the walk examine more than ``limits.total`` ranges and ids,
            or it sums up the range of one id as more than one record.
    """
    if _local(repo, "").summary == theirs:
        return
    examined = 0
    found: list[bytes] = []
    stack = [""]
    while stack:
        batch, stack = stack[-MAX_PREFIXES:], stack[:-MAX_PREFIXES]
        for prefix, span in zip(batch, peer.ranges(batch), strict=True):
            examined += 1 + len(span.ids or ())
            if limits.total is not None and examined > limits.total:
                raise CorruptStoreError(
                    f"{sender} made this transfer compare more than {limits.total} ranges and ids of redaction "
                    f"records ({TRANSFER_ENV}); nothing was written; if it holds that many records, raise "
                    f"{TRANSFER_ENV} (0 lifts the limit)")
            mine = _local(repo, prefix)
            if mine.summary == span.summary:
                continue
            if span.ids is None:
                if len(prefix) == 64:
                    raise CorruptStoreError(f"{sender} sums up the range of one object id as {span.summary.size} "
                                            "redaction records; nothing was written")
                stack.extend(prefix + digit for digit in reversed(HEX))
                continue
            for raw in _beside(repo, prefix, mine, span.ids, ours=ours, page=limits.page):
                found.append(raw)
                if len(found) == limits.page:
                    yield found
                    found = []
    if found:
        yield found


def _local(repo: Repo | None, prefix: str) -> Span:
    """What ``repo``'s records in a range sum up to, with their ids when few (one read; None: a store with none)."""
    if repo is None:
        return Span(EMPTY, ())
    with repo.backend.read():
        return summarize(repo, prefix)


def _beside(repo: Repo | None, prefix: str, mine: Span, listed: tuple[bytes, ...], *, ours: bool,
            page: int) -> Iterator[bytes]:
    """The ids one side holds in a range the peer listed and the other lacks: ``repo``'s (``ours``) or the peer's.

    ``repo``'s own ids come from its summary of the range when it holds few
    there; else they are looked up (the peer's) or read a page at a time
    (``repo``'s), so memory holds one page whatever ``repo`` holds there.
    """
    if mine.ids is not None:
        theirs, kept = frozenset(listed), frozenset(mine.ids)
        yield from (raw for raw in mine.ids if raw not in theirs) if ours else \
            (raw for raw in listed if raw not in kept)
        return
    assert repo is not None  # a store with no records lists every range's (none)
    if not ours:
        with repo.backend.read():
            found = repo.backend.redactions.of(listed)
        yield from (raw for raw in listed if raw not in found)
        return
    low, high = bounds(prefix)
    theirs = frozenset(listed)
    after = None
    while True:
        with repo.backend.read():
            held = repo.backend.redactions.ids(low, high, after, page)
        yield from (raw for raw in held if raw not in theirs)
        if len(held) < page:
            return
        after = held[-1]


class Spool:
    """The records of a fetch's pages, in an unnamed temporary file until the write that takes them.

    Each page is checked as it arrives (``transfer.records_only``: a page of
    records alone, no more than were asked for, none that was not), and the
    file may hold at most ``most_bytes``.
    """

    def __init__(self, most_bytes: int | None) -> None:
        self.file: BinaryIO = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self.count = 0
        self.most_bytes = most_bytes

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Remove the file (it has no name, so nothing is left behind even when the process is killed)."""
        self.file.close()

    def add(self, blob: BinaryIO, asked: list[bytes], sender: str) -> None:
        """Keep the records of one page the peer answered for ``asked``.

        Raises:
            CorruptStoreError: It is not a page of records, holds more than were asked for or one that was not,
                or the pages kept pass ``most_bytes``.
        """
        wanted = frozenset(asked)
        records = records_only(blob, len(asked))
        if any(record.object not in wanted for record in records):
            raise CorruptStoreError(f"{sender} answered a page of redaction records with one that was not asked "
                                    "for; nothing was written")
        for record in records:
            self.file.write(cbor2.dumps(to_entry(record)))
        self.count += len(records)
        if self.most_bytes is not None and self.file.tell() > self.most_bytes:
            from .remotehttp import MAX_PACK_ENV  # here: the HTTP client's module is not a local fetch's cost

            raise CorruptStoreError(f"{sender} sent more than {self.most_bytes} bytes of redaction records, the "
                                    f"most one transfer keeps ({MAX_PACK_ENV}); nothing was written; if its records "
                                    f"are that large, raise {MAX_PACK_ENV}")

    def pages(self, page: int) -> Iterator[list[Redaction]]:
        """The records kept, ``page`` at a time, read back from the file."""
        self.file.seek(0)
        reader = Reader(self.file)
        left = self.count
        while left:
            batch = [read_entry(reader) for _ in range(min(page, left))]
            left -= len(batch)
            yield batch

    def take(self, dst: Repo, page: int, sender: str) -> int:
        """Check and apply the records kept, a page at a time, inside ``dst``'s write; how many were new."""
        return sum(len(take(dst, records, sender)) for records in self.pages(page))


def fetch_records(repo: Repo | None, peer: Peer, theirs: Summary, limits: TransferLimits, sender: str) -> Spool:
    """The records the peer has and ``repo`` lacks, asked for page by page and kept in a ``Spool``.

    Raises:
        CorruptStoreError: An answer of the peer's is refused (``differences``, ``Spool.add``).
    """
    from .remotehttp import max_pack_bytes  # here: the HTTP client's module is not a local fetch's cost

    spool = Spool(max_pack_bytes())
    try:
        for ids in differences(repo, peer, theirs, ours=False, limits=limits, sender=sender):
            with peer.upload([], [], ids) as blob:
                spool.add(blob, ids, sender)
    except BaseException:
        spool.close()
        raise
    return spool


def push_records(repo: Repo, peer: Peer, theirs: Summary, limits: TransferLimits, sender: str) -> int:
    """Send the peer the records ``repo`` has and it lacks, a page per write of the peer's; how many were new there.

    Raises:
        CorruptStoreError: An answer of the peer's is refused (``differences``).
    """
    applied = 0
    for ids in differences(repo, peer, theirs, ours=True, limits=limits, sender=sender):
        with repo.backend.read():
            blob = spooled(partial(pack, repo, [], asked=ids))
        with blob:
            applied += peer.receive_records(blob)
    return applied
