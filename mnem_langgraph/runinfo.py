"""Provenance from the LangGraph run that is writing, for puts that carry no ``_meta``.

The point of Mnemosyne is that ``why`` names where a belief came from.
Libraries that write memories for the agent (langmem's memory tools and
its ``MemoryStoreManager``) never send ``_meta``, so without this their
writes would have empty provenance.  Inside a graph run, LangGraph knows:
``get_config()`` holds the thread, the node and its superstep, the
checkpoint the step started from, and the callback run of the node (the id
LangSmith shows).  A put made by a tool also has the tool call's id, which
LangChain keeps only as an argument of the ``BaseTool.run`` / ``arun`` that
is running the tool, so it is read from that frame of the caller's stack.

The fields land in the node's provenance (ADR-0016's five fields), so
``why``, ``mnem blame`` and the MCP ``why`` tool all show them:

* ``source``: ``langgraph thread <thread_id>`` (the conversation);
* ``step``: ``<node>:<superstep>``, e.g. ``tools:2``;
* ``tool_call``: the tool call id, when a tool wrote;
* ``note``: ``run <id>; checkpoint <id>``, what is known of the two.

A put's own ``_meta`` wins, whole: the caller said what to record.
ADR-0016 says an absent ``_meta`` is empty provenance; inside a run it is
now this, outside one (a script, a test) it is still empty.
"""

from __future__ import annotations

import asyncio
import sys
from types import FrameType
from typing import Any

__all__ = ["FRAMES", "run_provenance", "thread_source"]

#: How far up the stack a tool call's id is looked for.
FRAMES = 64


def thread_source(thread_id: object) -> str:
    """The ``source`` a run's puts record for its thread: what ``MnemosyneStore.revert(thread=...)`` matches."""
    return f"langgraph thread {thread_id}"


def run_provenance() -> dict[str, str]:
    """Provenance for a write made now, from the LangGraph run around it (empty outside a run).

    Call it on the thread that made the put, before handing work to another
    thread: the tool call id is read from this thread's stack.

    Returns:
        ``{"source" | "step" | "tool_call" | "note": text}``, the fields known.
    """
    from langgraph.config import get_config

    try:
        config = get_config()
    except RuntimeError:  # not inside a runnable: a script's own put
        return {}
    configurable: dict[str, Any] = config.get("configurable") or {}
    metadata: dict[str, Any] = config.get("metadata") or {}
    found: dict[str, str] = {}
    thread = configurable.get("thread_id") or metadata.get("thread_id")
    if thread is not None:
        found["source"] = thread_source(thread)
    node, step = metadata.get("langgraph_node"), metadata.get("langgraph_step")
    if node is not None:
        found["step"] = f"{node}:{step}" if step is not None else str(node)
    run = getattr(config.get("callbacks"), "parent_run_id", None) or config.get("run_id")
    tool_call = _tool_call_id(run) if run is not None else None
    if tool_call is not None:
        found["tool_call"] = tool_call
    notes = []
    if run is not None:
        notes.append(f"run {run}")
    checkpoint = configurable.get("checkpoint_id") or (configurable.get("checkpoint_map") or {}).get("")
    if checkpoint is not None:
        notes.append(f"checkpoint {checkpoint}")
    if notes:
        found["note"] = "; ".join(notes)
    return found


def _tool_call_id(run: object) -> str | None:
    """The id of the tool call that LangChain's ``BaseTool.run`` / ``arun`` is running as callback run ``run``.

    A sync tool runs on this thread, so the runner is up this thread's
    stack.  An async tool's body runs in a task of its own, whose stack
    does not reach the ``arun`` awaiting it, so the running loop's tasks
    are searched for the ``arun`` whose tool run is ``run``.
    """
    from langchain_core.tools import BaseTool

    runners = {BaseTool.run.__code__, BaseTool.arun.__code__}
    frames: list[FrameType] = []
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and len(frames) < FRAMES:
        frames.append(frame)
        frame = frame.f_back
    frames += _awaiting_frames()
    for frame in frames:
        if frame.f_code in runners:
            manager = frame.f_locals.get("run_manager")
            value = frame.f_locals.get("tool_call_id")
            if getattr(manager, "run_id", None) == run and isinstance(value, str):
                return value
    return None


def _awaiting_frames() -> list[FrameType]:
    """The frames of every coroutine the running loop's tasks are suspended in (none outside a loop)."""
    try:
        tasks = asyncio.all_tasks()
    except RuntimeError:  # no running loop on this thread
        return []
    frames = []
    for task in tasks:
        awaited: Any = task.get_coro()
        for _ in range(FRAMES):
            frame = getattr(awaited, "cr_frame", None)
            if frame is None:
                break
            frames.append(frame)
            awaited = awaited.cr_await
    return frames
