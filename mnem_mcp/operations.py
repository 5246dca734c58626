"""What each tool does, as a plain function over an open store, and upstream's ``do_*`` names for them.

Each MCP tool is one function here taking an open ``mnem_bridge.Store``
first: ``tools.MemoryTools`` declares the tool (its name, description,
arguments and result) and runs its function on the call's store
(``Binding.call``), so nothing a tool does is written twice.  The
functions return what the tool answers, the bridge's models
(``answers.answer`` encodes them once), and raise the bridge's typed
errors; a write records ``author`` (default: who ``mnem-mcp`` records when
nobody is authenticated, ``identity.default_author``).

Upstream's ``mnem-mcp`` publishes the same operations, module-level in
``mnem_mcp.server`` (its tests call ``server.do_remember(store, ...)``):
``do_<tool>(store, ...)``, plus ``do_commit_view`` for the commit resource.
They answer JSON values (dicts, lists, ``None``), and a malformed
``when_did`` raises the SDK's ``ToolError``.  ``do_<tool>`` here is the
tool's own function with its value as that JSON (``answers.plain``, what a
client gets as structured content), so the two cannot drift apart;
``mnem_mcp`` and ``mnem_mcp.server`` export them (and ``do_revert``, for the
harness tool this toolkit adds).  Their arguments are
upstream's, in its order, followed by this toolkit's extensions (keyword
arguments a caller written for upstream never passes).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ParamSpec

import mnem_bridge
from mnem_bridge import agents, reserved

from . import identity, resources
from .answers import plain
from .errors import ToolUsageError
from .models import (
    DEFAULT_PAGE,
    WHOLE,
    BranchCreated,
    ContentResolution,
    Found,
    Head,
    Logged,
    Recalled,
    Why,
    Written,
    logged,
)

__all__ = [
    "HISTORY_LIMIT",
    "branch",
    "do_branch",
    "do_commit_view",
    "do_forget",
    "do_history",
    "do_merge",
    "do_recall",
    "do_recall_at",
    "do_remember",
    "do_remember_many",
    "do_revert",
    "do_switch",
    "do_whats_new",
    "do_when_did",
    "do_why",
    "forget",
    "history",
    "merge",
    "recall",
    "recall_at",
    "remember",
    "remember_many",
    "revert",
    "switch",
    "whats_new",
    "when_did",
    "why",
]

P = ParamSpec("P")

#: How many commits ``history`` lists when not told (ADR-0016's default).
HISTORY_LIMIT = 20

#: A merge resolution as a caller gives it: a side (``"ours"``...), new content (a tool's argument), or a node.
Resolution = mnem_bridge.models.MergeSide | ContentResolution | mnem_bridge.MemoryNode


def _author(author: str | None) -> str:
    return identity.default_author() if author is None else author


def remember(store: mnem_bridge.Store, id: str, content: Any, *, source: str | None = None,
             step: str | None = None, observation: str | None = None, summary: str | None = None,
             tool_call: str | None = None, note: str | None = None, event_time: int | str | None = None,
             author: str | None = None) -> Written:
    """``remember`` (and ``revise``): one fact and its provenance as one commit."""
    commit = agents.remember(store, id, content, source=source, step=step, observation=observation,
                             tool_call=tool_call, note=note, summary=summary, author=_author(author),
                             event_time=event_time)
    return {"commit": commit}


def remember_many(store: mnem_bridge.Store, items: Iterable[Mapping[str, Any]], *, summary: str | None = None,
                  author: str | None = None) -> Written:
    """``remember_many``: several facts as one commit, all or nothing."""
    return {"commit": agents.remember_many(store, items, summary=summary, author=_author(author))}


def forget(store: mnem_bridge.Store, id: str, *, summary: str | None = None, author: str | None = None) -> Written:
    """``forget``: take a fact out of current memory as one commit (``invalid_ref`` when it is not there)."""
    return {"commit": agents.forget(store, id, summary=summary, author=_author(author))}


def recall(store: mnem_bridge.Store, id: str | None = None, *, prefix: str | None = None, limit: int | None = None,
           cursor: str | None = None, valid_at: int | str | None = None) -> Recalled:
    """``recall``: one fact (``None`` when nothing is remembered under ``id``), the memory, or a page of it."""
    return _read(store, None, id, prefix, limit, cursor, valid_at)


def recall_at(store: mnem_bridge.Store, commit: str, id: str | None = None, *, prefix: str | None = None,
              limit: int | None = None, cursor: str | None = None, valid_at: int | str | None = None) -> Recalled:
    """``recall_at``: ``recall``'s answers at a past commit."""
    return _read(store, commit, id, prefix, limit, cursor, valid_at)


