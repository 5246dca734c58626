"""A store ``mnem-mcp`` cannot serve is refused with its real reason and a fix that works, alike everywhere.

``mnem-mcp --store PATH`` creates a missing store on first use only where
nothing else is (``binding``).  Where it cannot (a path inside another
store, a folder holding files, a file, a folder whose parent is missing or
not writable, a PostgreSQL store without ``--create``), start-up logs why
and promises that every tool call answers with that error until it is
fixed.  Here a real ``mnem-mcp`` runs over stdio for each case, and:

* the tool call's text, a resource read's message and the log's line are
  one text, naming the reason (not the engine's generic "create one with
  ``mnem init``", which fails inside a store);
* the fix it names works: where it is a command (``mnem init``, making the
  missing folder, giving the folder to the server's user), the same server's
  next call succeeds; where it is another path, a server given that path
  serves.

Over HTTP a remote client is never told the server's paths: it gets the
code, words of its own and an incident id, which the server's log names
beside the whole reason.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TextIO

import pg_stores
import pytest
from conftest import run_mnem
from http_support import HttpServer
from http_support import connect as connect_http
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_support import call, connect, fail

import mnem_bridge
from mnem_langgraph import MnemosyneSaver, MnemosyneStore

pytestmark = pytest.mark.anyio

#: What start-up logs before the error that every call will answer with.
PROMISE = "every tool call will answer with this error until it is fixed:\n"


def promised(log: str) -> str:
    """The error start-up's log line promises every call will answer with."""
    assert PROMISE in log, log
    return log.split(PROMISE, 1)[1].split("\nmnem-mcp: ", 1)[0].rstrip("\n")


@asynccontextmanager
async def served(store: Path | str, errlog: TextIO) -> AsyncIterator[Client]:
    """A real ``mnem-mcp --store STORE`` over stdio, logging to ``errlog``."""
    async with connect("stdio", store, errlog=errlog) as client:
        yield client


async def refusals(client: Client) -> tuple[str, str, str]:
    """What a tool call, a second tool call and a resource read answer."""
    first = await fail(client, "recall", id="plan")
    second = await fail(client, "remember", id="plan", content="pro")
    with pytest.raises(MCPError) as read:
        await client.read_resource("mnem://log")
    return first, second, str(read.value)


async def assert_refused_alike(client: Client, errlog: TextIO, *, says: list[str]) -> str:
    """Every call and read answers the error start-up logged, which says each of ``says``; that text."""
    answers = await refusals(client)
    errlog.seek(0)
    logged = promised(errlog.read())
    assert set(answers) == {logged}, (answers, logged)
    for part in says:
        assert part in logged, (part, logged)
    assert "create one with `mnem init" not in logged  # the engine's generic advice, wrong for these paths
    return logged


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    with (tmp_path / "server.log").open("w+") as log:
        yield log


async def test_a_path_inside_a_store_names_that_store_and_serving_it_works(tmp_path: Path,
                                                                           errlog: TextIO) -> None:
    outer = tmp_path / "s"
    assert run_mnem("init", str(outer)).code == 0
    inner = outer / "sub"
    async with served(inner, errlog) as client:
        text = await assert_refused_alike(client, errlog, says=[
            f"no_store: no mnemosyne store at {inner}: {inner} is inside the store at {outer}",
            f"to use that store pass {outer}, for a new store pass a path outside it"])
    assert "rerun:" not in text  # nothing ran that a user could rerun: the path was refused
    assert not inner.exists()
    refused_init = run_mnem("init", str(inner))  # what the old answer advised, and why it was wrong
    assert refused_init.code != 0 and "a store already exists" in refused_init.err
    async with served(outer, errlog) as client:  # the fix: --store the enclosing store
        assert await call(client, "recall") == {}


async def test_a_folder_of_files_names_them_and_mnem_init_there_serves_the_next_call(tmp_path: Path,
                                                                                   errlog: TextIO) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("not a store")
    async with served(folder, errlog) as client:
        text = await assert_refused_alike(client, errlog, says=[
            f"no_store: no mnemosyne store at {folder}: {folder} holds files (notes.txt) but no store",
            f"run `mnem init {folder}`"])
        command = re.search(r"run `(mnem init [^`]+)`", text)
        assert command is not None
        assert run_mnem(*shlex.split(command[1])[1:]).code == 0  # the fix, as the message words it
        assert (await call(client, "remember", id="plan", content="pro"))["commit"]
    assert (folder / "notes.txt").read_text() == "not a store"


async def test_a_file_is_named_a_file_and_a_folder_serves(tmp_path: Path, errlog: TextIO) -> None:
    file = tmp_path / "memory.json"
    file.write_text("{}")
    async with served(file, errlog) as client:
        await assert_refused_alike(client, errlog, says=[
            f"no_store: no mnemosyne store at {file}: {file} is a file, not a store",
            "pass the folder that holds (or should hold) the store"])
    assert file.read_text() == "{}"
    async with served(tmp_path / "memory", errlog) as client:  # the fix: a folder that should hold the store
        assert (await call(client, "remember", id="plan", content="pro"))["commit"]


