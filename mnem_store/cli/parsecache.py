"""argparse's answers for a worker's requests, learnt once per shape of command line.

A worker (``mnem serve``) answers thousands of requests that differ only in
their values: ``-C STORE --json show --node ID``, ``write -m MESSAGE``.
argparse takes about 55 µs to parse each, a tenth of a small request.  This
cache asks argparse once per *shape* of command line and then fills its
answer with each request's values, so argparse stays the one grammar and
the echoed one-shot command still means exactly what the worker did.

A shape is the argv with each token that can only be a value replaced by a
slot: a token that does not start with ``-`` and is not a command name,
and the value of ``--option=value`` (how the bridge writes every option),
spaces included.  Every other token stays in the shape as it is, which
can make the cache miss more often, never answer differently.  A shape is learnt by parsing it
with a unique probe in each slot.  It is kept only when every probe came
back unchanged, as an attribute or a list item: a value that argparse
converts or checks (``type=int``, ``choices``) makes the shape one that
argparse parses every time, as does any error or ``--help``.

argparse reads ``--option=a b`` as a positional only when no option
matches ``--option`` (exactly or as a unique prefix), and a shape whose
probe in that place did not come back as the option's value is never
learnt, so a value with spaces (every commit message a saver writes) is
answered from the cache like any other: argparse took ~0.2 ms per such
``mnem write`` (issue #35).

A value argparse converts (``--limit=10``, ``type=paging(...)``) fails its
probe, so such a shape is learnt again with each ``--option=digits`` value
kept as a literal: argparse converts that number once, and the next request
with the same numbers is answered from the cache.  A search or a namespace
listing carries its limit and offset so; argparse took ~0.12 ms of each
(issue #46).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any, NamedTuple

__all__ = ["ParseCache"]

#: Shapes kept at most; the cache starts over when full.
SHAPES = 512

_PROBE = "\0slot{}\0"


#: One token of a shape: itself (a literal), a whole value (None), or an option and ``=`` before a value.
Token = str | None | tuple[str]

#: What a shape is known by when its numbers must be learnt as literals (the module's docstring).
_BY_NUMBER = "by number"


class _Answer(NamedTuple):
    """Where argparse put each value of one shape (argv index, characters before it), and all else it answered."""

    fixed: dict[str, Any]
    slots: tuple[tuple[str, int, int], ...]
    lists: tuple[tuple[str, tuple[tuple[int | None, int, str], ...]], ...]

    def fill(self, argv: list[str]) -> argparse.Namespace:
        """The namespace argparse gives ``argv``, a command line of this shape."""
        namespace = argparse.Namespace(**self.fixed)
        for name, index, cut in self.slots:
            setattr(namespace, name, argv[index][cut:])
        for name, items in self.lists:  # a new list each time: a command may change it
            setattr(namespace, name, [literal if i is None else argv[i][cut:] for i, cut, literal in items])
        return namespace


class ParseCache:
    """A parser's ``parse_args``, learnt once per shape (see the module's docstring)."""

    def __init__(self, parser: argparse.ArgumentParser, keywords: Iterable[str]) -> None:
        """Cache ``parser``'s answers; ``keywords`` are the tokens never taken as values (command names)."""
        self.parser = parser
        self._keywords = frozenset(keywords)
        self._answers: dict[tuple[Token, ...], _Answer | str | None] = {}

    def parse_args(self, argv: list[str]) -> argparse.Namespace:
        """What ``parser.parse_args(argv)`` returns (or raises)."""
        shape, numbered = self._shapes(argv)
        answer = self._find(shape, numbered)
        if answer is _BY_NUMBER:
            answer = self._find(numbered, numbered)
        return answer.fill(argv) if isinstance(answer, _Answer) else self.parser.parse_args(argv)

    def _find(self, shape: tuple[Token, ...], numbered: tuple[Token, ...]) -> _Answer | str | None:
        """What is known of ``shape``: its answer, ``_BY_NUMBER`` (learn its numbers as literals), or None.

        ``numbered`` is the same command line's shape with its ``--option=digits`` kept as literals.
        """
        try:
            return self._answers[shape]
        except KeyError:
            pass
        answer: _Answer | str | None = self._learn(shape)
        if answer is None and numbered != shape:
            answer = _BY_NUMBER  # a converted value failed its probe: the numbers join the shape
        if len(self._answers) >= SHAPES:
            self._answers.clear()
        self._answers[shape] = answer
        return answer

    def _shapes(self, argv: list[str]) -> tuple[tuple[Token, ...], tuple[Token, ...]]:
        """``argv``'s shape, and the same with each ``--option=digits`` kept as a literal, in one pass over it.

        Both are found together: a search's command line needs the second,
        and walking its tokens twice took ~2 us of each worker request (issue #46).
        """
        shape: list[Token] = []
        numbered: list[Token] = []
        for token in argv:
            if not token.startswith("-"):
                slot: Token = token if token in self._keywords else None
                shape.append(slot)
                numbered.append(slot)
                continue
            option, equals, value = token.partition("=")
            if not equals or not option.startswith("--") or "\0" in value:
                shape.append(token)  # argparse reads the value after "=" as it is; a NUL could pass for a probe
                numbered.append(token)
                continue
            shape.append((option + "=",))
            numbered.append(token if value.isascii() and value.isdigit() else (option + "=",))
        return tuple(shape), tuple(numbered)

    def _learn(self, shape: tuple[Token, ...]) -> _Answer | None:
        """The answer for ``shape``, or None when argparse must parse each command line of it."""
        if any(isinstance(token, str) and "\0" in token for token in shape):
            return None  # a literal that could pass for a probe
        cuts = {index: 0 if token is None else len(token[0]) for index, token in enumerate(shape)
                if not isinstance(token, str)}
        probes = {_PROBE.format(index): index for index in cuts}
        argv = [token if isinstance(token, str) else (token[0] if token else "") + _PROBE.format(index)
                for index, token in enumerate(shape)]
        try:
            namespace = self.parser.parse_args(argv)
        except Exception:  # an error or HelpShown: argparse answers these itself, each time
            return None
        fixed: dict[str, Any] = {}
        slots: list[tuple[str, int, int]] = []
        lists: list[tuple[str, tuple[tuple[int | None, int, str], ...]]] = []
        for name, value in vars(namespace).items():
            if isinstance(value, str) and value in probes:
                slots.append((name, probes[value], cuts[probes[value]]))
            elif isinstance(value, list) and all(isinstance(item, str) for item in value):
                items = ((probes.get(item), cuts.get(probes.get(item, -1), 0), item) for item in value)
                lists.append((name, tuple(items)))
            elif isinstance(value, (str, int, float, bool, type(None))):
                fixed[name] = value
            else:
                return None  # a value of a kind this cannot copy
        used = [index for _, index, _ in slots] + [i for _, items in lists for i, _, _ in items if i is not None]
        if sorted(used) != sorted(probes.values()) or any("\0" in str(v) for v in fixed.values()):
            return None  # a probe argparse converted, checked away or copied: it must see every value
        if any("\0" in literal for _, items in lists for i, _, literal in items if i is None):
            return None
        return _Answer(fixed, tuple(slots), tuple(lists))
