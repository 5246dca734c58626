"""What every command receives: where to look for the store, output mode, colour."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from ..canonical import I64_MIN, U64_MAX, InexactNumberError, parse_json
from ..errors import CommandError, UsageError
from ..layout import StoreUrl
from ..location import Address, address
from ..repo import Repo
from .render import Painter

if TYPE_CHECKING:  # a write's payload limits: imported by the writes that read one, not by every command
    from ..limits import Limits

__all__ = [
    "MAX_PAGING", "Context", "Outcome", "check_node_id", "check_text", "commit_time", "event_time", "paging",
    "parse_json_arg", "wall_time",
]


class Outcome(NamedTuple):
    """A command's result: the JSON document and upstream's plain text.

    ``text`` may be a function that renders it: a command whose text grows
    with memory (``show``, ``stamps``) then builds it only in text mode, not
    for ``--json``, where nobody reads it.  ``exit_code`` and ``stderr``
    apply to text mode only (a merge that stops on conflicts prints its
    report and then fails, as upstream does).
    """

    data: Any
    text: str | Callable[[], str] = ""
    stderr: str = ""
    exit_code: int = 0

    def rendered(self) -> str:
        """The plain text, rendered now if it was deferred."""
        return self.text if isinstance(self.text, str) else self.text()


class Context:
    """Per-invocation settings resolved from global options and the environment.

    ``opener`` says how to open a store (a path or URL, and whether it names
    the store exactly); a worker passes one that keeps stores open between
    requests.
    """

    __slots__ = ("_repo", "colour", "json", "opener", "stderr", "stdin", "store_option")

    def __init__(
        self,
        json: bool,
        store_option: str | None,
        stdin: BinaryIO | None = None,
        colour: bool = False,
        opener: Callable[[Address, bool], Repo] | None = None,
        stderr: BinaryIO | None = None,
    ) -> None:
        self.json = json
        self.store_option = store_option
        self.stdin = stdin if stdin is not None else sys.stdin.buffer
        self.stderr = stderr if stderr is not None else sys.stderr.buffer
        self.colour = colour
        self.opener = opener
        self._repo: Repo | None = None

    @property
    def start(self) -> tuple[Address, bool]:
        """Where the store is: ``-C`` or ``$MNEM_STORE`` name it exactly (root or URL); else discovery from the cwd."""
        chosen = self.store_option or os.environ.get("MNEM_STORE") or None
        return (address(chosen), True) if chosen else (Path.cwd(), False)

    def base(self, path: str | None) -> Address:
        """Where ``init``/``import`` create a store: a URL as given, or a path resolved against ``-C`` like git.

        Without a path argument, a URL in ``-C`` names the new store.
        """
        if path is not None and isinstance(given := address(path), StoreUrl):
            return given
        if path is None and self.store_option and isinstance(option := address(self.store_option), StoreUrl):
            return option
        where = Path(path if path is not None else ".")
        return where if where.is_absolute() or not self.store_option else Path(self.store_option) / where

    @property
    def paint(self) -> Painter:
        """The painter for text output: colour only when enabled and not in ``--json`` mode."""
        return Painter(self.colour and not self.json)

    def repo(self) -> Repo:
        """The store this invocation acts on, opened on first use."""
        if self._repo is None:
            path, exact = self.start
            if self.opener is not None:
                self._repo = self.opener(path, exact)
            elif exact:
                self._repo = Repo.open(path)
            else:
                assert isinstance(path, Path)  # only folders are discovered
                self._repo = Repo.discover(path)
        return self._repo

    def close(self) -> None:
        """Close the store unless the opener owns it (a worker keeps it for the next request)."""
        if self._repo is not None and self.opener is None:
            self._repo.close()
        self._repo = None


#: How a person ends what they type at a terminal.
END_OF_INPUT = "Ctrl-Z then Enter" if os.name == "nt" else "Ctrl-D on a line of its own"


def read_payload(file: str | None, ctx: Context, waiting: str | None = None, *, limits: Limits | None = None) -> bytes:
    """A command's JSON payload: from ``file``, or stdin when it is None or ``-`` (a read failure is ``store_io``).

    A terminal on stdin would wait for the payload in silence, as if the
    command hung: ``waiting`` (``"mnem write: reading WHAT"``) is then said on
    stderr first, with how to end the input and the ``--file`` way round.
    A pipe, a file or a worker's request is read without a word.  With
    ``limits``, a payload larger than one write may send is refused before it
    is read whole (``limits.read_bounded``).
    """
    def read(stream: BinaryIO, what: str) -> bytes:
        if limits is None:
            return stream.read()
        from ..limits import read_bounded

        return read_bounded(stream, limits, what)

    try:
        if file is not None and file != "-":
            with open(file, "rb") as handle:
                return read(handle, f"the payload in {file}")
        if waiting is not None and ctx.stdin.isatty():
            ctx.stderr.write(f"{waiting} from the terminal; end it with {END_OF_INPUT}, or pass --file FILE\n"
                             .encode())
            ctx.stderr.flush()
        return read(ctx.stdin, "the payload on stdin")
    except OSError as exc:
        raise CommandError(f"reading {file}", "store_io", cause=exc.strerror or str(exc)) from None


def check_text(value: str, what: str) -> str:
    """Reject text that cannot be stored as UTF-8 (e.g. undecodable argv bytes)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{what} is not valid UTF-8") from None
    return value


