"""The ``mnem`` argument parser: argparse, adapted to what node ids, a worker and a one-shot start-up need."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Collection, Sequence
from typing import Any, NoReturn

from ..errors import UsageError

__all__ = ["HelpShown", "Parser", "help_width", "resembling"]


class HelpShown(Exception):  # noqa: N818  (not an error: the answer to ``--help``)
    """``-h``/``--help`` was given: the help text, for the invocation to print on its own stdout.

    argparse would print it on the process's stdout and exit, which in a
    worker (``mnem serve``) is the protocol's pipe and the worker's end.
    """

    def __init__(self, text: str) -> None:
        super().__init__("help")
        self.text = text


def help_width() -> int:
    """The width argparse gives help text: ``shutil.get_terminal_size``'s columns, less 2.

    ``$COLUMNS`` when set, else the terminal on stdout, else 80.
    """
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


def resembling(word: str, names: Collection[str]) -> list[str]:
    """The ``names`` closest to a mistyped ``word`` (pip's and git's "did you mean"): the best matches, ties all.

    ``difflib``'s ratio, at least 0.6 as pip asks; only the best score is
    kept, so ``comit`` names ``commit`` alone and a far-off word nothing.
    ``difflib`` is imported here, on a mistake only.
    """
    import difflib

    scored = [(difflib.SequenceMatcher(None, word, name).ratio(), name) for name in names]
    best = max((score for score, _ in scored), default=0.0)
    return sorted(name for score, name in scored if score >= 0.6 and score == best)


class _Verbs(argparse._SubParsersAction):  # type: ignore[type-arg]  # (generic only in typeshed)
    """The verbs' action: an argument its verb's parser does not know is refused there, with that verb's usage.

    argparse hands a verb's unknown arguments back to the top-level parser,
    whose error would show the top-level usage (``mnem show --nodes``
    would print ``usage: mnem [-h] ... COMMAND``).
    """

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        super().__call__(parser, namespace, values, option_string)
        extras = vars(namespace).pop(argparse._UNRECOGNIZED_ARGS_ATTR, None)
        verb = self.choices[values[0]]
        if extras and isinstance(verb, Parser):
            verb.error(verb.unrecognized(extras))


class Parser(argparse.ArgumentParser):
    """An argparse parser that raises ``UsageError`` instead of exiting, and names what a typo resembles."""

    #: Verbs left out of the list an unknown verb is answered with: plumbing, which programs run, not people.
    #: A typo of one is still named by "did you mean".
    hidden: frozenset[str] = frozenset()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", _Verbs)

    # Python 3.11's argparse removes *every* "--" it sees in a value list, so
    # an option value (``--node=--``) or a positional value (``add -- x --``)
    # that is exactly "--" is lost.  Only the first "--", the separator, may
    # go, as Python 3.12 does.  Node ids and contents are arbitrary strings.
    _separator_used = False
    _KEEP = "\0--"

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """argparse's, with the first ``--`` of each parse the only separator."""
        self._separator_used = False
        return super().parse_known_args(args, namespace)

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        """argparse's, naming the option an unrecognized one resembles."""
        found, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(self.unrecognized(extras))
        return found

    def unrecognized(self, extras: Sequence[str]) -> str:
        """The message for arguments nothing took (argparse's), with the option the first unknown one resembles."""
        message = f"unrecognized arguments: {' '.join(extras)}"
        option = next((extra.split("=", 1)[0] for extra in extras if extra.startswith("--")), None)
        close = resembling(option, [name for name in self._option_string_actions if name.startswith("--")]) \
            if option else []
        return f"{message}; did you mean {' or '.join(close)}?" if close else message

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """An unknown verb: the verb it resembles, else the verbs but the plumbing (argparse lists every one)."""
        if isinstance(action, _Verbs) and action.choices is not None and value not in action.choices:
            close = resembling(value, list(action.choices))
            if close:
                raise argparse.ArgumentError(action, f"invalid choice: {value!r}; did you mean "
                                                     f"{' or '.join(map(repr, close))}?")
            shown = ", ".join(repr(name) for name in action.choices if name not in self.hidden)
            raise argparse.ArgumentError(action, f"invalid choice: {value!r} (choose from {shown}; "
                                                 f"`{self.prog} --help` describes each)")
        super()._check_value(action, value)

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        if "--" not in arg_strings:
            return super()._get_values(action, arg_strings)
        if action.option_strings:
            protected = [self._KEEP if a == "--" else a for a in arg_strings]
        else:
            first = arg_strings.index("--") if not self._separator_used else -1
            self._separator_used = True
            protected = [a if i == first or a != "--" else self._KEEP for i, a in enumerate(arg_strings)]
        value = super()._get_values(action, protected)
        if isinstance(value, list):
            return ["--" if v == self._KEEP else v for v in value]
        return "--" if value == self._KEEP else value

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every argument it adds, only to check its metavar, and each
        # one imports shutil (with bz2, lzma and zlib) to read the terminal's width: a tenth of a
        # one-shot read's start-up.  The width is the same, read without shutil.
        return argparse.HelpFormatter(prog=self.prog, width=help_width())  # mnem sets no formatter_class

    def print_help(self, file: Any = None) -> NoReturn:
        """Raise ``HelpShown`` with the help text instead of printing it (and then exiting)."""
        raise HelpShown(self.format_help())

    def error(self, message: str) -> NoReturn:
        """Raise the usage error (with the usage line and where help is) instead of exiting."""
        raise UsageError(f"{message}\n\n{self.format_usage().rstrip()}\n\nFor more information, try '--help'.")
