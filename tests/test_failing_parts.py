"""Failing parts: every way ``mnem`` can fail, through every consumer, in one matrix.

A ``mnem`` that is missing, crashes, hangs or prints garbage must give each
consumer a typed error with the right code and a clear message, leave no
process behind, and must not poison the consumer: once the binary is
repaired, the *same* bridge client, MCP session or ``MnemosyneStore``
answers the next call.

Each cell puts a fake at ``bin/mnem`` (tests/bridge/support.py), points a
consumer at that path, makes one failing call, checks the error and that
every process the fake started has exited, then repairs the binary by
replacing the fake with a symlink to the real ``mnem`` and makes the same
call again on the same object.

The fakes are dumb in the way a broken binary is: they print the same bytes
whether run one-shot or as ``mnem serve --stdio`` (where they misbehave on
every request and otherwise keep running, so a worker the bridge fails to
end shows up as a process left behind).  So the garbage faults test the
contract document in one-shot mode and the worker protocol's answer line in
worker mode; a one-shot ``mnem`` is what the bridge's one-shot consumer
runs, a worker what every other consumer runs by default.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bridge.support import fake_mnem, still_running
from conftest import MNEM, run_mnem
from mcp_support import connect

import mnem_bridge
from mnem_bridge import (
    BinaryNotFoundError,
    CommandTimeoutError,
    ContractError,
    MnemError,
    ProtocolError,
    SignalError,
)
from mnem_langgraph import MnemosyneStore
from mnem_langgraph.keys import node_id

pytestmark = pytest.mark.anyio

#: Seconds before a hung ``mnem`` is killed in the hang cells.  The consumer keeps it for the call that shows it
#: recovered, on the real ``mnem``, so it must be far beyond a worker's start-up and first answer on a loaded
#: machine (0.07-0.14 s here with two CPU hogs running): nothing else in these cells depends on the clock.
HANG_TIMEOUT = 5.0
#: The limit everywhere else: never reached, it only bounds a test that goes wrong.
TIMEOUT = 30.0

NAMESPACE, KEY = ("facts",), "plan"
#: The one fact in every cell's store: what a successful call reads back.
FACT_ID = node_id(NAMESPACE, KEY)
FACT = {"tier": "pro"}


@dataclass(frozen=True)
class Failure:
    """A failed call as its consumer reports it.

    Attributes:
        code: The taxonomy code.
        message: The text a caller reads (without the code prefix or the rerun line).
        command: The shell line that reproduces it, when the consumer reports one.
        kind: The exception class's name (Python consumers; the MCP client sees only text).
    """

    code: str
    message: str
    command: str | None
    kind: str | None


Attempt = Callable[[], Awaitable["Any | Failure"]]


@dataclass(frozen=True)
class Fault:
    """One way ``mnem`` fails.

    Attributes:
        name: The cell's id.
        error: The bridge's class for it (every one a ``StoreIoError``, code ``store_io``).
        says: Text every consumer's message contains (``{binary}`` is the fake's path).
        misbehave: The fake's body on every invocation, one-shot or per worker request;
            ``None``: there is no binary at all.
        describe: Whether the fake passes the contract check (lists ``serve``, so it runs as a worker).
    """

    name: str
    error: type[MnemError]
    says: tuple[str, ...]
    misbehave: str | None
    describe: bool = True

    def install(self, binary: Path, pids: Path) -> None:
        """Put the fake at ``binary``; each process it starts appends its pid to ``pids``."""
        if self.misbehave is None:
            return
        body = f"""\
PIDS = {str(pids)!r}
with open(PIDS, "a") as record:
    record.write(f"{{os.getpid()}}\\n")
def misbehave():
{textwrap.indent(textwrap.dedent(self.misbehave), "    ")}
if sys.argv[1:] == ["serve", "--stdio"]:
    for request in sys.stdin:
        misbehave()
else:
    misbehave()