def parse_json_arg(text: str | bytes, context: str) -> Any:
    """Parse a JSON argument, failing as upstream's anyhow does: ``<context>`` plus the parser's cause.

    An integer beyond 64 bits is valid JSON that no store keeps exactly
    (upstream rounds it): its refusal is passed on as it is, since the
    context (``... is not valid JSON``) would misname the fault.
    """
    try:
        return parse_json(text, "content")
    except InexactNumberError:
        raise
    except UsageError as exc:
        raise CommandError(context, "usage", cause=exc.detail.split(": ", 1)[-1]) from None


def full_id(text: str, refusal: str) -> bytes:
    """A full 32-byte id written as 64 hex digits, or ``usage`` with ``refusal`` (which says what the option takes)."""
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise UsageError(f"{refusal}, got {text!r}")
    return raw


def check_node_id(value: str, what: str = "ID") -> str:
    """A node id must be text a command line can carry: valid UTF-8 and no NUL.

    No argv holds a NUL byte, so a node whose id has one could be written
    (a ``write`` payload, a worker request) but never named again by
    ``show --node``, ``rm``, ``blame`` or a one-shot bridge call.  Refusing
    it at the door keeps every stored node addressable.
    """
    check_text(value, what)
    if "\0" in value:
        raise UsageError(f"{what} must not contain NUL: no command line could name that node")
    return value


def _int_in(text: str, low: int, high: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"{text} is out of range for {what}")
    return value


#: The largest limit, offset or depth a listing takes (``paging``): far beyond any store, and ``offset + limit`` is
#: still an index Python slices by.
MAX_PAGING = 2**62


def paging(low: int, what: str) -> Callable[[str], int]:
    """The argparse type of a listing's ``--limit``, ``--offset`` or ``--max-depth``: a whole number from ``low``."""
    def parse(text: str) -> int:
        return _int_in(text, low, MAX_PAGING, f"{what} (a whole number from {low} to {MAX_PAGING})")

    return parse


def commit_time(text: str) -> int:
    """``--time MS`` of commit, merge and write: an integer that fits a 64-bit CBOR and JSON integer.

    argparse's ``int`` takes any size, and a time past 64 bits was stored in
    the commit (as a CBOR bignum, which upstream cannot read) before printing
    the result failed: an error that had changed the store.
    """
    return _int_in(text, I64_MIN, U64_MAX, "a commit time (64-bit Unix ms)")


def event_time(text: str) -> int:
    """``add --event-time TIME``: a signed 64-bit integer (Unix ms, the range ``write`` accepts for ``event_time``).

    An extension also takes ISO 8601 (``times.parse_time``: ``2026-03-01``, no offset meaning UTC), so a
    person can say when a fact became true without working out milliseconds; anything that reads as an
    integer is one, as before.
    """
    try:
        int(text)
    except ValueError:
        return wall_time(text)
    return _int_in(text, I64_MIN, 2**63 - 1, "an event time (signed 64-bit Unix ms)")


def wall_time(text: str) -> int:
    """``log --since/--until TIME``, ``show``'s and ``stamps``' ``--valid-at TIME``: ``times.parse_time``'s forms.

    ``times`` is imported here, when a time is given, not by every command that reads.
    """
    from ..times import parse_time

    try:
        return parse_time(text)
    except UsageError as error:
        raise argparse.ArgumentTypeError(error.detail) from None
