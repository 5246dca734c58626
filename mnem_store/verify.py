"""``mnem verify``: prove a store is whole, or list every way it is not.

Every stored object is re-hashed (its canonical bytes must hash to its id)
and decoded; every virtual state is rebuilt from its snapshot and change
rows and must hash to the id its commit names; every commit's parents and
state, every state's nodes, every ref (remotes' tracking branches among
them) and HEAD must point at an object of the right kind; every commit's
change-index entry must equal the diff against its first parent.  Problems
are collected, not raised one at a time, so one run shows the whole damage.
A node version whose bytes a redaction removed is accepted as whole only
because a record says so: missing bytes without a record are damage.
Reading only: nothing is repaired here (``mnem reindex`` re-derives what
can be re-derived).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .backend import KIND_CODES, ChangeIndex, GraphRow, corrected_time
from .canonical import object_id
from .errors import CorruptStoreError, MnemError
from .objects import Commit, check_arrived, decode_object
from .remotes import SETTING
from .repo import Repo, diff_nodes
from .sql import unpack
from .stateimage import StateImage

__all__ = ["Problem", "Report", "VerifyError", "verify"]

#: Verified states kept while walking commits parents first (each parent is needed by its next child).
_IMAGES_KEPT = 8


class Problem(NamedTuple):
    """One thing wrong: what kind of thing, which id (or name), and how."""

    what: str
    id: str
    message: str

    def to_dict(self) -> dict[str, str]:
        """The problem as the JSON error document lists it."""
        return {"what": self.what, "id": self.id, "message": self.message}


@dataclass
class Report:
    """What was checked, and every problem found."""

    objects: int = 0
    commits: int = 0
    states: int = 0
    nodes: int = 0
    refs: int = 0
    #: Node versions whose bytes were removed by a redaction (a record vouches for each).
    redacted: int = 0
    problems: list[Problem] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """How many of each thing was checked, for the JSON result and the error document."""
        return {"objects": self.objects, "commits": self.commits, "states": self.states,
                "nodes": self.nodes, "refs": self.refs, "redacted": self.redacted}


class VerifyError(CorruptStoreError):
    """A store that failed verification; carries every problem for the JSON contract."""

    def __init__(self, report: Report) -> None:
        first = report.problems[0]
        super().__init__(f"{len(report.problems)} problem(s); first: {first.what} {first.id}: {first.message}")
        self.report = report

    def details(self) -> dict[str, Any]:
        """Every problem and the counts, for the JSON error document."""
        return {"problems": [p.to_dict() for p in self.report.problems], **self.report.counts()}


def verify(repo: Repo) -> Report:
    """Check the whole store (call inside one read snapshot); returns the report (problems empty when whole)."""
    report = Report()
    kinds: dict[bytes, str] = {}
    commits: dict[bytes, Commit] = {}
    _objects(repo, report, kinds, commits)
    _commits(repo, report, kinds, commits)
    _refs(repo, report, kinds)
    return report


def _objects(repo: Repo, report: Report, kinds: dict[bytes, str], commits: dict[bytes, Commit]) -> None:
    """Re-hash and decode every stored object; a node without bytes must have a redaction record."""
    recorded = {record.object for record in repo.backend.redactions.every()}
    for raw, kind, stored in repo.objects.stored_rows():
        report.objects += 1
        if stored is None:
            if kind == KIND_CODES["state"]:  # a virtual state: checked when its commit's state is rebuilt
                kinds[raw] = "state"
            elif kind == KIND_CODES["memory_node"] and raw in recorded:  # its bytes were removed on purpose
                kinds[raw] = "memory_node"
                report.redacted += 1
            else:
                report.problems.append(Problem("object", raw.hex(), "has no stored bytes and no redaction record"))
            continue
        try:
            data = unpack(stored)
            actual = object_id(data)
            if actual != raw:
                report.problems.append(Problem("object", raw.hex(), f"does not hash to its id (got {actual.hex()})"))
                continue
            obj = decode_object(data)
        except MnemError as exc:
            report.problems.append(Problem("object", raw.hex(), str(exc)))
            continue
        kinds[raw] = obj.kind
        try:  # of the right kind, so what points at it is whole; its content is the problem
            check_arrived(obj)
        except MnemError as exc:
            report.problems.append(Problem("object", raw.hex(), str(exc)))
        if isinstance(obj, Commit):
            commits[raw] = obj


def _commits(repo: Repo, report: Report, kinds: dict[bytes, str], commits: dict[bytes, Commit]) -> None:
    """Check every commit in graph order, parents first, so each state is checked against its parent's.

    Walking parents first keeps the parent's image at hand: rebuilding a
    state from it costs the commit's change rows plus one hash (``_rebuild``),
    and only the nodes a commit changed need their kind checked (the rest
    were checked in the parent), so the walk costs one rebuild and one hash
    per commit rather than O(state size) Python work per commit.  A fresh change index keeps
    the images of a long-lived ``mnem serve`` worker out of it: they were
    built from the bytes of an earlier moment.
    """
    states = repo.states.fresh()
    images: OrderedDict[int, StateImage] = OrderedDict()  # commit key -> its verified state, newest last
    ordered: list[tuple[GraphRow, bytes, Commit]] = []
    for raw, commit in commits.items():
        row = states.graph(raw)
        if row is None:
            report.problems.append(Problem("commit", raw.hex(), "is not in the commit graph"))
        else:
            ordered.append((row, raw, commit))
    checked_states: set[bytes] = set()
    for row, raw, commit in sorted(ordered, key=lambda item: item[0].key):
        report.commits += 1
        for parent in commit.parents:
            if kinds.get(parent) != "commit":
                report.problems.append(Problem("commit", raw.hex(), f"parent {parent.hex()} is {_kind(kinds, parent)}"))
        if kinds.get(commit.state) != "state":
            report.problems.append(
                Problem("commit", raw.hex(), f"state {commit.state.hex()} is {_kind(kinds, commit.state)}")
            )
            continue
        first_parent = repo.objects.key(commit.parents[0]) if commit.parents else None
        if row.state != commit.state or row.parent != first_parent:
            report.problems.append(
                Problem("index", raw.hex(), "the commit graph disagrees with the commit's parents or state")
            )
            continue
        parent_rows = [states.graph(parent) for parent in commit.parents]
        corrected = corrected_time(commit.time, (p.corrected for p in parent_rows if p is not None))
        if row.corrected != corrected:
            report.problems.append(Problem(
                "index", raw.hex(), f"corrected time {row.corrected} should be {corrected}; `mnem reindex` repairs it"))
        try:
            if row.parent is None:
                parent_image = StateImage.empty()
            else:  # a parent further back than the images kept is rebuilt as any read would
                kept = images.get(row.parent)
                parent_image = kept if kept is not None else states.image(states.graph_row(row.parent))
            image, changed = _rebuild(report, raw, row, states, parent_image, states.change_set(row.key))
        except MnemError as exc:
            report.problems.append(Problem("state", commit.state.hex(), str(exc)))
            continue
        images[row.key] = image
        while len(images) > _IMAGES_KEPT:
            images.popitem(last=False)
        if commit.state not in checked_states:
            checked_states.add(commit.state)
            report.states += 1
            report.nodes += len(image.nodes)
        for node_id in changed:
            node_raw = image.nodes.get(node_id)
            if node_raw is not None and kinds.get(node_raw) != "memory_node":
                report.problems.append(Problem(
                    "state", commit.state.hex(),
                    f"node {node_id!r} points at {node_raw.hex()}, {_kind(kinds, node_raw)}"))


def _rebuild(report: Report, raw: bytes, row: GraphRow, states: ChangeIndex, parent: StateImage,
             indexed: dict[str, tuple[str, bytes | None]]) -> tuple[StateImage, Iterable[str]]:
    """A commit's state, rebuilt from its first parent's plus its change rows, and the ids it changed.

    This one step checks both the state and the commit's change-index entry:
    the rows' kinds must match the parent and the rebuilt bytes must hash to
    the commit's state id, at the cost of the rows plus one hash.  Otherwise
    the entry is reported, the state is rebuilt as a read would rebuild it
    (from a snapshot or older changes; ``CorruptStoreError`` if it cannot
    be) and the true change set comes from a full diff.
    """
    consistent = all(
        _kind_of_change(parent.nodes.get(node_id), new) == kind for node_id, (kind, new) in indexed.items()
    )
    image = parent.apply({node_id: new for node_id, (_, new) in indexed.items()})
    if consistent and image.state_id() == row.state:
        return image, indexed.keys()
    image = states.image(row)
    expected = {change.id: change.kind for change in diff_nodes(parent.nodes, image.nodes)}
    says = {node_id: kind for node_id, (kind, _) in sorted(indexed.items())}
    report.problems.append(Problem("index", raw.hex(), f"change index says {says}, the states say {expected}"))
    return image, expected.keys()


def _kind_of_change(old: bytes | None, new: bytes | None) -> str | None:
    """What replacing ``old`` with ``new`` is (None when it changes nothing)."""
    if old == new:
        return None
    return "added" if old is None else "removed" if new is None else "modified"


def _refs(repo: Repo, report: Report, kinds: dict[bytes, str]) -> None:
    for name, tip in repo.branches():
        report.refs += 1
        if kinds.get(tip) != "commit":
            report.problems.append(Problem("ref", name, f"points at {tip.hex()}, {_kind(kinds, tip)}"))
    _tracking(repo, report, kinds)
    try:
        head = repo.head()
    except MnemError as exc:
        report.problems.append(Problem("head", "HEAD", str(exc)))
        return
    if head.commit is not None and kinds.get(head.commit) != "commit":
        report.problems.append(Problem("head", "HEAD", f"detached at {head.commit.hex()}, {_kind(kinds, head.commit)}"))
    names = {name for name, _ in repo.branches()}
    # HEAD may stay on the default branch before its first commit beside others (as git's unborn branch): a
    # store whose only writes went to another branch (`mnem write --branch`, a checkpointer's own) is whole.
    # Any other branch HEAD names must exist.
    unborn = head.branch == repo.config.get("default_branch", "main")
    if head.branch is not None and names and head.branch not in names and not unborn:
        report.problems.append(Problem("head", "HEAD", f'names branch "{head.branch}", which does not exist'))


def _tracking(repo: Repo, report: Report, kinds: dict[bytes, str]) -> None:
    """Check every remote's tracking branches, which ``origin/main`` resolves to like a branch.

    They live in the remotes setting, not the refs table, and a fetch moves
    them; a problem here names ``NAME/BRANCH`` under its own kind, since a
    local branch may carry the same name.
    """
    try:
        remotes = repo.remotes()
    except CorruptStoreError as exc:
        report.problems.append(Problem("tracking", SETTING, exc.detail))
        return
    for _, remote in sorted(remotes.items()):
        for name, tip in remote.tracking():
            report.refs += 1
            if kinds.get(tip) != "commit":
                report.problems.append(Problem("tracking", name, f"points at {tip.hex()}, {_kind(kinds, tip)}"))


def _kind(kinds: dict[bytes, str], raw: bytes) -> str:
    kind = kinds.get(raw)
    return "missing" if kind is None else f"a {kind}"
