"""A store's redaction records summed up by ranges of their object ids, so two stores find what each lacks.

An advertisement that listed every record id (``peers.Advert.redactions``)
grows with the records, and a store that redacts as it goes (a saver with
retention writes several records a step) outgrows any bound on one message.
So the records are summed up instead: a *range* is every object id that
begins with a hex prefix (``""`` is all of them, ``"3f"`` a 256th), and its
``Summary`` is how many records fall in it and a digest of their ids in
order.  Two stores whose summaries of a range agree hold the same records
there; where they differ, each of the range's sixteen children is compared
in turn, down to ranges small enough (``LEAF`` records) to be answered with
their ids, which settle the difference exactly.  Object ids are hashes, so
records spread evenly and a range halves its records every bit: a store
with a million records is compared in a few rounds of bounded answers, and
one new record costs about ``16 * depth`` summaries and one list of ids.

This module is the store's side: the summary of a range (a read), the
answer to a request for several (``spans``), and the check of such an
answer from another party (``read_spans``).  Who asks, and what then
travels, is ``redaction_exchange``.
"""

from __future__ import annotations

import hashlib
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from .errors import CorruptStoreError, UsageError

if TYPE_CHECKING:
    from .repo import Repo

__all__ = ["EMPTY", "HEX", "LEAF", "MAX_PREFIXES", "Span", "Summary", "bounds", "check_prefixes", "read_spans", "spans",
           "summarize", "summary"]

#: A range of at most this many records is answered with its ids (67 bytes of JSON each).
LEAF: Final = 256
#: The most ranges one request names: its answer is then at most 256 lists of ``LEAF`` ids, about 4.4 MB of JSON,
#: within the 16 MiB an HTTP remote's JSON answer may be.
MAX_PREFIXES: Final = 256
#: The digits a range's children add to its prefix, in id order.
HEX: Final = "0123456789abcdef"
#: Ids read from the store at a time while a range is summed up.
_SCAN: Final = 10_000
_DIGEST_BYTES: Final = 16


class Summary(NamedTuple):
    """How many records a range holds, and the first 16 bytes of the SHA-256 of their ids, ascending, joined."""

    size: int
    digest: bytes

    def to_dict(self) -> dict[str, Any]:
        """``{"count": N, "digest": HEX}``, as an advertisement and a range's answer carry it."""
        return {"count": self.size, "digest": self.digest.hex()}

    @classmethod
    def from_dict(cls, doc: Any) -> Summary:
        """Read one another party sent.

        Raises:
            ValueError: It is not one.
        """
        if not isinstance(doc, dict) or set(doc) != {"count", "digest"}:
            raise ValueError('a summary is not {"count", "digest"}')
        count, digest = doc["count"], doc["digest"]
        if not isinstance(count, int) or isinstance(count, bool) or count < 0 or not isinstance(digest, str) \
                or len(digest) != 2 * _DIGEST_BYTES:
            raise ValueError("a summary's count is not a whole number or its digest not 32 hex digits")
        return cls(count, bytes.fromhex(digest))


class Span(NamedTuple):
    """The answer for one range: its summary, and its ids (ascending) when it holds at most ``LEAF`` records."""

    summary: Summary
    ids: tuple[bytes, ...] | None

    def to_dict(self) -> dict[str, Any]:
        """``{"count", "digest"}``, with ``"ids": [HEX...]`` for a range of at most ``LEAF`` records."""
        doc = self.summary.to_dict()
        if self.ids is not None:
            doc["ids"] = [raw.hex() for raw in self.ids]
        return doc


#: What a range without records sums up to.
EMPTY: Final = Summary(0, hashlib.sha256().digest()[:_DIGEST_BYTES])


def bounds(prefix: str) -> tuple[bytes, bytes | None]:
    """The ids a range holds: from the first (inclusive) to the next range's first (exclusive; None: no end)."""
    shift = 4 * (64 - len(prefix))
    start = int(prefix, 16) << shift if prefix else 0
    end = start + (1 << shift)
    return start.to_bytes(32, "big"), end.to_bytes(32, "big") if end < 1 << 256 else None


def check_prefixes(prefixes: Any) -> list[str]:
    """A request's ranges: a list of at most ``MAX_PREFIXES`` hex prefixes (lower case, at most 64 digits).

    Raises:
        UsageError: It is not one.
    """
    if not isinstance(prefixes, list) or len(prefixes) > MAX_PREFIXES or not all(
            isinstance(p, str) and len(p) <= 64 and all(ch in HEX for ch in p) for p in prefixes):
        raise UsageError(f'"prefixes" must be a list of at most {MAX_PREFIXES} ranges of record ids, each a '
                         "lower-case hex prefix of at most 64 digits")
    return prefixes


def summarize(repo: Repo, prefix: str) -> Span:
    """The records of one range of ``repo`` (a read): read page by page, so memory holds one page of ids."""
    low, high = bounds(prefix)
    digest = hashlib.sha256()
    count, after = 0, None
    first: list[bytes] = []
    while page := repo.backend.redactions.ids(low, high, after, _SCAN):
        for raw in page:
            digest.update(raw)
        if count <= LEAF:
            first.extend(page[: LEAF + 1 - count])
        count += len(page)
        after = page[-1]
        if len(page) < _SCAN:
            break
    return Span(Summary(count, digest.digest()[:_DIGEST_BYTES]), tuple(first) if count <= LEAF else None)


def summary(repo: Repo) -> Summary:
    """The summary of every record of ``repo`` (the range ``""``), as its advertisement carries it (a read)."""
    return summarize(repo, "").summary


def spans(repo: Repo, prefixes: list[str]) -> list[dict[str, Any]]:
    """The answer to a request for these ranges (``check_prefixes``), in their order (one read of ``repo``)."""
    with repo.backend.read():
        return [summarize(repo, prefix).to_dict() for prefix in prefixes]


def read_spans(doc: Any, prefixes: list[str], sender: str) -> list[Span]:
    """Check another party's answer for ``prefixes``: one span each, every id in its range, ascending, counted.

    Raises:
        CorruptStoreError: It is not such an answer; naming ``sender``.
    """
    try:
        listed = doc.get("spans") if isinstance(doc, dict) else None
        if not isinstance(listed, list) or len(listed) != len(prefixes):
            raise ValueError(f"it is not one span for each of the {len(prefixes)} ranges asked for")
        return [_span(item, prefix) for item, prefix in zip(listed, prefixes, strict=True)]
    except ValueError as exc:
        raise CorruptStoreError(f"{sender} answered a request for ranges of redaction records with something that "
                                f"is not one ({exc}); nothing was written") from None


def _span(item: Any, prefix: str) -> Span:
    if not isinstance(item, dict):
        raise ValueError("a span is not an object")
    ids = item.get("ids")
    found = Summary.from_dict({key: value for key, value in item.items() if key != "ids"})
    if ids is None:
        if found.size <= LEAF:
            raise ValueError(f"a range of {found.size} records came without its ids")
        return Span(found, None)
    if not isinstance(ids, list) or len(ids) != found.size or found.size > LEAF:
        raise ValueError("a range's ids are not a list of as many ids as it counts, at most " + str(LEAF))
    raws = tuple(bytes.fromhex(text) if isinstance(text, str) else b"" for text in ids)
    low, high = bounds(prefix)
    if any(len(raw) != 32 for raw in raws) or any(a >= b for a, b in pairwise(raws)) or (
            raws and (raws[0] < low or (high is not None and raws[-1] >= high))):
        raise ValueError(f"the ids of range {prefix!r} are not 32-byte ids in it, ascending")
    return Span(found, raws)