def _read(store: mnem_bridge.Store, at: str | None, id: str | None, prefix: str | None, limit: int | None,
          cursor: str | None, valid_at: int | str | None) -> Recalled:
    """``recall``'s answer at ``at`` (``None``: current memory): one node, the memory, or a page of it.

    ``prefix``, ``limit`` and ``cursor`` are extensions: ``prefix`` keeps the
    ids that start with it, and a page ``{memory, next_cursor}`` is answered
    only when ``limit`` or ``cursor`` asks for one.  ``valid_at`` (also an
    extension) answers what was true then by event times instead
    (``Store.memory_valid_at``), along the committed history of ``at`` or
    HEAD.  A LangGraph checkpoint's nodes (``mnem_bridge.reserved``) are
    graph state, not facts: they are never answered, not even by their id.
    """
    if valid_at is not None:
        if limit is not None or cursor is not None or (id is not None and prefix is not None):
            raise mnem_bridge.UsageError("recall: valid_at reads one fact (id) or the memory (prefix keeps some "
                                         "ids), not pages: leave out limit and cursor")
        if id is not None:
            return None if reserved.is_reserved(id) else store.node_valid_at(id, valid_at, at=at)
        held = reserved.visible(store.memory_valid_at(valid_at, at=at))
        return held if prefix is None else {node_id: node for node_id, node in held.items()
                                            if node_id.startswith(prefix)}
    if id is not None:
        if prefix is not None or limit is not None or cursor is not None:
            raise mnem_bridge.UsageError("recall: give id for one fact, or prefix / limit / cursor, not both")
        return None if reserved.is_reserved(id) else store.working_node(id, at=at)
    if limit is not None or cursor is not None:
        return reserved.visible_page(store.memory_page(limit=limit or DEFAULT_PAGE, cursor=cursor,
                                                       prefixes=None if prefix is None else [prefix], at=at))
    if prefix is not None:
        page = store.memory_page(limit=WHOLE, prefixes=[prefix], at=at)
        return reserved.visible(page.document["memory"])
    return reserved.visible_whole(store.whole_memory(at=at))


def history(store: mnem_bridge.Store, limit: int = HISTORY_LIMIT, *, since: int | str | None = None,
            until: int | str | None = None) -> list[Logged]:
    """``history``: the latest commits of the current branch, newest first."""
    return [logged(commit, pusher) for commit, pusher in store.log_attributed(limit=limit, since=since, until=until)]


def why(store: mnem_bridge.Store, id: str, at: str | None = None) -> Why:
    """``why``: the commit that set a fact's value, the fact with its provenance, and that commit's author."""
    blame, author, pusher = store.blame_attributed(id, at=at)
    found: Why = {"commit": blame.commit, "node": blame.node, "time": blame.time, "author": author}
    if pusher is not None:
        found["pushed_by"] = pusher.name
    return found


