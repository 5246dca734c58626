"""``mnem verify``: prove a store is whole, or list every way it is not.

Every stored object is re-hashed (its canonical bytes must hash to its id)
and decoded; every virtual state is rebuilt from its snapshot and change
rows and must hash to the id its commit names; every commit's parents and
state, every state's nodes, every ref and HEAD must point at an object of
the right kind; every commit's change-index entry must equal the diff
against its first parent.  Problems are collected, not raised one at a time,
so one run shows the whole damage.  Reading only: nothing is repaired here
(``mnem reindex`` re-derives what can be re-derived).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import blake3

from .errors import CorruptStoreError, MnemError
from .objects import Commit, decode_object
from .objectstore import unpack
from .repo import Repo, diff_nodes

__all__ = ["Problem", "Report", "VerifyError", "verify"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong: what kind of thing, which id (or name), and how."""

    what: str
    id: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"what": self.what, "id": self.id, "message": self.message}


@dataclass
class Report:
    """What was checked, and every problem found."""

    objects: int = 0
    commits: int = 0
    states: int = 0
    nodes: int = 0
    refs: int = 0
    problems: list[Problem] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"objects": self.objects, "commits": self.commits, "states": self.states,
                "nodes": self.nodes, "refs": self.refs}


class VerifyError(CorruptStoreError):
    """A store that failed verification; carries every problem for the JSON contract."""

    def __init__(self, report: Report) -> None:
        first = report.problems[0]
        super().__init__(f"{len(report.problems)} problem(s); first: {first.what} {first.id}: {first.message}")
        self.report = report

    def details(self) -> dict[str, Any]:
        return {"problems": [p.to_dict() for p in self.report.problems], **self.report.counts()}


def verify(repo: Repo) -> Report:
    """Check the whole store; returns the report (problems empty when whole)."""
    report = Report()
    kinds: dict[bytes, str] = {}
    commits: dict[bytes, Commit] = {}
    with repo.db.read():
        _objects(repo, report, kinds, commits)
        _commits(repo, report, kinds, commits)
        _refs(repo, report, kinds)
    return report


def _objects(repo: Repo, report: Report, kinds: dict[bytes, str], commits: dict[bytes, Commit]) -> None:
    rows = repo.db.conn.execute("SELECT id, data FROM objects ORDER BY id").fetchall()
    for raw, stored in rows:
        report.objects += 1
        if stored is None:  # a virtual state: checked when its commit's state is rebuilt
            kinds[raw] = "state"
            continue
        try:
            data = unpack(stored)
            actual = blake3.blake3(data).digest()
            if actual != raw:
                report.problems.append(Problem("object", raw.hex(), f"does not hash to its id (got {actual.hex()})"))
                continue
            obj = decode_object(data)
        except MnemError as exc:
            report.problems.append(Problem("object", raw.hex(), str(exc)))
            continue
        kinds[raw] = obj.kind
        if isinstance(obj, Commit):
            commits[raw] = obj


def _commits(repo: Repo, report: Report, kinds: dict[bytes, str], commits: dict[bytes, Commit]) -> None:
    checked_states: set[bytes] = set()
    for raw, commit in commits.items():
        report.commits += 1
        for parent in commit.parents:
            if kinds.get(parent) != "commit":
                report.problems.append(Problem("commit", raw.hex(), f"parent {parent.hex()} is {_kind(kinds, parent)}"))
        if kinds.get(commit.state) != "state":
            report.problems.append(Problem("commit", raw.hex(), f"state {commit.state.hex()} is {_kind(kinds, commit.state)}"))
            continue
        try:
            nodes = repo.state_nodes(commit.state)
            parent_nodes = repo.commit_nodes(commit.parents[0]) if commit.parents else {}
            indexed = repo.changes_of(raw)
        except MnemError as exc:
            report.problems.append(Problem("state", commit.state.hex(), str(exc)))
            continue
        if commit.state not in checked_states:
            checked_states.add(commit.state)
            report.states += 1
            for node_id, node_raw in nodes.items():
                report.nodes += 1
                if kinds.get(node_raw) != "memory_node":
                    report.problems.append(Problem(
                        "state", commit.state.hex(), f"node {node_id!r} points at {node_raw.hex()}, {_kind(kinds, node_raw)}"))
        expected = {change.id: change.kind for change in diff_nodes(parent_nodes, nodes)}
        if indexed != expected:
            report.problems.append(Problem("index", raw.hex(), f"change index says {indexed}, the states say {expected}"))


def _refs(repo: Repo, report: Report, kinds: dict[bytes, str]) -> None:
    for name, tip in repo.branches():
        report.refs += 1
        if kinds.get(tip) != "commit":
            report.problems.append(Problem("ref", name, f"points at {tip.hex()}, {_kind(kinds, tip)}"))
    try:
        head = repo.head()
    except MnemError as exc:
        report.problems.append(Problem("head", "HEAD", str(exc)))
        return
    if head.commit is not None and kinds.get(head.commit) != "commit":
        report.problems.append(Problem("head", "HEAD", f"detached at {head.commit.hex()}, {_kind(kinds, head.commit)}"))


def _kind(kinds: dict[bytes, str], raw: bytes) -> str:
    kind = kinds.get(raw)
    return "missing" if kind is None else f"a {kind}"
