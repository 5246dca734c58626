"""One ``mnem`` invocation: argv in, decoded JSON document (or a typed error) out.

``Mnem`` is how the bridge runs the binary: which binary, which runner, how
long to wait.  ``call`` builds ``[mnem, "-C", root, "--json", ...]``, echoes
it as a shell line, runs it through the runner and interprets the result
strictly by the contract (docs/cli-json.md): exit status 0 means stdout is
the result; any other status means stdout is ``{"error": {"code",
"message"}}``.  Nothing here reads text meant for people.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path, PurePath
from types import TracebackType
from typing import Any, TypeVar, overload

import orjson

from .address import StoreUrl
from .binary import FIX, Binary, describe, find_binary
from .echo import ShellLine, echo
from .errors import (
    BinaryNotFoundError,
    CommandTimeoutError,
    ProtocolError,
    SignalError,
    UsageError,
    error_class,
)
from .features import require
from .process import Runner, RunResult, SubprocessRunner
from .text import is_utf8, shown, text_problem
from .worker import WorkerRunner

__all__ = ["DEFAULT_TIMEOUT", "MODES", "Mnem", "check_arguments", "interpret"]

#: How the client runs the binary: a persistent worker, or one process per call.
MODES = ("worker", "oneshot")

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Where a call's store is: a folder, or a PostgreSQL store's URL.
Where = str | os.PathLike[str] | StoreUrl

#: Seconds one invocation may take before its process group is killed.  Far
#: above a normal call (~0.1 s) and above the binary's own 10 s wait for a
#: busy store, so only a wedged process ever hits it.
DEFAULT_TIMEOUT = 60.0

#: The latest time a clock may answer, as ``mnem --now`` takes it (docs/cli-json.md): 2**62 Unix ms.
MAX_NOW_MS = 2**62


class Mnem:
    """Runs the ``mnem`` binary for a ``Store``.

    Args:
        binary: Path (or name on PATH) of ``mnem``; see ``binary.find_binary`` for the fallbacks.
        runner: How to run it (default: chosen by ``mode``, and closed with this client).
        timeout: Seconds per invocation before the process group is killed.
        mode: ``"worker"`` (one persistent ``mnem serve --stdio`` for this client, when the
            binary lists the ``serve`` feature) or ``"oneshot"`` (one process per call).
            Default: ``$MNEM_BRIDGE_MODE``, else ``"worker"``.  Ignored when ``runner`` is given.
        clock: What "now" is, in Unix milliseconds, read once per call and sent as
            ``--now`` (a binary listing the ``now`` feature): the time of commits made
            without ``time_ms`` and of TTL leases (when one starts, whether it has run
            out, ``touch``, ``expire``).  For tests that let a TTL run out without
            waiting, and for replays.  ``None`` (the default) sends nothing, and the
            binary reads the system clock as it always has.

    Raises:
        BinaryNotFoundError: No binary where the lookup order points.
    """

    def __init__(
        self,
        binary: str | os.PathLike[str] | None = None,
        *,
        runner: Runner | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        mode: str | None = None,
        clock: Callable[[], int] | None = None,
    ) -> None:
        self.path = find_binary(binary)
        self.timeout = timeout
        self.clock = clock
        self.mode = mode or os.environ.get("MNEM_BRIDGE_MODE") or "worker"
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        self._last: ShellLine | None = None
        self._oneshot = SubprocessRunner()
        self._runner: Runner | None = runner
        self._owns_runner = runner is None
        #: Runners whose children get extra variables (a store URL's password), by those variables.
        self._env_runners: dict[tuple[tuple[str, str], ...], Runner] = {}

    @property
    def last_command(self) -> str | None:
        """The shell line of the most recent invocation, for logs and bug reports."""
        return None if self._last is None else str(self._last)

    @property
    def binary(self) -> Binary:
        """The binary's checked self-description (runs ``--version --json`` once per process)."""
        return describe(self.path, self._oneshot)

    @property
    def runner(self) -> Runner:
        """The runner in use; the first call decides between worker and one-shot."""
        if self._runner is None:
            self._runner = self._new_runner({})
        return self._runner

    def _new_runner(self, env: dict[str, str]) -> Runner:
        """A worker when the binary serves (and the mode wants one), else one process per call."""
        serves = "serve" in self.binary.features  # checks the binary's contract first, whatever the mode
        if self.mode == "worker" and serves:
            return WorkerRunner(self.path, env, framed="serve-framed" in self.binary.features)
        return SubprocessRunner(env) if env else self._oneshot

    def _runner_with(self, env: dict[str, str]) -> Runner:
        """The runner for calls whose children need ``env`` (one per distinct password).

        Raises:
            UsageError: The caller gave its own runner, which this client cannot hand a password to.
        """
        if not self._owns_runner:
            raise UsageError(
                "a store URL with a password needs the bridge's own runner: give the password through "
                "PGPASSWORD or a pgpass file instead, and drop it from the URL"
            )
        key = tuple(sorted(env.items()))
        if key not in self._env_runners:
            self._env_runners[key] = self._new_runner(env)
        return self._env_runners[key]

    @overload
    def call(self, root: Where, *args: str, payload: str | None = None, parse: None = None) -> Any: ...

    @overload
    def call(self, root: Where, *args: str, payload: str | None = None, parse: Callable[[Any], T]) -> T: ...

    def call(
        self,
        root: Where,
        *args: str,
        payload: str | None = None,
        parse: Callable[[Any], T] | None = None,
    ) -> Any:
        """Run one subcommand against the store at ``root``.

        Args:
            root: The directory or store URL passed as ``-C`` (a URL's password goes in
                the child's environment, never in its argv).
            *args: The subcommand and its arguments.
            payload: Text for standard input (sent as UTF-8, ending in a newline).
            parse: Reads the result document (e.g. ``Commit.from_dict``).  A document
                it cannot read (a missing key, a list for an object, ...) is the
                binary breaking the contract, so it raises ``ProtocolError`` with
                this call's command, not a ``KeyError`` or ``TypeError`` from
                deep inside the caller.

        Returns:
            The decoded JSON result document, or what ``parse`` made of it.

        Raises:
            UsageError: Text no invocation can carry (``check_arguments``), or a
                command line longer than the OS takes (one-shot only).
            MnemError: The binary reported an error (the subclass for its code),
                or the process failed (a ``StoreIoError`` subclass).
        """
        doc, result, command = self._run(root, args, payload)
        if parse is None:
            return doc
        try:
            return parse(doc)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            shown = json.dumps(doc, ensure_ascii=False)
            shown = shown if len(shown) <= 200 else shown[:200] + "..."
            raise ProtocolError(
                f"mnem {args[0]} answered with JSON of the wrong shape: {shown} ({type(exc).__name__}: {exc})",
                command=str(command), stderr=result.stderr, exit_status=result.exit_status,
            ) from None

    def _run(self, root: Where, args: tuple[str, ...], payload: str | None) -> tuple[Any, RunResult, ShellLine]:
        """Run one invocation: its decoded document, what the runner returned, and the shell line."""
        runner = self.runner  # the contract check (cached) happens here, before the first real call
        if isinstance(root, StoreUrl):
            path = root.url
            if root.password:
                runner = self._runner_with(root.env())
        else:
            path = os.fspath(root if isinstance(root, PurePath) else Path(root))  # a Path keeps its text
        check_arguments(path, args, payload)
        if not is_utf8(path):  # the worker protocol is JSON text; only a process argv carries any path bytes
            runner = self._oneshot
        argv = [self.path, "-C", path, "--json", *self._now(), *args]
        stdin = None
        if payload is not None:
            payload = payload if payload.endswith("\n") else payload + "\n"
            stdin = payload.encode("utf-8")
        command = self._last = ShellLine(argv, payload)
        echo(command)
        try:
            result = runner.run(argv, stdin=stdin, timeout=self.timeout)
        except OSError as exc:
            if exc.errno == errno.E2BIG:
                size = sum(len(os.fsencode(arg)) + 1 for arg in argv)
                raise UsageError(
                    f"the command line is too long for the operating system ({size} bytes; one argument may "
                    f"hold at most {ARG_MAX_ONE // 1024} KiB): write large content with write() or "
                    "agents.remember, which send it on stdin, or use the worker runner"
                ) from None
            raise BinaryNotFoundError(
                f"cannot run `mnem` binary {self.path!r}: {exc.strerror or exc}; {FIX}", command=str(command)
            ) from exc
        return interpret(result, command, self.timeout), result, command

    def _now(self) -> tuple[str, ...]:
        """``--now=MS`` as ``clock`` answers it for this call, or nothing without a clock.

        Raises:
            UsageError: The clock answered something other than Unix milliseconds (``time.time``'s
                float seconds, say), which would date commits and leases wrongly.
            ContractError: The binary cannot take ``--now``, so it would read its own clock instead.
        """
        if self.clock is None:
            return ()
        now = self.clock()
        if type(now) is not int or not 0 <= now <= MAX_NOW_MS:
            raise UsageError(
                f"clock must return the time in Unix milliseconds, an int from 0 to 2**62 "
                f"(time.time_ns() // 1_000_000 is the system's); it returned {now!r}"
            )
        require(self.binary, "now")
        return (f"--now={now}",)

    def call_json(self, root: Where, *args: str, payload: str | None = None) -> tuple[Any, bytes]:
        """``call``, returning the decoded document with the exact bytes the binary printed.

        For results a caller forwards as JSON (a page of memory to an MCP
        client): the binary's compact encoding is used as it is instead of
        being encoded again.
        """
        doc, result, _ = self._run(root, args, payload)
        return doc, result.stdout

    def close(self) -> None:
        """Close the runner if this client created it (a caller's runner is the caller's)."""
        if self._owns_runner and self._runner is not None:
            self._runner.close()
        for runner in self._env_runners.values():
            runner.close()
        self._env_runners.clear()

    def __enter__(self) -> Mnem:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


