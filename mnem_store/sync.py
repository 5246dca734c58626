"""The verbs between stores: ``remote``, ``fetch``, ``push``, ``pull`` and ``clone`` (docs/remotes.md).

Like ``mnem_store.porcelain``, each verb owns its transactions and returns
a typed result.  Each speaks to the other store through a ``peers.Peer``
(a folder, a PostgreSQL store or an HTTP server alike): the sender
advertises its branches and answers with a pack of what the receiver
lacks; the receiver writes everything it gains (objects, commits, the
branch a push moves, the tracking branches a fetch moves) in ONE write
transaction, so a refused object, a lost race or a kill leaves it as it
was.  A push then records the remote's new tip as the tracking branch in a
second, local write: if that is lost, the next fetch brings it back.

Redaction records travel with history (``redaction_travel``): a fetch,
pull or clone asks for the records the remote advertises and this store
lacks, and applies them in the write that takes the pack (so an erasure
made there reaches here, and bytes it removed are in no file here
afterwards); a push brings the records the remote lacks, even to a branch
that is up to date.  A remote whose mnem predates redaction advertises no
records and can take none: a push to it from a store with records is
refused, since it would keep bytes removed here.

A remote that sums its records up (``peers.Advert.summary``) is compared
with this store range by range, and the records travel in pages
(``redaction_exchange``): a fetch or clone takes them in its one write,
before the packs, and a push sends them, a page per write of the remote's,
before its pack.  A remote that lists its records' ids instead (an older
mnem) is served as before, within ``MAX_REDACTIONS``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from .errors import CommandError, FormatVersionError, InvalidRefError
from .graph import Graph
from .layout import FORMAT_VERSION, Head, StoreUrl
from .location import Address
from .peers import MAX_IDS, Advert, LocalPeer, Peer, Update
from .redaction_exchange import Spool, fetch_records, push_records, transfer_limits
from .redaction_ranges import Summary, summary
from .redaction_travel import MAX_REDACTIONS
from .remotes import Remote, check_remote_name, find_remote, remote_url
from .repo import Repo
from .transfer import Sent, carries_redactions, check_tips, missing, pack, spooled, unpack

if TYPE_CHECKING:
    from .backend import Backend, Erasure
    from .merge import Resolution, Strategy
    from .porcelain import MergeOutcome

__all__ = [
    "RESIDUE", "Cloned", "Fetched", "Pulled", "Pushed", "clone", "fetch", "pull", "push", "remote_add", "remote_list",
    "remote_remove",
]

#: What a fetch whose erasure another reader held up says (``Fetched.residue``).  Fetching again would apply no
#: record, so the fix is the verb that erases on its own: redacting a version again removes nothing twice.
RESIDUE = ("another process was reading this store, so a file of it may still hold bytes the remote's redaction "
           "records removed: once that reader is done, run `mnem redact --object HEX --reason TEXT` for one of "
           "them (`mnem redactions` lists them; nothing is removed twice), which finishes the erasure")


class Fetched(NamedTuple):
    """What a fetch brought: the counts, and each tracking branch that moved ``(name, old or None, new)``.

    ``residue`` is set when the fetch applied redaction records and a file of this store may still hold
    bytes they removed (``RESIDUE``: why, and the fix); None otherwise.
    """

    remote: str
    sent: Sent
    moved: list[tuple[str, bytes | None, bytes]]
    residue: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``fetch --json`` (docs/cli-json.md)."""
        return {"remote": self.remote, "commits": self.sent.commits, "objects": self.sent.objects,
                "redactions": self.sent.redactions, "residue": self.residue,
                "branches": [{"name": name, "old": old.hex() if old is not None else None, "new": new.hex()}
                             for name, old, new in self.moved]}


class Pushed(NamedTuple):
    """What a push did to one branch of a remote."""

    remote: str
    branch: str
    status: str  # "up-to-date" | "created" | "fast-forwarded" | "forced"
    old: bytes | None
    new: bytes
    sent: Sent

    def to_dict(self) -> dict[str, Any]:
        """``push --json`` (docs/cli-json.md)."""
        return {"remote": self.remote, "branch": self.branch, "status": self.status,
                "old": self.old.hex() if self.old is not None else None, "new": self.new.hex(),
                "commits": self.sent.commits, "objects": self.sent.objects, "redactions": self.sent.redactions}