async def test_a_missing_parent_folder_is_named_and_making_it_serves_the_next_call(tmp_path: Path,
                                                                                 errlog: TextIO) -> None:
    store = tmp_path / "typo" / "memory"
    async with served(store, errlog) as client:
        await assert_refused_alike(client, errlog, says=[
            f"no_store: no mnemosyne store at {store}: {store.parent} does not exist",
            f"create the folder or run `mnem init {store}`"])
        store.parent.mkdir()  # the fix's first form: the store is then created on the next call
        assert (await call(client, "remember", id="plan", content="pro"))["commit"]
        assert await call(client, "recall", id="plan") is not None
    errlog.seek(0)
    assert f"created a new store at {store}" in errlog.read()


def mount(*argv: str | Path) -> None:
    done = subprocess.run(["mount", *map(str, argv)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"mount {argv}: {done.stderr}"


@pytest.fixture
def unwritable(tmp_path: Path) -> Iterator[tuple[Path, Callable[[], None]]]:
    """A folder nothing can be created in by this user, and the fix that lets it.

    Root writes anywhere a mode forbids, so for root (CI and this machine; the suite's mount tests need it too)
    the folder is a read-only bind mount of itself, and the fix remounts it read-write; for anyone else it is
    mode 0555, and the fix gives it 0755.
    """
    folder = tmp_path / "srv"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield folder, lambda: folder.chmod(0o755)
        finally:
            folder.chmod(0o755)
        return
    mount("--bind", folder, folder)
    try:
        mount("-o", "remount,bind,ro", folder)
        yield folder, lambda: mount("-o", "remount,bind,rw", folder)
    finally:
        done = subprocess.run(["umount", str(folder)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr  # the server has ended: nothing holds the mount


async def test_a_parent_folder_the_server_cannot_write_is_named_and_the_fix_serves_the_next_call(
        unwritable: tuple[Path, Callable[[], None]], errlog: TextIO) -> None:
    parent, make_writable = unwritable
    store = parent / "memory"
    async with served(store, errlog) as client:
        text = await assert_refused_alike(client, errlog, says=[
            f"store_io: creating {store}: ",
            f"no store could be created at {store}: pass a folder you can write to, or have someone who can "
            f"write there run `mnem init {store}`"])
        assert text.count("\nrerun: ") == 1  # the mnem init that failed, to see it fail again
        make_writable()  # the fix: the server's user may now write there
        assert (await call(client, "remember", id="plan", content="pro"))["commit"]
    assert (store / ".mnem").is_dir()


def test_the_langgraph_adapters_name_the_same_fix_for_a_folder_they_cannot_write(
        unwritable: tuple[Path, Callable[[], None]]) -> None:
    """``MnemosyneStore`` and ``MnemosyneSaver`` create a store on first use by the same rule (the bridge's)."""
    parent, make_writable = unwritable
    store = parent / "memory"
    for adapter in (MnemosyneStore, MnemosyneSaver):
        with pytest.raises(mnem_bridge.StoreIoError) as refused:
            adapter(store)
        assert f"no store could be created at {store}: pass a folder you can write to" in str(refused.value)
    make_writable()
    with MnemosyneStore(store) as opened:
        assert opened.history() == []


async def test_a_postgresql_store_that_does_not_exist_names_the_stores_there_and_mnem_init_serves(
        errlog: TextIO) -> None:
    real = pg_stores.new_url("real")
    run_mnem("init", real)
    typo = real + "x"
    name = typo.rsplit("store=", 1)[1]
    async with served(typo, errlog) as client:
        text = await assert_refused_alike(client, errlog, says=[
            f"no_store: no mnemosyne store named '{name}'", real.rsplit("store=", 1)[1], "`mnem-mcp --create`"])
        command = re.search(r"run `(mnem init [^`]+)`", text)
        assert command is not None
        assert run_mnem(*shlex.split(command[1])[1:]).code == 0  # the fix, as the message words it
        assert (await call(client, "remember", id="plan", content="pro"))["commit"]


async def test_over_http_a_client_gets_no_path_and_an_incident_the_log_explains(tmp_path: Path) -> None:
    outer = tmp_path / "s"
    assert run_mnem("init", str(outer)).code == 0
    inner = outer / "sub"
    server = HttpServer(inner, ["--auth", "none"])
    try:
        async with connect_http(server.url) as client:
            told = await fail(client, "recall")
    finally:
        server.stop()
    log = server.stderr()
    assert str(tmp_path) not in told and "rerun:" not in told, told
    found = re.fullmatch(r"no_store: (.+); if it persists, tell the server's operator \(incident ([0-9a-f]{8})\)",
                         told)
    assert found is not None, told
    reason = f"{inner} is inside the store at {outer}, and no store is created inside another"
    assert reason in promised(log)
    explained = log.split(f"(incident {found[2]})", 1)[0].rsplit("mnem-mcp: ", 1)[1]
    assert reason in explained, log  # the operator reads why, under the incident the client quotes