#: Linux's limit on one command-line argument (MAX_ARG_STRLEN), for the error that names it.
ARG_MAX_ONE = 128 * 1024


def check_arguments(path: str, args: tuple[str, ...], payload: str | None) -> None:
    r"""Refuse, before running anything, text no ``mnem`` invocation can carry.

    An argv cannot hold NUL, and a lone surrogate (``"\ud800"``) is not
    text: it has no UTF-8 encoding, so neither the worker's JSON request nor
    stdin can hold it, and a one-shot ``Popen`` fails on it with a bare
    ``ValueError`` or ``UnicodeEncodeError``.  Checking here makes every such
    input the same typed ``UsageError`` in both runners.  The store path is
    the exception: it names a file, so undecodable file-name bytes
    (``os.fsdecode``'s surrogate escapes) are allowed there.

    Args:
        path: The store path passed as ``-C``.
        args: The subcommand and its arguments.
        payload: Text for standard input, or ``None``.

    Raises:
        UsageError: A NUL anywhere, or text that is not valid Unicode.
    """
    if "\0" in path:
        raise UsageError(f"the store path {shown(path)} contains NUL, which no file name can")
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        raise UsageError(f"the store path {shown(path)} cannot be encoded as a file name") from None
    joined = "".join(args)  # one look at every argument; only a bad one is then looked for
    if "\0" in joined or not is_utf8(joined):
        for arg in args:
            problem = text_problem(arg, nul=True)
            if problem:
                raise UsageError(f"the mnem argument {shown(arg)} {problem}")
    if payload is not None:
        problem = text_problem(payload, nul=False)
        if problem:
            raise UsageError(f"the payload for mnem's standard input {problem}")