class Pulled(NamedTuple):
    """A pull: its fetch, and the merge of the tracking branch into the current branch."""

    fetched: Fetched
    merged: MergeOutcome

    def to_dict(self) -> dict[str, Any]:
        """``pull --json``: the fetch's document with the merge's under ``merge`` (docs/cli-json.md)."""
        return {**self.fetched.to_dict(), "merge": self.merged.to_dict()}


class Cloned(NamedTuple):
    """A new store made from another: where, its HEAD, and what was copied."""

    store: str
    origin: Remote
    head: Head
    sent: Sent

    def to_dict(self) -> dict[str, Any]:
        """``clone --json`` (docs/cli-json.md)."""
        return {"store": self.store, "remote": self.origin.to_dict(), "head": self.head.text.strip(),
                "commits": self.sent.commits, "objects": self.sent.objects, "redactions": self.sent.redactions}


# ------------------------------------------------------------------ the remotes a store knows
def remote_add(repo: Repo, name: str, url: str) -> Remote:
    """Name another store (a folder or a PostgreSQL store URL); it is not contacted until a fetch."""
    check_remote_name(name)
    remote = Remote(name, remote_url(url), {})
    with repo.backend.write():
        remotes = repo.remotes()
        if name in remotes:
            raise InvalidRefError(f'remote "{name}" already exists; remove it first with `mnem remote remove {name}`')
        repo.set_remotes({**remotes, name: remote})
    return remote


def remote_remove(repo: Repo, name: str) -> Remote:
    """Forget a remote and its tracking branches (the remote store itself is untouched)."""
    with repo.backend.write():
        remotes = repo.remotes()
        found = find_remote(remotes, name)
        repo.set_remotes({other: r for other, r in remotes.items() if other != name})
    return found


def remote_list(repo: Repo) -> list[Remote]:
    """Every remote, by name, with its tracking branches."""
    with repo.backend.read():
        return [remote for _, remote in sorted(repo.remotes().items())]


def _known(repo: Repo, name: str) -> Remote:
    with repo.backend.read():
        return find_remote(repo.remotes(), name)


@contextmanager
def _peer(url: str) -> Iterator[Peer]:
    """The peer a remote's address names (an ``http(s)://`` URL is a mnem-mcp server), closed afterwards."""
    if url.startswith(("http://", "https://")):
        from .httppeer import HttpPeer  # here: urllib's import is paid only by a remote over HTTP

        peer: Peer = HttpPeer(url)
    else:
        peer = LocalPeer(url)
    try:
        yield peer
    finally:
        peer.close()


def _advert(peer: Peer) -> Advert:
    """The peer's advertisement, refused when its store format is newer than this engine reads."""
    advert = peer.advertise()
    if advert.format > FORMAT_VERSION:
        raise FormatVersionError(advert.format, FORMAT_VERSION)
    return advert


