"""A worker's parse cache answers every command line exactly as argparse does, and a worker answers --help."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_store.cli.dispatch import COMMANDS, build_parser
from mnem_store.cli.parsecache import ParseCache
from mnem_store.cli.parser import HelpShown
from mnem_store.errors import UsageError

PARSER = build_parser(exclude=frozenset({"serve", "ui"}))
COMMAND_PARSERS: dict[str, argparse.ArgumentParser] = next(
    action.choices for action in PARSER._actions if isinstance(action, argparse._SubParsersAction)
)
OPTIONS = sorted({option for sub in COMMAND_PARSERS.values() for option in sub._option_string_actions})

# Values as agents and hostile callers send them: plain, empty, dash-led, separators, command names, probes.
values = st.sampled_from(["plan", "", "a b", "-x", "--", "-5", "1e3", "show", "log", "3", "0", "--node=x",
                          "\0slot0\0", "é", "ours", "theirs", "added", "--json"]) | st.text(max_size=6)
VALUE = object()


@st.composite
def shapes(draw: st.DrawFn) -> list[object]:
    """A command line with VALUE where a value goes: mostly well formed for its command, sometimes not."""
    command = draw(st.sampled_from(sorted(COMMAND_PARSERS)))
    options = [action for action in COMMAND_PARSERS[command]._actions
               if action.option_strings and action.dest != "help"]
    items: list[object] = [*draw(st.lists(st.sampled_from(["--json", "-C", VALUE, "-V"]), max_size=3)), command]
    for _ in range(draw(st.integers(0, 5))):
        choice = draw(st.integers(0, 4))
        if choice <= 2 and options:  # an option of this command, with its value when it takes one
            action = draw(st.sampled_from(options))
            option = draw(st.sampled_from(action.option_strings))
            if action.nargs != 0 and draw(st.booleans()):  # --option=value, as the bridge writes options
                items.append((option,))
            else:
                items.append(option)
                if action.nargs != 0:
                    items.append(VALUE)
        elif choice == 3:
            items.append(VALUE)
        else:
            items.append(draw(st.sampled_from(OPTIONS)))  # any command's option: often a usage error
    return items


@st.composite
def same_shape_twice(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Two command lines of one shape, with values drawn independently."""
    shape = draw(shapes())

    def line() -> list[str]:
        return [draw(values) if item is VALUE else f"{item[0]}={draw(values)}" if isinstance(item, tuple)
                else str(item) for item in shape]

    return line(), line()


def outcome(parse: Any, argv: list[str]) -> tuple[str, Any]:
    try:
        return "parsed", vars(parse(argv))
    except HelpShown as shown:
        return "help", shown.text
    except UsageError as error:
        return "usage", str(error)


@settings(max_examples=600, deadline=None)
@given(st.lists(same_shape_twice(), min_size=1, max_size=4))
def test_the_cache_answers_as_argparse_for_every_command_line(pairs: list[tuple[list[str], list[str]]]) -> None:
    cache = ParseCache(PARSER, COMMANDS)
    for first, second in pairs:  # the second is answered from what the first taught the cache
        for argv in (first, second, first):
            assert outcome(cache.parse_args, argv) == outcome(PARSER.parse_args, argv), argv


@contextmanager
def argparse_calls() -> Iterator[list[list[str]]]:
    """The argument lists argparse itself parses meanwhile: what the cache did not answer."""
    calls: list[list[str]] = []
    real = PARSER.parse_args

    def counting(argv: list[str]) -> argparse.Namespace:
        calls.append(argv)
        return real(argv)

    PARSER.parse_args = counting  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        del PARSER.parse_args


def test_repeated_shapes_are_answered_without_argparse() -> None:
    cache = ParseCache(PARSER, COMMANDS)
    cache.parse_args(["-C", "/s", "--json", "show", "--node", "a"])
    cache.parse_args(["-C", "/s", "--json", "stamps", "--live", "--node=users:a", "--"])  # the bridge's form
    with argparse_calls() as calls:
        got = cache.parse_args(["-C", "/t", "--json", "show", "--node", "b"])
        stamped = cache.parse_args(["-C", "/t", "--json", "stamps", "--live", "--node=users:b=c", "--"])
        limit = cache.parse_args(["show", "--limit", "5"])  # type=int: argparse converts it, every time
        cache.parse_args(["show", "--limit", "6"])
    assert (got.store, got.node, got.json, got.command) == ("/t", "b", True, "show")
    assert (stamped.node, stamped.live) == (["users:b=c"], True)
    assert limit.limit == 5 and len(calls) == 3  # learning the --limit shape, then each --limit request


def test_an_option_value_with_spaces_is_answered_from_the_cache() -> None:
    """A commit message holds spaces: every ``write`` of a saver or a store would otherwise go through argparse."""
    cache = ParseCache(PARSER, COMMANDS)
    line = ["-C", "/s", "--json", "write", "--message=checkpoint t step 1 (loop)", "--author=an agent",
            "--skip-missing"]
    cache.parse_args(line)
    with argparse_calls() as calls:
        got = cache.parse_args([*line[:4], "--message=checkpoint t step 2 (loop)", *line[5:]])
    assert (got.message, got.author, got.skip_missing) == ("checkpoint t step 2 (loop)", "an agent", True)
    assert calls == []
    for argv in (["ls", "--message=a b"], ["--message=a b", "write"], ["write", "--mess=a b", "-m", "x"]):
        assert outcome(cache.parse_args, argv) == outcome(PARSER.parse_args, argv), argv


def test_a_converted_number_is_answered_from_the_cache_once_learnt() -> None:
    """A search carries ``--limit=N --offset=N`` (``type=paging``): argparse took most of each search's time."""
    cache = ParseCache(PARSER, COMMANDS)
    line = ["-C", "/s", "--json", "search", '--namespace=["users"]', "--limit=10", "--offset=0", "--live", "--"]
    cache.parse_args(line)
    with argparse_calls() as calls:
        got = cache.parse_args([line[0], "/t", *line[2:4], '--namespace=["docs"]', *line[5:]])
        other = cache.parse_args([*line[:5], "--limit=20", *line[6:]])  # new numbers: learnt once
        again = cache.parse_args([*line[:5], "--limit=20", *line[6:]])
    assert (got.store, got.namespace, got.limit, got.offset, got.live) == ("/t", '["docs"]', 10, 0, True)
    assert other.limit == again.limit == 20 and len(calls) == 1
    for argv in ([*line[:5], "--limit=-1", *line[6:]], [*line[:5], f"--limit={2**70}", *line[6:]]):
        assert outcome(cache.parse_args, argv) == outcome(PARSER.parse_args, argv), argv