def interpret(result: RunResult, command: str | ShellLine, timeout: float) -> Any:
    """Turn a finished process into its result document, or raise the matching error.

    Args:
        result: What the runner returned.
        command: The shell line, carried by any error.
        timeout: The limit in force, reported by a timeout error.

    Returns:
        The decoded JSON document of a successful invocation.

    Raises:
        CommandTimeoutError: The runner killed the process for time.
        SignalError: The process died from a signal.
        ProtocolError: The output is not a contract document, or the runner could not read one.
        MnemError: The binary's error document, as the class for its code.
    """
    def facts(**more: Any) -> dict[str, Any]:  # an error's facts; the shell line is rendered only for one
        return {"command": str(command), "stderr": result.stderr, "exit_status": result.exit_status, **more}

    if result.timed_out:
        raise CommandTimeoutError(
            f"mnem did not finish within {timeout:g}s; its process group was killed",
            timeout=timeout, command=str(command), stderr=result.stderr,
        )
    if result.broken is not None:
        raise ProtocolError(result.broken, **facts())
    if result.exit_status < 0:
        raise SignalError(f"mnem was killed by {_signal_name(-result.exit_status)}", **facts())
    try:
        doc = orjson.loads(result.stdout)
    except orjson.JSONDecodeError:
        shown = result.stdout[:200].decode("utf-8", "replace")
        what = "no output" if not result.stdout.strip() else f"output that is not JSON: {shown!r}"
        raise ProtocolError(f"mnem exited with status {result.exit_status} and {what}", **facts()) from None
    if result.exit_status == 0:
        return doc
    error = doc.get("error") if isinstance(doc, dict) else None
    if not (isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str)):
        raise ProtocolError(f"mnem exited with status {result.exit_status} without an error document", **facts())
    detail = error.get("detail")
    raise error_class(error["code"])(
        error["message"], code=error["code"], **facts(detail=detail if isinstance(detail, str) else None)
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
