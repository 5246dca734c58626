"""Typed errors: the contract's error codes as exception classes, plus process failures.

The ``mnem`` binary reports failures as ``{"error": {"code", "message"}}``;
the bridge turns each code into the class upstream's SDK would raise, so
callers catch ``InvalidRefError`` instead of inspecting text.  Failures of
the process itself (missing binary, garbage output, a signal, a timeout) are
``StoreIoError`` subclasses: the ADR-0016 taxonomy has no other place for
them, and the MCP server maps every error by ``code`` alone.

Every error keeps the raw facts and nothing pre-formatted (GitPython's
lesson): ``code``, ``message`` (the binary's text, upstream's Display form),
``detail`` (the same without the Display prefix that repeats the code),
``command`` (the rerunnable shell line, or ``None`` when the bridge raised
the error without running anything), ``stderr`` (raw bytes) and
``exit_status`` (negative for a signal, ``None`` when no process finished).
"""

from __future__ import annotations

import logging

__all__ = [
    "BinaryError",
    "BinaryNotFoundError",
    "BusyError",
    "CommandTimeoutError",
    "ConflictError",
    "ContractError",
    "CorruptStoreError",
    "FormatVersionError",
    "InvalidRefError",
    "MnemError",
    "NoStoreError",
    "NotFoundError",
    "ProtocolError",
    "SignalError",
    "StoreExistsError",
    "StoreIoError",
    "UsageError",
    "error_class",
]

logger = logging.getLogger(__name__)


class MnemError(Exception):
    """Base of every error the bridge raises; ``str()`` is the message alone.

    Args:
        message: The binary's ``error.message`` (or the bridge's own text).
        detail: The binary's ``error.detail``, the message without its Display
            prefix (``invalid ref: ``); ``None`` means the message has none.
        command: The shell line that reproduces the failure, if one ran.
        stderr: The child's raw standard error.
        exit_status: The child's exit status; negative means killed by that signal.
        code: Overrides the class's code (only for codes this version does not know).
    """

    #: The stable snake_case code of the ``--json`` contract.
    code: str = "error"

    def __init__(
        self,
        message: str,
        *,
        command: str | None = None,
        stderr: bytes = b"",
        exit_status: int | None = None,
        code: str | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.detail = message if detail is None else detail
        self.command = command
        self.stderr = stderr
        self.exit_status = exit_status
        if code is not None:
            self.code = code

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, command={self.command!r})"


class NotFoundError(MnemError):
    """An object was asked for by id and the store does not hold it."""

    code = "not_found"


class InvalidRefError(MnemError):
    """A bad name, revision or precondition (upstream's most common user error)."""

    code = "invalid_ref"


class ConflictError(MnemError):
    """A branch moved under a commit or merge (a lost compare-and-swap)."""

    code = "conflict"


class CorruptStoreError(MnemError):
    """Bytes on disk, or in an export, do not decode to what they claim to be."""

    code = "corrupt_store"


class FormatVersionError(MnemError):
    """The store or export was written by a newer format than the binary reads."""

    code = "format_version"


class StoreExistsError(MnemError):
    """``init`` or ``import`` would create a store on top of, or inside, another."""

    code = "store_exists"


class NoStoreError(MnemError):
    """No store at the path given (or, discovering from the current folder, none at or above it)."""

    code = "no_store"


class StoreIoError(MnemError):
    """The filesystem, the database or the ``mnem`` process failed."""

    code = "store_io"


class BusyError(StoreIoError):
    """Another writer held the store longer than the binary's bounded wait."""

    code = "busy"


class UsageError(MnemError, ValueError):
    """The binary rejected the arguments or a payload (exit status 2).

    It is also a ``ValueError`` because it means a bad argument reached the
    binary, as upstream's SDK raises ``ValueError`` for bad values.
    """

    code = "usage"


class ProtocolError(StoreIoError):
    """The binary's output was not a contract document (garbage, empty, wrong shape)."""


class SignalError(StoreIoError):
    """The ``mnem`` process was killed by a signal (``exit_status`` is minus its number)."""


class CommandTimeoutError(StoreIoError):
    """The ``mnem`` process outlived the timeout; its whole process group was killed.

    Args:
        message: What happened.
        timeout: The limit that was exceeded, in seconds.
        command: The shell line that reproduces the call.
        stderr: Whatever the child wrote to standard error before it was killed.
    """

    def __init__(self, message: str, *, timeout: float, command: str | None = None, stderr: bytes = b"") -> None:
        super().__init__(message, command=command, stderr=stderr)
        self.timeout = timeout


class BinaryError(StoreIoError):
    """The ``mnem`` binary is missing or is not one the bridge can talk to."""


class BinaryNotFoundError(BinaryError):
    """No ``mnem`` binary where the bridge looked (argument, ``MNEM_BIN``, PATH, venv)."""


class ContractError(BinaryError):
    """The binary does not speak the ``--json`` contract (e.g. upstream's Rust ``mnem``)."""


_BY_CODE: dict[str, type[MnemError]] = {
    cls.code: cls
    for cls in (
        NotFoundError,
        InvalidRefError,
        ConflictError,
        CorruptStoreError,
        FormatVersionError,
        StoreExistsError,
        NoStoreError,
        StoreIoError,
        BusyError,
        UsageError,
    )
}


def error_class(code: str) -> type[MnemError]:
    """The exception class for a contract error code (``MnemError`` for unknown codes).

    Args:
        code: ``error.code`` from the binary's error document.

    Returns:
        The class to raise; an unknown code (a newer contract) gets the base
        class, which then carries the code on the instance.
    """
    return _BY_CODE.get(code, MnemError)