# ------------------------------------------------------------------ transfers
def _fetch(repo: Repo, peer: Peer, name: str) -> Fetched:
    """Copy what ``repo`` lacks of the peer's branches and move the tracking branches, in one write of ``repo``.

    The haves are this store's branch tips and where it last saw the
    remote's.  The tracking branches mirror the remote's branches (a branch
    deleted there is dropped here, as ``git fetch --prune``).  The records
    the remote has and this store lacks come before the packs (in pages,
    from a remote that sums its records up) or with them, and are taken
    first, in an erasing write (``Backend.erasing``).
    """
    advert = _advert(peer)
    with repo.backend.read():
        wants = sorted({tip for tip in advert.branches.values() if repo.states.graph(tip) is None})
        # the best haves first: the remote's tips this store holds, where it last saw them, its own branches
        haves = [*sorted(tip for tip in advert.branches.values() if tip not in wants),
                 *sorted(find_remote(repo.remotes(), name).branches.values()),
                 *sorted(tip for _, tip in repo.branches())]
        listed = sorted(advert.redactions or ())
        kept = repo.backend.redactions.of(listed)
        lacking = [raw for raw in listed if raw not in kept]
        sender = f"the remote {name} ({find_remote(repo.remotes(), name).shown})"
    with ExitStack() as packs:  # each pack's file is closed after the write
        pages = packs.enter_context(_pages(repo, peer, advert, sender))
        blobs = [packs.enter_context(blob) for blob in _uploads(peer, wants, haves, lacking, advert.summary)]
        with _taking(repo, blobs, pages) as erased:
            remotes = repo.remotes()
            remote = find_remote(remotes, name)
            applied = pages.take(repo, transfer_limits().page, sender)
            sent = _taken(unpack(repo, blob) for blob in blobs)
            sent = sent._replace(redactions=sent.redactions + applied)
            tips = advert.branches
            check_tips(repo, tips.items(), sender)
            moved = [(f"{name}/{branch}", remote.branches.get(branch), tip) for branch, tip in sorted(tips.items())
                     if remote.branches.get(branch) != tip]
            repo.set_remotes({**remotes, name: remote._replace(branches=tips)})
    return Fetched(name, sent, moved, None if erased is None or erased.complete else RESIDUE)


def _pages(repo: Repo | None, peer: Peer, advert: Advert, sender: str) -> Spool:
    """The pages of records a remote that sums its records up has and ``repo`` (None: a new store) lacks.

    Empty for a remote that lists its records instead: they come with the packs.
    """
    if advert.summary is None:
        return Spool(None)
    return fetch_records(repo, peer, advert.summary, transfer_limits(), sender)


def _uploads(peer: Peer, wants: list[bytes], haves: list[bytes], lacking: list[bytes],
             held: Summary | None) -> list[BinaryIO]:
    """The packs of ``wants``: one upload per ``MAX_IDS`` wants, each naming the first ``MAX_IDS`` haves.

    A peer takes at most ``MAX_IDS`` ids in each list.  A have left out
    only makes a pack carry commits this store holds, which ``unpack``
    skips; a later batch may carry commits an earlier one brought, skipped
    the same way.  The first upload asks for the records of ``lacking``
    (there is one even without wants when records are lacking: an erasure
    made on the remote travels without a new commit).  ``held``: the
    remote's summary, whose records came in pages (``transfer.pack``).
    """
    haves = list(dict.fromkeys(haves))[:MAX_IDS]
    with ExitStack() as opened:  # a failed batch closes the packs before it
        blobs = [opened.enter_context(peer.upload(wants[start:start + MAX_IDS], haves,
                                                  lacking if start == 0 else None, held))
                 for start in range(0, max(len(wants), 1 if lacking else 0), MAX_IDS)]
        opened.pop_all()
    return blobs


def _taking(repo: Repo, blobs: list[BinaryIO], pages: Spool) -> AbstractContextManager[Erasure | None]:
    """The write that takes ``blobs``: an erasing one when pages of records came or a pack carries records.

    An erasing write yields its ``Erasure``, whose outcome is known once the write has committed.
    """
    if pages.count or any(carries_redactions(blob) for blob in blobs):
        return repo.backend.erasing()
    return repo.backend.write()


def _taken(sents: Iterable[Sent]) -> Sent:
    """What several packs taken in one write wrote, added up."""
    commits = objects = redactions = 0
    ids: list[bytes] = []
    for sent in sents:
        commits, objects, redactions = commits + sent.commits, objects + sent.objects, redactions + sent.redactions
        ids.extend(sent.ids)
    return Sent(commits, objects, tuple(ids), redactions)


def fetch(repo: Repo, name: str = "origin") -> Fetched:
    """Bring the remote's new commits and move its tracking branches, in one write of this store."""
    with _peer(_known(repo, name).url) as peer:
        return _fetch(repo, peer, name)


