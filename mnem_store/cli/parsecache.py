"""argparse's answers for a worker's requests, learnt once per shape of command line.

A worker (``mnem serve``) answers thousands of requests that differ only in
their values: ``-C STORE --json show --node ID``, ``write -m MESSAGE``.
argparse takes about 55 µs to parse each, a tenth of a small request.  This
cache asks argparse once per *shape* of command line and then fills its
answer with each request's values, so argparse stays the one grammar and
the echoed one-shot command still means exactly what the worker did.

A shape is the argv with each token that can only be a value replaced by a
slot: a token that does not start with ``-`` and is not a command name.
Every other token stays in the shape as it is, which can make the cache
miss more often, never answer differently.  A shape is learnt by parsing it
with a unique probe in each slot.  It is kept only when every probe came
back unchanged, as an attribute or a list item: a value that argparse
converts or checks (``type=int``, ``choices``) makes the shape one that
argparse parses every time, as does any error or ``--help``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any, NamedTuple

__all__ = ["ParseCache"]

#: Shapes kept at most; the cache starts over when full.
SHAPES = 512

_PROBE = "\0slot{}\0"


class _Answer(NamedTuple):
    """Where argparse put each value of one shape, and everything else it answered."""

    fixed: dict[str, Any]
    slots: tuple[tuple[str, int], ...]
    lists: tuple[tuple[str, tuple[tuple[int | None, str], ...]], ...]

    def fill(self, argv: list[str]) -> argparse.Namespace:
        """The namespace argparse gives ``argv``, a command line of this shape."""
        namespace = argparse.Namespace(**self.fixed)
        for name, index in self.slots:
            setattr(namespace, name, argv[index])
        for name, items in self.lists:  # a new list each time: a command may change it
            setattr(namespace, name, [literal if index is None else argv[index] for index, literal in items])
        return namespace


class ParseCache:
    """A parser's ``parse_args``, learnt once per shape (see the module's docstring)."""

    def __init__(self, parser: argparse.ArgumentParser, keywords: Iterable[str]) -> None:
        """Cache ``parser``'s answers; ``keywords`` are the tokens never taken as values (command names)."""
        self.parser = parser
        self._keywords = frozenset(keywords)
        self._answers: dict[tuple[str | None, ...], _Answer | None] = {}

    def parse_args(self, argv: list[str]) -> argparse.Namespace:
        """What ``parser.parse_args(argv)`` returns (or raises)."""
        shape = tuple(None if self._is_value(token) else token for token in argv)
        try:
            answer = self._answers[shape]
        except KeyError:
            answer = self._learn(shape)
            if len(self._answers) >= SHAPES:
                self._answers.clear()
            self._answers[shape] = answer
        return self.parser.parse_args(argv) if answer is None else answer.fill(argv)

    def _is_value(self, token: str) -> bool:
        return not token.startswith("-") and token not in self._keywords

    def _learn(self, shape: tuple[str | None, ...]) -> _Answer | None:
        """The answer for ``shape``, or None when argparse must parse each command line of it."""
        if any(token is not None and "\0" in token for token in shape):
            return None  # a literal that could pass for a probe
        probes = {_PROBE.format(index): index for index, token in enumerate(shape) if token is None}
        argv = [_PROBE.format(index) if token is None else token for index, token in enumerate(shape)]
        try:
            namespace = self.parser.parse_args(argv)
        except Exception:  # an error or HelpShown: argparse answers these itself, each time
            return None
        fixed: dict[str, Any] = {}
        slots: list[tuple[str, int]] = []
        lists: list[tuple[str, tuple[tuple[int | None, str], ...]]] = []
        for name, value in vars(namespace).items():
            if isinstance(value, str) and value in probes:
                slots.append((name, probes[value]))
            elif isinstance(value, list) and all(isinstance(item, str) for item in value):
                lists.append((name, tuple((probes.get(item), item) for item in value)))
            elif isinstance(value, (str, int, float, bool, type(None))):
                fixed[name] = value
            else:
                return None  # a value of a kind this cannot copy
        used = [index for _, index in slots] + [i for _, items in lists for i, _ in items if i is not None]
        if sorted(used) != sorted(probes.values()) or any("\0" in str(v) for v in fixed.values()):
            return None  # a probe argparse converted, checked away or copied: it must see every value
        if any("\0" in literal for _, items in lists for i, literal in items if i is None):
            return None
        return _Answer(fixed, tuple(slots), tuple(lists))
