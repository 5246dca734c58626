"""The verbs between stores: ``remote``, ``fetch``, ``push``, ``pull`` and ``clone`` (docs/remotes.md).

Like ``mnem_store.porcelain``, each verb owns its transactions and returns
a typed result.  A transfer reads the sending store in one snapshot and
writes everything the receiving store gains (objects, commits, the branch
a push moves, the tracking branches a fetch moves) in ONE write
transaction of the receiver, so a refused object, a lost race or a kill
leaves the receiver as it was.  A push then records the remote's new tip
as the tracking branch in a second, local write: if that is lost, the
next fetch brings it back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .errors import CommandError, InvalidRefError
from .graph import Graph
from .layout import Head, StoreUrl
from .location import Address, address
from .remotes import Remote, check_remote_name, find_remote, remote_url
from .repo import Repo
from .transfer import Sent, copy, missing

if TYPE_CHECKING:
    from .backend import Backend
    from .merge import Resolution, Strategy
    from .porcelain import MergeOutcome

__all__ = [
    "Cloned", "Fetched", "Pulled", "Pushed", "clone", "fetch", "pull", "push", "remote_add", "remote_list",
    "remote_remove",
]


class Fetched(NamedTuple):
    """What a fetch brought: the counts, and each tracking branch that moved ``(name, old or None, new)``."""

    remote: str
    sent: Sent
    moved: list[tuple[str, bytes | None, bytes]]

    def to_dict(self) -> dict[str, Any]:
        """``fetch --json`` (docs/cli-json.md)."""
        return {"remote": self.remote, "commits": self.sent.commits, "objects": self.sent.objects,
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
                "commits": self.sent.commits, "objects": self.sent.objects}


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
                "commits": self.sent.commits, "objects": self.sent.objects}


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


def _open(remote: Remote | str) -> Repo:
    """Open the store a remote names (or an address as typed)."""
    where: Address = address(remote.url if isinstance(remote, Remote) else remote)
    return Repo.open(where)


# ------------------------------------------------------------------ transfers
def _fetch_into(repo: Repo, other: Repo, name: str) -> Fetched:
    """Inside ``repo``'s write and ``other``'s read: copy what ``repo`` lacks and move the tracking branches.

    The tracking branches mirror the remote's branches (a branch deleted
    there is dropped here, as ``git fetch --prune``).
    """
    remotes = repo.remotes()
    remote = find_remote(remotes, name)
    tips = dict(other.branches())
    sent = copy(other, repo, missing(other, repo, tips.values()))
    moved = [(f"{name}/{branch}", remote.branches.get(branch), tip) for branch, tip in sorted(tips.items())
             if remote.branches.get(branch) != tip]
    repo.set_remotes({**remotes, name: remote._replace(branches=tips)})
    return Fetched(name, sent, moved)


def fetch(repo: Repo, name: str = "origin") -> Fetched:
    """Bring the remote's new commits and move its tracking branches, in one write of this store."""
    with _open(_known(repo, name)) as other, other.backend.read(), repo.backend.write():
        return _fetch_into(repo, other, name)


def push(repo: Repo, name: str = "origin", branch: str | None = None, *, force_with_lease: bool = False,
         expected: str | None = None) -> Pushed:
    """Send a branch (default the current one) and move the remote's branch to it by compare-and-swap.

    A push that is not a fast-forward is refused (``conflict``) unless
    ``force_with_lease``: then the remote branch is overwritten only while
    it is still at ``expected`` (default: where this store last saw it,
    its tracking branch).
    """
    with repo.backend.read():
        remote = find_remote(repo.remotes(), name)
        branch = branch if branch is not None else repo.attached_branch("push")
        tip = repo.branch_tip(branch)
        if tip is None:
            raise InvalidRefError(f'no branch "{branch}" to push; `mnem branch` lists the branches')
        lease = remote.branches.get(branch) if expected is None else _expected(repo, expected)
    with _open(remote) as other, repo.backend.read(), other.backend.write():
        old = other.branch_tip(branch)
        if old == tip:
            status = "up-to-date"
        elif force_with_lease:
            if old != lease:
                shown = old.hex()[:12] if old is not None else "nothing"
                raise CommandError(
                    f'push refused: "{branch}" on {name} is at {shown}, not where the lease expects; '
                    f"run `mnem fetch {name}`, look at {name}/{branch}, then push again", "conflict")
            status = "forced" if old is not None and not Graph(repo).is_ancestor(old, tip) else (
                "created" if old is None else "fast-forwarded")
        elif old is not None and not Graph(repo).is_ancestor(old, tip):
            raise CommandError(
                f'push refused: "{branch}" on {name} has commits this branch lacks (not a fast-forward); '
                f"run `mnem pull {name} {branch}` and push again, or overwrite with "
                f"`mnem push --force-with-lease {name} {branch}`", "conflict")
        else:
            status = "created" if old is None else "fast-forwarded"
        sent = copy(repo, other, missing(repo, other, [tip])) if old != tip else Sent(0, 0)
        if old != tip:
            other.move_branch(branch, old, tip)
    if remote.branches.get(branch) == tip:
        return Pushed(name, branch, status, old, tip, sent)
    with repo.backend.write():  # also after an up-to-date push: the tracking branch learns where the remote is
        remotes = repo.remotes()
        if name in remotes:
            remotes[name].branches[branch] = tip
            repo.set_remotes(remotes)
    return Pushed(name, branch, status, old, tip, sent)


def _expected(repo: Repo, text: str) -> bytes:
    """A lease's EXPECTED commit: a full id as given (this store need not hold it), else a commit-ish here."""
    if len(text) == 64 and all(ch in "0123456789abcdef" for ch in text):
        return bytes.fromhex(text)
    return repo.resolve(text)


def pull(repo: Repo, name: str = "origin", branch: str | None = None, *,
         resolutions: Mapping[str, Resolution] | None = None, strategy: Strategy | None = None,
         message: str | None = None, author: str, time_ms: int | None) -> Pulled:
    """Fetch, then merge ``NAME/BRANCH`` (default the current branch's name) into the current branch.

    Both happen in one write of this store.  A merge that stops on
    conflicts writes nothing of its own, but the fetch stays, as in git.
    """
    from .merge import merge as merge_commit
    from .porcelain import MergeOutcome

    with _open(_known(repo, name)) as other, other.backend.read(), repo.backend.write():
        current = repo.attached_branch("pull")
        wanted = branch if branch is not None else current
        fetched = _fetch_into(repo, other, name)
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
    with _open(url) as other, other.backend.read():
        head = other.head()
        tips = dict(other.branches())
        origin = Remote("origin", url, tips)
        done: list[Sent] = []

        def populate(backend: Backend) -> None:
            new = Repo(backend)
            done.append(copy(other, new, missing(other, new, tips.values())))
            new.set_remotes({"origin": origin})
            if head.branch is not None and head.branch in tips:
                new.move_branch(head.branch, None, tips[head.branch])
            new.set_head(head)

        if head.commit is not None and head.commit not in tips.values():
            raise CommandError("the source's HEAD is detached at a commit no branch holds; check out a branch "
                               "there and clone again", "invalid_ref")
        Repo.init(dest, populate).close()
    return Cloned(dest.shown if isinstance(dest, StoreUrl) else str(dest), origin, head, done[0])
