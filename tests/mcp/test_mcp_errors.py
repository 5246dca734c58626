"""What a client sees when a call fails, and that the server keeps serving afterwards.

Every error text starts with its code, then the message, then (when a
``mnem`` ran) the command that reproduces it.  The failing ``mnem`` binaries
are fakes that behave like the real one except for one subcommand, so the
call after a failure shows the server is still answering.  A ``mnem`` that is
missing, crashes, hangs or prints garbage is a cell of tests/test_failing_parts.py.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pg_stores
import pytest
from bridge.support import fake_mnem
from conftest import MNEM, run_mnem
from mcp_support import MODES, Mode, call, connect, fail

import mnem_bridge

pytestmark = pytest.mark.anyio


def misbehaving_mnem(directory: Path, misbehave: str, *, on: str = "blame") -> Path:
    """A fake ``mnem`` that runs ``misbehave`` for subcommand ``on``, else the real one.

    ``on`` defaults to ``blame``, the subcommand behind the ``why`` tool.
    """
    return fake_mnem(directory, f"""\
        if {on!r} in sys.argv:
            {misbehave}
        os.execv({MNEM!r}, [{MNEM!r}, *sys.argv[1:]])
        """)


@pytest.mark.parametrize("mode", MODES)
async def test_error_texts_start_with_the_code(mode: Mode, store: Path, tmp_path: Path) -> None:
    async with connect(mode, pg_stores.address(store)) as client:
        await call(client, "remember", id="plan", content="pro")

        why = await fail(client, "why", id="ghost")
        assert re.fullmatch(r'invalid_ref: blame: "ghost" is not in memory at [0-9a-f]{64}\n'
                            r"rerun: \S*mnem -C \S+ --json blame -- ghost", why), why
        assert (await fail(client, "recall_at", commit="nowhere")).startswith("invalid_ref: ")
        assert (await fail(client, "whats_new", commit="0000")).startswith("invalid_ref: ")
        forget = await fail(client, "forget", id="ghost")
        assert forget.startswith('invalid_ref: no node "ghost" in memory\nrerun: ')
        assert "write" in forget  # the rerun line is the write that failed

        assert await fail(client, "remember", id="plan") == "usage: remember: content: required"
        assert await fail(client, "history", limit=0) == (
            "usage: history: limit: Input should be greater than or equal to 1")
        assert await fail(client, "recall", id=3) == "usage: recall: id: Input should be a valid string"
        typo = await fail(client, "remember_many", items=[{"id": "a", "content": 1, "sorce": "x"}])
        assert typo == "usage: remember_many: items.0.sorce: unknown key"
        assert (await fail(client, "nope")) == "usage: Unknown tool: nope"

        await call(client, "recall")  # still serving
    async with connect(mode, tmp_path / "missing" / "store") as client:  # never created: its parent is missing
        no_store = await fail(client, "recall")
        assert no_store.startswith("no_store: no mnemosyne store at "), no_store
        if mode == "stdio":  # mnem-mcp creates a store on first use, and says why it could not (test_store_refusals)
            assert "missing does not exist, so no store is created at " in no_store, no_store
        else:  # build_server never creates one: the engine's own no_store, with the command that reproduces it
            assert "\nrerun: " in no_store, no_store


async def test_an_error_document_is_passed_on_and_the_server_keeps_serving(store: Path, tmp_path: Path) -> None:
    busy = """print('{"error": {"code": "busy", "message": "the store is locked"}}'); sys.exit(1)"""
    binary = misbehaving_mnem(tmp_path, busy)
    async with connect("in-process", pg_stores.address(store), mnem=binary) as client:
        await call(client, "remember", id="plan", content="pro")
        error = await fail(client, "why", id="plan")
        assert error.startswith("busy: the store is locked\n"), error
        shown = str(mnem_bridge.store_address(pg_stores.address(store)))  # a URL as the bridge shows it: no password
        assert f"\nrerun: {binary} -C {shlex.quote(shown)} --json blame" in error, error
        assert (await call(client, "recall"))["plan"]["content"] == "pro"


async def test_a_busy_store_is_retried_before_the_busy_error(store: Path, tmp_path: Path) -> None:
    attempts = tmp_path / "attempts"
    busy = (f'open({str(attempts)!r}, "a").write("x"); '
            'print(\'{"error": {"code": "busy", "message": "locked"}}\'); sys.exit(1)')
    binary = misbehaving_mnem(tmp_path, busy, on="write")
    async with connect("in-process", pg_stores.address(store), mnem=binary) as client:
        assert (await fail(client, "remember", id="plan", content="pro")).startswith("busy: locked\nrerun: ")
        assert attempts.read_text() == "xxxx"  # the bridge's bounded retry, then the code
        assert await call(client, "history") == []


async def test_a_huge_argument_costs_the_client_and_the_log_a_bounded_text(tmp_path: Path) -> None:
    """A 3 MB id in a failing call: the client gets at most ``MAX_PART`` of each part, the log ``LOG_PART``.

    Both say how much was left out.  Without the log's bound, every such call would write the megabytes to the
    server's log (twice: the message and the rerun line), which a remote client could repeat until the disk fills.
    """
    from mnem_mcp.errors import LOG_PART, MAX_PART

    store = tmp_path / "store"
    assert run_mnem("init", str(store)).code == 0
    huge = "x" * (3 << 20)
    with (tmp_path / "server.log").open("w") as errlog:
        async with connect("stdio", store, errlog=errlog) as client:
            text = await fail(client, "why", id=huge)
            assert await call(client, "recall", id="nothing") is None  # still serving
    assert len(text) < 3 * MAX_PART and f"the server log has the first {LOG_PART}" in text
    logged = (tmp_path / "server.log").read_text()
    assert "x" * (LOG_PART // 2) in logged and "x" * (LOG_PART + 1) not in logged  # a bounded piece of the id
    assert len(logged) < 3 * LOG_PART and "more characters of the command line, not logged" in logged