def push(repo: Repo, name: str = "origin", branch: str | None = None, *, force_with_lease: bool = False,
         expected: str | None = None) -> Pushed:
    """Send a branch (default the current one) and move the remote's branch to it by compare-and-swap.

    A push that is not a fast-forward is refused (``conflict``) unless
    ``force_with_lease``: then the remote branch is overwritten only while
    it is still at ``expected`` (default: where this store last saw it,
    its tracking branch).  The remote takes the pack and moves its branch
    in one write, and only while the branch is still where the
    advertisement showed it (``peers.receive``).  The records this store
    has and the remote lacks go before the pack (in pages, to a remote that
    sums its records up: each page is a write of the remote's) or with it, also when
    the branch is up to date there.

    Raises:
        CommandError: ``usage``: this store has redaction records and the remote's mnem cannot take them.
    """
    with repo.backend.read():
        remote = find_remote(repo.remotes(), name)
        branch = branch if branch is not None else repo.attached_branch("push")
        tip = repo.branch_tip(branch)
        if tip is None:
            raise InvalidRefError(f'no branch "{branch}" to push; `mnem branch` lists the branches')
        lease = remote.branches.get(branch) if expected is None else _expected(repo, expected)
        count = repo.backend.redactions.count()
    with _peer(remote.url) as peer:
        advert = _advert(peer)
        lacking = [] if advert.summary is not None else _listed_lacking(repo, advert, name, count)
        old = advert.branches.get(branch)
        if old != tip or lacking:
            _check_move(repo, name, branch, old, tip, force_with_lease, lease)
        held, applied = None, 0
        if advert.summary is not None:
            with repo.backend.read():
                held = summary(repo)
            applied = push_records(repo, peer, advert.summary, transfer_limits(), f"the remote {name} ({remote.shown})")
        if old == tip and not lacking:
            status, sent = "up-to-date", Sent(0, 0, (), applied)
        else:
            with repo.backend.read():
                haves = [t for t in advert.branches.values() if repo.states.graph(t) is not None]
                blob = spooled(partial(pack, repo, missing(repo, [tip], haves), asked=lacking, held=held))
            with blob:
                received = peer.receive(blob, Update(branch, old, tip, force=force_with_lease))
            status, sent = received.status, received.sent._replace(redactions=received.sent.redactions + applied)
    if remote.branches.get(branch) == tip:
        return Pushed(name, branch, status, old, tip, sent)
    with repo.backend.write():  # also after an up-to-date push: the tracking branch learns where the remote is
        remotes = repo.remotes()
        if name in remotes:
            remotes[name].branches[branch] = tip
            repo.set_remotes(remotes)
    return Pushed(name, branch, status, old, tip, sent)


def _listed_lacking(repo: Repo, advert: Advert, name: str, count: int) -> list[bytes]:
    """The records a remote that lists its records' ids (an older mnem) lacks, which the pack then carries.

    Raises:
        CommandError: ``usage``: this store has records and the remote cannot take them (it lists none), or
            more than such a remote takes in one transfer.
    """
    if not count:
        return []
    if advert.redactions is None:
        raise CommandError(f"push refused: the remote {name} runs a mnem that cannot take redaction records, and "
                           f"this store has {count}: it would keep bytes removed here; upgrade mnem there, then push "
                           "again", "usage")
    if count > MAX_REDACTIONS:
        raise CommandError(f"push refused: this store has {count} redaction records, and the remote {name} runs an "
                           f"older mnem that takes at most {MAX_REDACTIONS} in one transfer; upgrade mnem there, "
                           "then push again", "usage")
    with repo.backend.read():
        kept = repo.backend.redactions.ids(bytes(32), None, None, count)
    return sorted(set(kept) - advert.redactions)


def _check_move(repo: Repo, name: str, branch: str, old: bytes | None, tip: bytes, force_with_lease: bool,
                lease: bytes | None) -> None:
    """Refuse a push that would move the remote's branch otherwise than asked (``conflict``; nothing is sent).

    Raises:
        CommandError: ``conflict``: the lease does not hold, or the move is not a fast-forward and not forced.
    """
    with repo.backend.read():
        forward = old is None or Graph(repo).is_ancestor(old, tip)
    if force_with_lease and old != lease:
        shown = old.hex()[:12] if old is not None else "nothing"
        raise CommandError(f'push refused: "{branch}" on {name} is at {shown}, not where the lease expects; run '
                           f"`mnem fetch {name}`, look at {name}/{branch}, then push again", "conflict")
    if not forward and not force_with_lease:
        raise CommandError(f'push refused: "{branch}" on {name} has commits this branch lacks (not a fast-forward); '
                           f"run `mnem pull {name} {branch}` and push again, or overwrite with "
                           f"`mnem push --force-with-lease {name} {branch}`", "conflict")