def when_did(store: mnem_bridge.Store, id: str, *, equals: Any = None, absent: bool = False, present: bool = False,
             good: str | None = None, include_root: bool = False) -> Found:
    """``when_did``: the first commit of the line where a fact equals a value, is absent, or is present.

    Raises:
        ToolUsageError: Not exactly one of ``equals`` (``None`` is no condition, as upstream's tool forwards
            it only when given), ``absent`` and ``present``: ``usage`` to a client, and the ``ToolError``
            upstream raises to a direct caller.
    """
    chosen = [name for name, given in (("equals", equals is not None), ("absent", absent), ("present", present))
              if given]
    if len(chosen) != 1:
        said = "none" if not chosen else " and ".join(chosen)
        raise ToolUsageError(f"when_did needs exactly one of equals, absent or present (got {said})")
    condition: dict[str, Any] = {"equals": equals} if equals is not None else {"absent": absent, "present": present}
    commit, blame = store.bisect_explain(id, **condition, good=good, include_root=include_root)
    return {"commit": commit, "blame": blame}


def whats_new(store: mnem_bridge.Store, commit: str) -> dict[str, mnem_bridge.ChangeKind]:
    """``whats_new``: each fact a commit added, modified or removed."""
    return reserved.visible(store.changed_by(commit))


def branch(store: mnem_bridge.Store, name: str, start: str | None = None) -> BranchCreated:
    """``branch``: a new branch at HEAD (or ``start``), without switching to it."""
    store.new_branch(name, start=start)
    return {"branch": name}


def switch(store: mnem_bridge.Store, target: str) -> Head:
    """``switch``: move HEAD to a branch or commit, and say where it points now."""
    store.checkout(target)
    return {"head": store.head()}


def merge(store: mnem_bridge.Store, theirs: str, *, resolutions: Mapping[str, Resolution] | None = None,
          strategy: mnem_bridge.models.MergeStrategy | None = None, summary: str | None = None,
          author: str | None = None) -> mnem_bridge.MergeResult:
    """``merge``: another branch into the current one; conflicts write nothing and are answered.

    A resolution is a side (``"ours"``, ``"theirs"``, ``"base"``, ``"delete"``) or new content; none may name a
    reserved id (a checkpoint's node, whose content the LangGraph saver loads).
    """
    reserved.refuse_reserved(resolutions or {}, "merge")
    settled = {node_id: mnem_bridge.MemoryNode(node_id, choice.content) if isinstance(choice, ContentResolution)
               else choice for node_id, choice in (resolutions or {}).items()}
    return store.merge(theirs, resolutions=settled, strategy=strategy, message=summary, author=_author(author))


def revert(store: mnem_bridge.Store, *, source: str | None = None, step: str | None = None,
           observation: str | None = None, author: str | None = None, commit: str | None = None,
           dry_run: bool = False, by: str | None = None) -> mnem_bridge.Reverted:
    """``revert`` (a harness tool, not upstream's): undo, as one commit by ``by``, what the versions named set.

    ``author`` names whose commits to undo, not who reverts.  Facts changed since by another version are
    answered in ``skipped`` and left as they are; a dry run writes nothing.  LangGraph checkpoints are never
    touched (the engine leaves reserved ids alone).
    """
    return store.revert(source=source, step=step, observation=observation, author=author, commit=commit,
                        by=_author(by), dry_run=dry_run)


def _as_json(operation: Callable[P, Any]) -> Callable[P, Any]:
    """Upstream's ``do_<tool>``: ``operation`` with its value as JSON (``answers.plain``)."""

    @functools.wraps(operation)
    def do(*args: P.args, **kwargs: P.kwargs) -> Any:
        return plain(operation(*args, **kwargs))

    do.__name__ = do.__qualname__ = f"do_{operation.__name__}"
    do.__signature__ = inspect.signature(operation).replace(return_annotation=Any)  # type: ignore[attr-defined]
    return do


do_remember = _as_json(remember)
do_remember_many = _as_json(remember_many)
do_forget = _as_json(forget)
do_recall = _as_json(recall)
do_recall_at = _as_json(recall_at)
do_history = _as_json(history)
do_why = _as_json(why)
do_when_did = _as_json(when_did)
do_whats_new = _as_json(whats_new)
do_branch = _as_json(branch)
do_switch = _as_json(switch)
do_merge = _as_json(merge)
do_revert = _as_json(revert)
#: The ``mnem://commit/{id}`` resource's value: ``{"changed": {id: kind}, "state": {id: node}}``.
do_commit_view = resources.commit
