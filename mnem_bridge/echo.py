"""Echo: every invocation as one copy-pasteable POSIX shell line.

When the bridge surprises you, the line it logged is the whole story: paste
it into a shell and the binary does exactly what the bridge asked.  Every
word is ``shlex``-quoted (quotes, ``$(...)``, backticks, newlines and
non-ASCII stay inert), and a stdin payload is shown as a quoted heredoc
(``<<'DELIM'``, so the shell expands nothing in it) whose delimiter does not
occur anywhere in the payload.  A heredoc body always ends with a newline;
the bridge only sends payloads that do, so the line is byte-exact.

Lines go to the ``mnem_bridge.echo`` logger at DEBUG (so enabling DEBUG on
``mnem_bridge`` shows them) and, when ``MNEM_ECHO`` is set to anything but
empty or ``0``, to standard error as well.
"""

from __future__ import annotations

import logging
import os
import shlex
import sys
from collections.abc import Sequence

__all__ = ["ShellLine", "echo", "heredoc_delimiter", "shell_line"]

logger = logging.getLogger(__name__)

DELIMITER = "MNEM_EOF"


def heredoc_delimiter(payload: str) -> str:
    """A heredoc delimiter that does not occur in ``payload``.

    Args:
        payload: The text the heredoc will carry.

    Returns:
        ``MNEM_EOF``, or ``MNEM_EOF_<n>`` with the smallest ``n`` not in the payload.
    """
    delimiter, n = DELIMITER, 0
    while delimiter in payload:
        n += 1
        delimiter = f"{DELIMITER}_{n}"
    return delimiter


def shell_line(argv: Sequence[str], payload: str | None = None) -> str:
    """Render an invocation as a shell command line.

    Args:
        argv: The program and its arguments.
        payload: Text fed on standard input, or ``None``.

    Returns:
        The line (with a heredoc, when there is a payload).
    """
    line = shlex.join(argv)
    if payload is None:
        return line
    delimiter = heredoc_delimiter(payload)
    body = payload if payload.endswith("\n") else payload + "\n"
    return f"{line} <<'{delimiter}'\n{body}{delimiter}"


class ShellLine:
    """An invocation's shell line, rendered when first read.

    Every bridge call has one (``last_command``, echo, the ``command`` of
    an error), but most calls succeed with echo off and nobody reads it:
    quoting every word then costs more than the rest of the call's Python.
    ``str()`` renders it (once).
    """

    __slots__ = ("_argv", "_payload", "_text")

    def __init__(self, argv: Sequence[str], payload: str | None = None) -> None:
        self._argv = argv
        self._payload = payload
        self._text: str | None = None

    def __str__(self) -> str:
        if self._text is None:
            self._text = shell_line(self._argv, self._payload)
        return self._text


def echo(line: str | ShellLine) -> None:
    """Log ``line`` at DEBUG, and print it to standard error when ``MNEM_ECHO`` asks.

    Args:
        line: A line from ``shell_line``, or one to render only if it is shown.
    """
    logger.debug("%s", line)
    if os.environ.get("MNEM_ECHO", "") not in ("", "0"):
        sys.stderr.write(f"{line}\n")
        sys.stderr.flush()
