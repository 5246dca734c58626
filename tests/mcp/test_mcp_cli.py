"""``mnem-mcp`` as a process: tool gating, store resolution, start-up on a broken store, logging."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pg_stores
import pytest
from conftest import set_store_meta
from mcp_support import MNEM_MCP, call, connect, fail, server_env

import mnem_bridge

pytestmark = pytest.mark.anyio

CORE = {"remember", "revise", "remember_many", "forget", "recall", "recall_at", "history", "why", "when_did",
        "whats_new"}
HARNESS = {"branch", "switch", "merge", "revert"}


async def test_harness_tools_are_listed_only_with_tools_all(store: Path) -> None:
    async with connect("stdio", pg_stores.address(store)) as client:
        assert {t.name for t in (await client.list_tools()).tools} == CORE
        assert (await fail(client, "branch", name="x")) == "usage: Unknown tool: branch"
    async with connect("stdio", pg_stores.address(store), tools="all") as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) == CORE | HARNESS
    assert all(t.annotations.open_world_hint is False for t in listed.values())
    assert listed["recall"].annotations.read_only_hint is True
    assert listed["forget"].annotations.destructive_hint is True
    assert listed["remember"].annotations.read_only_hint is False
    assert listed["remember"].output_schema["required"] == ["commit"]


async def test_the_store_comes_from_mnem_store_without_store_argument(store: Path, mnem) -> None:
    async with connect("stdio", None, env={"MNEM_STORE": pg_stores.address(store)}) as client:
        commit = (await call(client, "remember", id="plan", content="pro"))["commit"]
    assert [c["id"] for c in mnem("--json", "log", cwd=store).json] == [commit]


async def test_without_store_or_mnem_store_a_default_store_is_created_and_reused(tmp_path: Path) -> None:
    data, home = tmp_path / "data", tmp_path / "home"
    env = {"XDG_DATA_HOME": str(data), "HOME": str(home)}
    default = data / "mnemosyne" / "default"
    with (tmp_path / "first.log").open("w+") as errlog:
        async with connect("stdio", None, env=env, errlog=errlog) as client:
            await call(client, "remember", id="plan", content="pro")
        errlog.seek(0)
        log = errlog.read()
    assert f"created the default store at {default}" in log
    assert (default / ".mnem").is_dir()
    with (tmp_path / "second.log").open("w+") as errlog:
        async with connect("stdio", None, env=env, errlog=errlog) as client:
            assert (await call(client, "recall", id="plan"))["content"] == "pro"
        errlog.seek(0)
        log = errlog.read()
    assert "created" not in log and f"serving the store at {default} (from default), HEAD ref: main" in log


async def test_a_broken_store_is_reported_at_start_up_and_by_every_call(store: Path, tmp_path: Path) -> None:
    set_store_meta(store, "head", "not a ref")
    with (tmp_path / "server.log").open("w+") as errlog:
        async with connect("stdio", pg_stores.address(store), errlog=errlog) as client:
            assert (await fail(client, "recall")).startswith("corrupt_store: ")
            assert (await fail(client, "remember", id="a", content=1)).startswith("corrupt_store: ")
        errlog.seek(0)
        log = errlog.read()
    shown = mnem_bridge.store_address(pg_stores.address(store))  # a URL as the server shows it: no password
    assert f"the store at {shown} (from --store) cannot be used" in log and "corrupt_store: " in log
    assert "Traceback" not in log


async def test_echo_logs_every_mnem_command_to_stderr(store: Path, tmp_path: Path) -> None:
    with (tmp_path / "server.log").open("w+") as errlog:
        async with connect("stdio", pg_stores.address(store), "--echo", errlog=errlog) as client:
            await call(client, "recall", id="plan")
        errlog.seek(0)
        log = errlog.read()
    shown = shlex.quote(str(mnem_bridge.store_address(pg_stores.address(store))))  # a URL as echoed: no password
    assert re.search(rf"mnem_bridge\.echo: \S*mnem -C {re.escape(shown)} --json show --node=plan\n", log), log


def test_help_and_bad_arguments_exit_without_a_traceback() -> None:
    helped = subprocess.run([MNEM_MCP, "--help"], capture_output=True, text=True, env=server_env(), timeout=60)
    assert helped.returncode == 0 and "--tools {core,all}" in helped.stdout and "MNEM_STORE" in helped.stdout
    bad = subprocess.run([MNEM_MCP, "--timeout", "0"], capture_output=True, text=True, env=server_env(), timeout=60)
    assert bad.returncode == 2 and "--timeout: must be positive" in bad.stderr and "Traceback" not in bad.stderr


async def test_a_new_store_path_is_created_on_first_use_and_logged(tmp_path: Path) -> None:
    """``mnem-mcp --store PATH`` on a new folder (the README's one-liner) creates the store there."""
    new = tmp_path / "agent-memory"
    with (tmp_path / "server.log").open("w+") as errlog:
        async with connect("stdio", new, errlog=errlog) as client:
            await call(client, "remember", id="plan", content="pro")
        errlog.seek(0)
        log = errlog.read()
    assert f"created a new store at {new} (from --store)" in log and "HEAD ref: main" in log, log
    assert (new / ".mnem").is_dir()
    async with connect("stdio", None, env={"MNEM_STORE": str(tmp_path / "from-env")}) as client:
        await call(client, "remember", id="plan", content="pro")
    assert (tmp_path / "from-env" / ".mnem").is_dir()


@pytest.mark.parametrize("where", ["project", "inside-a-store"])
async def test_a_path_holding_something_else_is_refused_with_the_fix(where: str, tmp_path: Path, mnem) -> None:
    if where == "project":
        path = tmp_path / "project"
        path.mkdir()
        (path / "README.md").write_text("an unrelated project")
        fix = f"run `mnem init {path}`"
    else:
        outer = tmp_path / "outer"
        mnem("init", str(outer))
        path = outer / "memroy"
        fix = f"is inside the store at {outer}"
    with (tmp_path / "server.log").open("w+") as errlog:
        async with connect("stdio", path, errlog=errlog) as client:
            assert (await fail(client, "recall")).startswith("no_store: ")
        errlog.seek(0)
        log = errlog.read()
    assert f"the store at {path} (from --store) cannot be used" in log and fix in log, log
    assert not (path / ".mnem").exists()