"""
        fake_mnem(binary.parent, body, describe=self.describe, name=binary.name, features=("serve",))


FAULTS = (
    Fault("missing", BinaryNotFoundError, ("{binary}", "MNEM_BIN"), None),
    Fault("killed", SignalError, ("mnem was killed by SIGKILL",), "os.kill(os.getpid(), signal.SIGKILL)"),
    Fault("exits-1-without-json", ProtocolError, ("exited with status 1",), """
        sys.stderr.write('Traceback (most recent call last):\\n  File "mnem"\\nRuntimeError: boom\\n')
        sys.exit(1)
    """),
    Fault("hang", CommandTimeoutError, (f"did not finish within {HANG_TIMEOUT:g}s",), """
        child = subprocess.Popen(["sleep", "300"])  # the whole process group must die, not just mnem
        with open(PIDS, "a") as record:
            record.write(f"{child.pid}\\n")
        time.sleep(300)
    """),
    Fault("not-json", ProtocolError, ("output that is not JSON: '<html>garbage</html>",),
          "print('<html>garbage</html>', flush=True)"),
    Fault("truncated-json", ProtocolError, ("exited with status 0", '"tier": "pr'), """
        sys.stdout.write('{"id": "facts:plan", "content": {"tier": "pr')
        sys.stdout.flush()
        sys.exit(0)
    """),
    Fault("wrong-shape", ProtocolError, ("JSON of the wrong shape", "[1, 2]"), "print('[1, 2]', flush=True)"),
    Fault("wrong-contract", ContractError,
          ("{binary} speaks JSON contract 2, and this bridge speaks contract 1", "MNEM_BIN"), f"""
        if sys.argv[1:] == ["--version", "--json"]:
            print(json.dumps({{"name": "mnem", "version": "2.0.0", "format_version": 1, "contract": 2,
                              "implementation": "future", "features": ["serve"]}}))
            sys.exit(0)
        os.execv({MNEM!r}, [{MNEM!r}, *sys.argv[1:]])
    """, describe=False),
)


def _bridge_failure(exc: MnemError) -> Failure:
    return Failure(exc.code, str(exc), exc.command, type(exc).__name__)


def _bridge(mode: str) -> Callable[[Path, Path, float], AbstractAsyncContextManager[Attempt]]:
    @asynccontextmanager
    async def open_store(binary: Path, root: Path, timeout: float) -> AsyncIterator[Attempt]:
        with mnem_bridge.Mnem(binary, mode=mode, timeout=timeout) as client, \
                mnem_bridge.open(root, client=client) as store:
            async def attempt() -> Any | Failure:
                try:
                    node = store.working_node(FACT_ID)
                except MnemError as exc:
                    return _bridge_failure(exc)
                return None if node is None else node.content

            yield attempt

    return open_store


def _mcp(mode: str) -> Callable[[Path, Path, float], AbstractAsyncContextManager[Attempt]]:
    @asynccontextmanager
    async def open_session(binary: Path, root: Path, timeout: float) -> AsyncIterator[Attempt]:
        log = root.parent / "mnem-mcp.log"
        with log.open("w") as errlog:
            async with connect(mode, root, mnem=binary, timeout=timeout, errlog=errlog) as client:
                async def attempt() -> Any | Failure:
                    result = await client.call_tool("recall", {"id": FACT_ID})
                    if not result.is_error:
                        return result.structured_content["content"]
                    code, _, text = result.content[0].text.partition(": ")
                    message, _, command = text.partition("\nrerun: ")
                    return Failure(code, message, command or None, None)

                yield attempt
        assert "Traceback" not in log.read_text()  # the server (stdio) logged the failure, it did not crash

    return open_session


@asynccontextmanager
async def _langgraph(binary: Path, root: Path, timeout: float) -> AsyncIterator[Attempt]:
    with MnemosyneStore(root, mnem=binary, timeout=timeout) as store:
        async def attempt() -> Any | Failure:
            try:
                item = store.get(NAMESPACE, KEY)
            except MnemError as exc:
                return _bridge_failure(exc)
            return None if item is None else item.value

        yield attempt


@dataclass(frozen=True)
class Consumer:
    """Something that runs ``mnem`` for its caller.

    Attributes:
        name: The cell's id.
        open: Makes the consumer for a binary, store root and timeout; yields one call to repeat.
        needs_binary: Its constructor resolves the binary, so a missing one fails there
            (tests/bridge/test_process.py); here the binary vanishes right after.
    """

    name: str
    open: Callable[[Path, Path, float], AbstractAsyncContextManager[Attempt]]
    needs_binary: bool


CONSUMERS = (
    Consumer("bridge-oneshot", _bridge("oneshot"), needs_binary=True),
    Consumer("bridge-worker", _bridge("worker"), needs_binary=True),
    Consumer("mcp-in-process", _mcp("in-process"), needs_binary=False),
    Consumer("mcp-stdio", _mcp("stdio"), needs_binary=False),
    Consumer("langgraph", _langgraph, needs_binary=True),
)


@pytest.fixture(scope="module")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding one fact, written by the real ``mnem``: made once, copied for each cell."""
    root = tmp_path_factory.mktemp("seed") / "store"
    assert run_mnem("init", str(root)).code == 0
    payload = json.dumps({"put": [{"id": FACT_ID, "content": FACT}], "delete": []})
    assert run_mnem("--json", "write", "--message=seed", cwd=root, input=payload).code == 0
    return root


@pytest.fixture
def seeded(seed: Path, tmp_path: Path) -> Path:
    """This cell's own copy of the seeded store."""
    return Path(shutil.copytree(seed, tmp_path / "store", symlinks=True))


@pytest.mark.parametrize("consumer", CONSUMERS, ids=lambda consumer: consumer.name)
@pytest.mark.parametrize("fault", FAULTS, ids=lambda fault: fault.name)
async def test_a_failing_mnem_is_a_typed_error_and_the_same_consumer_recovers(
    fault: Fault, consumer: Consumer, seeded: Path, tmp_path: Path
) -> None:
    """Fail once with the typed error, leave nothing running, then answer on the real ``mnem``.

    The fault is in place before the consumer exists, so the first thing the
    consumer does with the binary (the contract check, the worker's start)
    meets it.  Only a missing binary is different for consumers whose
    constructor resolves the path: it is there when they are made and gone
    by their first call.
    """
    binary, pids = tmp_path / "bin" / "mnem", tmp_path / "pids"
    binary.parent.mkdir()
    vanishes = fault.misbehave is None and consumer.needs_binary
    if vanishes:
        binary.symlink_to(MNEM)
    else:
        fault.install(binary, pids)
    async with consumer.open(binary, seeded, HANG_TIMEOUT if fault.name == "hang" else TIMEOUT) as attempt:
        if vanishes:
            binary.unlink()

        failure = await attempt()
        assert isinstance(failure, Failure), f"the call succeeded: {failure!r}"
        assert failure.code == "store_io", failure
        assert failure.kind in (None, fault.error.__name__), failure
        for text in fault.says:
            assert text.format(binary=binary) in failure.message, failure
        assert "Traceback" not in failure.message
        if fault.misbehave is not None:
            assert failure.command is not None, failure
        if failure.command is not None:
            assert failure.command.startswith(f"{binary} "), failure
        started = [int(pid) for pid in pids.read_text().split()] if pids.exists() else []
        assert still_running(started) == [], "a process outlived the failed call"

        binary.unlink(missing_ok=True)
        binary.symlink_to(MNEM)
        assert await attempt() == FACT  # the same client, session or store, now on the real mnem
