"""The ``mnem`` argument parser: argparse, adapted to what node ids, a worker and a one-shot start-up need."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

from ..errors import UsageError

__all__ = ["HelpShown", "Parser", "help_width"]


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


class Parser(argparse.ArgumentParser):
    """An argparse parser that raises ``UsageError`` instead of exiting."""

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