def _expected(repo: Repo, text: str) -> bytes:
    """A lease's EXPECTED commit: a full id as given (this store need not hold it), else a commit-ish here."""
    if len(text) == 64 and all(ch in "0123456789abcdef" for ch in text):
        return bytes.fromhex(text)
    return repo.resolve(text)


def pull(repo: Repo, name: str = "origin", branch: str | None = None, *,
         resolutions: Mapping[str, Resolution] | None = None, strategy: Strategy | None = None,
         message: str | None = None, author: str, time_ms: int | None) -> Pulled:
    """Fetch, then merge ``NAME/BRANCH`` (default the current branch's name) into the current branch.

    The fetch is one write of this store and the merge another; a merge
    that stops on conflicts writes nothing of its own, but the fetch stays,
    as in git.
    """
    from .merge import merge as merge_commit
    from .porcelain import MergeOutcome

    with repo.backend.read():
        current = repo.attached_branch("pull")
        remote = find_remote(repo.remotes(), name)
    with _peer(remote.url) as peer:
        fetched = _fetch(repo, peer, name)
    with repo.backend.write():
        wanted = branch if branch is not None else current
        tip = repo.remotes()[name].branches.get(wanted)
        if tip is None:
            raise InvalidRefError(f'remote "{name}" has no branch "{wanted}"; `mnem remote list` shows its branches')
        spec = f"{name}/{wanted}" if repo.branch_tip(f"{name}/{wanted}") is None else tip.hex()
        result = merge_commit(repo, spec, resolutions=resolutions, strategy=strategy, message=message,
                              author=author, time_ms=time_ms)
        named = {raw for c in result.conflicts for raw in (c.base, c.ours, c.theirs) if raw is not None}
        made = repo.commit_obj(result.commit).message if result.commit is not None else None
        return Pulled(fetched, MergeOutcome(result, {raw: repo.node(raw) for raw in named}, made))


def clone(source: str, dest: Address) -> Cloned:
    """Make a new store at ``dest`` holding ``source``'s history, with ``origin`` naming ``source``.

    Every branch of the source becomes a tracking branch; the source HEAD's
    branch becomes a local branch, checked out.  The new store is built in
    its creating transaction: a failure leaves nothing at ``dest``.
    """
    url = remote_url(source)
    with _peer(url) as peer:
        advert = _advert(peer)
        head, tips = advert.head, advert.branches
        if head.commit is not None and head.commit not in tips.values():
            raise CommandError("the source's HEAD is detached at a commit no branch holds; check out a branch "
                               "there and clone again", "invalid_ref")
        sender = f"the remote {Remote('origin', url, tips).shown}"
        pages = _pages(None, peer, advert, sender)
        try:
            blobs = _uploads(peer, sorted(set(tips.values())), [], sorted(advert.redactions or ()), advert.summary)
        except BaseException:
            pages.close()
            raise
    origin = Remote("origin", url, tips)
    done: list[Sent] = []

    def populate(backend: Backend) -> None:
        new = Repo(backend)
        applied = pages.take(new, transfer_limits().page, sender)
        sent = _taken(unpack(new, blob) for blob in blobs)
        done.append(sent._replace(redactions=sent.redactions + applied))
        check_tips(new, tips.items(), f"the remote {origin.shown}")
        new.set_remotes({"origin": origin})
        if head.branch is not None and head.branch in tips:
            new.move_branch(head.branch, None, tips[head.branch])
        new.set_head(head)

    with ExitStack() as packs:  # each pack's file is closed after the store is made
        packs.enter_context(pages)
        for blob in blobs:
            packs.enter_context(blob)
        Repo.init(dest, populate).close()
    return Cloned(dest.shown if isinstance(dest, StoreUrl) else str(dest), origin, head, done[0])
