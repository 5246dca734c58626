"""Revert by provenance: undo every fact one source, step, observation, author or commit gave its current value.

A *version* of a fact is what one commit set it to: an object, or its
removal.  Which commit wrote a version is blame's answer
(``mnem_store.blame.writer``): through merges, the commit that made the
value, not the merge that carried it.  A request (``Match``) names versions
by the node's provenance (``source``, ``agent_step``, ``observation``) and by
the commit that wrote it (its ``author``, or the commit itself); every field
given must hold.  All but the commit are matched by the rule ``mnem redact``
matches by too (``provenance.ProvenanceMatch``).  A removal has no
provenance, so only ``author`` and ``commit`` can name one.

Each fact is followed down its own line of versions, newest first: from the
current one, to the version before the commit that wrote it (that commit's
first parent), and so on, which costs the fact's changes, not the history's
length.  Then:

* the current version matches: the fact goes back to the newest version
  below the run of matching ones at the top of its line (a source that wrote
  it three times in a row is undone whole), or is removed where the line
  ends (nothing before);
* a later version by someone else sits above a matching one: the fact is
  *skipped* and reported, never overwritten, unless it already holds what
  the revert would restore (a revert done before, or a correction to the
  same value), which leaves nothing to do.

Which facts to follow is found from the change rows of the commits reachable
from the tip (only those of a matching commit or author when one is given),
one read per commit.  LangGraph's checkpoints (``mnem_ids.checkpoints``) are
the saver's own records, not beliefs, and are never reverted.

Runs inside the caller's transaction (``porcelain.revert`` owns it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from mnem_ids.checkpoints import CHECKPOINT_PREFIX

from .blame import writer
from .errors import CommandError, rust_debug
from .graph import Graph
from .limits import in_message
from .objects import Commit, MemoryNode
from .provenance import ProvenanceMatch
from .repo import Repo

__all__ = ["Match", "Plan", "Skipped", "Step", "plan"]


class Match(NamedTuple):
    """Which versions a revert undoes: every field given must hold (None: any)."""

    source: str | None = None
    step: str | None = None
    observation: str | None = None
    author: str | None = None
    commit: bytes | None = None

    def given(self) -> dict[str, str]:
        """The fields given, by option name (``commit`` in hex), in the options' order."""
        return {name: value.hex() if isinstance(value, bytes) else value
                for name, value in self._asdict().items() if value is not None}

    def provenance(self) -> ProvenanceMatch:
        """The fields besides the commit: matched as ``mnem redact`` matches them."""
        return ProvenanceMatch(self.source, self.step, self.observation, self.author)

    def holds(self, raw: bytes, commit: Commit, node: MemoryNode | None) -> bool:
        """Whether the version commit ``raw`` wrote (``node``, None for a removal) is one this match names."""
        if self.commit is not None and raw != self.commit:
            return False
        rule = self.provenance()
        return rule.by((commit.author,)) and rule.carried_by(node)


class Step(NamedTuple):
    """A fact the revert changes: its value now, the value it gets back (None: removed), the versions undone."""

    id: str
    current: bytes | None
    restored: bytes | None
    undone: list[bytes]  # the commits that wrote the matching versions, newest first


class Skipped(NamedTuple):
    """A fact a matching version set and a later one changed: left as it is, and reported."""

    id: str
    current: bytes | None
    by: bytes  # the commit that wrote its value now
    undone: list[bytes]  # the matching versions it would undo, newest first


class Plan(NamedTuple):
    """What reverting ``match`` at ``tip`` does, in node-id order."""

    tip: bytes
    steps: list[Step]
    skipped: list[Skipped]


class _Version(NamedTuple):
    commit: bytes
    value: bytes | None


def plan(repo: Repo, tip: bytes, match: Match) -> Plan:
    """What reverting the versions ``match`` names does to the memory at ``tip``.

    Raises:
        CommandError: ``not_found`` when no version in ``tip``'s history matches (the message says what was
            searched); ``commit`` names a commit outside ``tip``'s history.
    """
    graph = Graph(repo)
    steps: list[Step] = []
    skipped: list[Skipped] = []
    found = False
    for fact in sorted(_candidates(repo, graph, tip, match)):
        line = _line(repo, graph, fact, tip)
        current = next(line, None)
        if current is None:  # set and gone on a merged line: never on this one
            continue
        above: list[_Version] = []  # the versions above the first matching one, newest first
        version: _Version | None = current
        while version is not None and not _holds(repo, graph, match, version):
            above.append(version)
            version = next(line, None)
        if version is None:  # a candidate whose matching version never reached this line (a merge kept another)
            continue
        found = True
        undone = [version.commit]
        before = next(line, None)
        while before is not None and _holds(repo, graph, match, before):
            undone.append(before.commit)
            before = next(line, None)
        restored = before.value if before is not None else None
        if restored == current.value:  # already what the revert would give back
            continue
        if above:
            skipped.append(Skipped(fact, current.value, current.commit, undone))
        else:
            steps.append(Step(fact, current.value, restored, undone))
    if not found:
        searched = ", ".join(f"--{name} {rust_debug(in_message(value))}" for name, value in match.given().items())
        raise CommandError(f"no fact in the history of {tip.hex()[:12]} has a version matching {searched}; "
                           "`mnem blame NODE` and `mnem log` show each value's provenance, author and commit",
                           "not_found")
    return Plan(tip, steps, skipped)


def _candidates(repo: Repo, graph: Graph, tip: bytes, match: Match) -> set[str]:
    """The facts a matching version may have set: a superset, which ``plan`` narrows fact by fact.

    Every commit reachable from ``tip`` (only ``match.commit`` when given) whose author matches, and of
    those only the facts it set to a matching node when provenance is asked for.
    """
    if match.commit is not None:
        if not graph.is_ancestor(match.commit, tip):
            raise CommandError(f"commit {match.commit.hex()} is not in the history of {tip.hex()[:12]}, so it "
                               "set no value there; give a commit `mnem log` lists", "not_found")
        commits: frozenset[bytes] = frozenset((match.commit,))
    else:
        commits = graph.ancestors(tip)
    facts: set[str] = set()
    rule = match.provenance()
    for raw in commits:
        if not rule.by((graph.commit(raw).author,)):
            continue
        changed = repo.change_set(raw)
        if rule.of_node():
            written = {fact: value for fact, (_, value) in changed.items() if value is not None}
            repo.objects.prefetch(written.values())
            changed = {fact: entry for fact, entry in changed.items()
                       if fact in written and match.holds(raw, graph.commit(raw), repo.node(written[fact]))}
        facts.update(fact for fact in changed if not fact.startswith(CHECKPOINT_PREFIX))
    return facts


def _line(repo: Repo, graph: Graph, fact: str, start: bytes) -> Iterator[_Version]:
    """``fact``'s versions from commit ``start`` down, newest first: each writer's first parent holds the next.

    The first is the value at ``start`` (None: absent there); the line ends where no commit below held the fact.
    """
    at: bytes | None = start
    while at is not None:
        change = repo.change_at(at, fact)
        if change is None:
            return
        raw = writer(repo, graph, fact, change)
        yield _Version(raw, change[1])
        parents = graph.parents(raw)
        at = parents[0] if parents else None


def _holds(repo: Repo, graph: Graph, match: Match, version: _Version) -> bool:
    """Whether ``match`` names ``version`` (its node read only when provenance is asked for)."""
    node = repo.node(version.value) if version.value is not None and match.provenance().of_node() else None
    return match.holds(version.commit, graph.commit(version.commit), node)
