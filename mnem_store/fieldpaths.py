"""The texts at an index field's JSON path (``"text"``, ``"steps[*].summary"``, ``"{a,b.c}"``), as LangGraph reads them.

An embedding index names the parts of a value it embeds by such paths, and
``mnem search --mode hybrid`` ranks the words of the same parts.  The paths
are read exactly as ``langgraph.store.base.embed`` reads them (the engine
does not import LangGraph): dotted keys; ``[N]`` (negative from the end) and
``[*]`` over arrays; ``*`` over an object's values or an array's items;
``{a,b.c}`` for several keys at once.  What a path reaches is text: a
string as it is, a number or boolean as Python writes it, an object or array
as JSON with sorted keys; a null or a path that leads nowhere gives nothing.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["texts_at", "tokens"]


def tokens(path: str) -> list[str]:
    """A path's steps: keys, ``[...]`` and ``{...}`` groups (nested brackets kept whole)."""
    found: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(path):
        char = path[i]
        if char in "[{":
            if current:
                found.append("".join(current))
                current = []
            close = "]" if char == "[" else "}"
            depth, group = 1, [char]
            i += 1
            while i < len(path) and depth > 0:
                if path[i] == char:
                    depth += 1
                elif path[i] == close:
                    depth -= 1
                group.append(path[i])
                i += 1
            found.append("".join(group))
            continue
        if char == ".":
            if current:
                found.append("".join(current))
                current = []
        else:
            current.append(char)
        i += 1
    if current:
        found.append("".join(current))
    return found


def texts_at(value: Any, steps: list[str]) -> list[str]:
    """The texts ``value`` holds at the path of ``steps`` (no steps: the whole value as JSON with sorted keys)."""
    if not steps:
        return [_json(value)]
    return _at(value, steps, 0)


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _at(value: Any, steps: list[str], pos: int) -> list[str]:
    if pos >= len(steps):
        if isinstance(value, (str, int, float, bool)):
            return [str(value)]
        return [_json(value)] if isinstance(value, (list, dict)) else []
    step = steps[pos]
    found: list[str] = []
    if step.startswith("[") and step.endswith("]"):
        if not isinstance(value, list):
            return []
        index = step[1:-1]
        if index == "*":
            for item in value:
                found += _at(item, steps, pos + 1)
        else:
            try:
                at = int(index)
            except ValueError:
                return []
            at = len(value) + at if at < 0 else at
            if 0 <= at < len(value):
                found += _at(value[at], steps, pos + 1)
    elif step.startswith("{") and step.endswith("}"):
        if not isinstance(value, dict):
            return []
        for name in (name.strip() for name in step[1:-1].split(",")):
            keys = tokens(name)
            inner: Any = value if keys else None
            for key in keys:
                inner = inner[key] if isinstance(inner, dict) and key in inner else None
                if inner is None:
                    break
            if isinstance(inner, (str, int, float, bool)):
                found.append(str(inner))
            elif isinstance(inner, (list, dict)):
                found.append(_json(inner))
    elif step == "*":
        for inner in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
            found += _at(inner, steps, pos + 1)
    elif isinstance(value, dict) and step in value:
        found += _at(value[step], steps, pos + 1)
    return found
