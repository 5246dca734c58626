"""Store location is safe: an explicit path is taken as given, and discovery never adopts another user's store.

With a store at ``A/`` and an empty folder ``A/sub/``:

* every way of naming a store explicitly (``mnem -C``, ``$MNEM_STORE``,
  ``mnem_bridge.open(exact=True)``, ``mnem-mcp --store`` / ``build_server``,
  ``MnemosyneStore(path)``) means *that* folder: ``A/sub`` is no store, so
  the call fails with ``no_store`` instead of quietly serving ``A``.  (MCP and
  LangGraph may later create a new store there instead; for those two the
  tests only demand that ``A`` is neither read nor changed);
* discovery walks up: from the working directory (``cd A/sub; mnem status``
  finds ``A``), and in the SDK's ``mnem_bridge.open(A/sub)``, as upstream's
  ``mnem.open`` and git do, except to a store that belongs to another user,
  which is refused with an error naming it and how to use it anyway
  (explicitly, which is trusted).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson
import pg_stores
import pytest
from conftest import MNEM, run_mnem
from mcp import Client, MCPError, StdioServerParameters, stdio_client
from mcp_support import MNEM_MCP, connect, server_env

import mnem_bridge
from mnem_langgraph import MnemosyneStore
from mnem_mcp.binding import StoreLocation, locate_store

#: Content only the parent store holds: seeing it anywhere means the parent store was served.
SECRET = "secret-of-the-parent-store"
NOBODY = 65534


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Any]:
    """A store at ``A`` with one commit, an empty ``A/sub``, and an unrelated working directory."""
    parent = tmp_path / "A"
    assert run_mnem("init", str(parent)).code == 0
    written = run_mnem("--json", "write", "-m", "parent's memory", "--author", "owner", "--time", "1000",
                       cwd=parent, input=orjson.dumps({"put": [{"id": "facts:plan", "content": {"tier": SECRET}}]}))
    assert written.code == 0, written.err
    (parent / "sub").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return {"A": parent, "sub": parent / "sub", "elsewhere": elsewhere, "tip": written.json["commit"]["id"],
            "before": contents(parent)}


def contents(root: Path) -> tuple[Any, Any]:
    """What a store holds, read through the CLI with the exact root: its log and its memory."""
    log = run_mnem("-C", str(root), "--json", "log", cwd=root.parent)
    show = run_mnem("-C", str(root), "--json", "show", cwd=root.parent)
    assert log.code == 0 and show.code == 0, log.out + show.out
    return log.json, show.json


def assert_parent_untouched(tree: dict[str, Any]) -> None:
    assert contents(tree["A"]) == tree["before"], "the parent store at A was changed"


def assert_no_store(result, where: Path) -> None:
    assert result.code == 1, f"served a store for {where}: {result.out}"
    error = orjson.loads(result.out)["error"]
    assert error["code"] == "no_store", error
    assert "Traceback" not in result.err


def leaked(text: str, tree: dict[str, Any]) -> bool:
    """Whether ``text`` carries anything read from the parent store."""
    return SECRET in text or tree["tip"] in text


# --------------------------------------------------------------------------- (a) explicit paths never walk up
def test_dash_c_names_exactly_that_folder(tree) -> None:
    """``mnem -C A/sub`` (a capital C) means that folder: no store there is ``no_store``, not ``A``'s store."""
    sub = str(tree["sub"])
    assert_no_store(run_mnem("-C", sub, "--json", "status", cwd=tree["elsewhere"]), tree["sub"])
    assert_no_store(run_mnem("-C", sub, "--json", "show", cwd=tree["elsewhere"]), tree["sub"])
    written = run_mnem("-C", sub, "--json", "write", "-m", "stray", "--time", "2000", cwd=tree["elsewhere"],
                       input=orjson.dumps({"put": [{"id": "stray", "content": 1}]}))
    assert_no_store(written, tree["sub"])
    assert_parent_untouched(tree)


def test_a_path_inside_a_store_is_refused_naming_that_store_not_an_init_that_would_fail(tree) -> None:
    """The fix named is the enclosing store, not ``mnem init A/sub``, which refuses a store inside another."""
    sub, parent = str(tree["sub"]), str(tree["A"])
    for where in (tree["sub"], tree["sub"] / "deeper"):
        error = orjson.loads(run_mnem("-C", str(where), "--json", "status", cwd=tree["elsewhere"]).out)["error"]
        assert error["code"] == "no_store" and f"inside the store at {parent}" in error["message"], error
        assert f"mnem -C {parent}" in error["message"] and "mnem init" not in error["message"]
    assert run_mnem("init", sub).code != 0  # what the old advice said to run, refused
    client = mnem_bridge.Mnem(MNEM)
    try:
        with pytest.raises(mnem_bridge.NoStoreError, match=f"inside the store at {parent}"), \
                mnem_bridge.open(tree["sub"], client=client, exact=True):
            pass
    finally:
        client.close()
    assert_parent_untouched(tree)


def test_mnem_store_names_exactly_that_folder(tree) -> None:
    env = {"MNEM_STORE": str(tree["sub"])}
    assert_no_store(run_mnem("--json", "status", cwd=tree["elsewhere"], env=env), tree["sub"])
    written = run_mnem("--json", "write", "-m", "stray", "--time", "2000", cwd=tree["elsewhere"], env=env,
                       input=orjson.dumps({"put": [{"id": "stray", "content": 1}]}))
    assert_no_store(written, tree["sub"])
    assert_parent_untouched(tree)


def test_bridge_open_exact_names_exactly_that_folder(tree) -> None:
    client = mnem_bridge.Mnem(MNEM)
    try:
        with pytest.raises(mnem_bridge.NoStoreError) as caught, \
                mnem_bridge.open(tree["sub"], client=client, exact=True) as store:
            served = (store.root, store.head_commit(), store.working_memory())
            pytest.fail(f"mnem_bridge.open({tree['sub']}, exact=True) served {served}")
        assert caught.value.code == "no_store"
    finally:
        client.close()
    assert_parent_untouched(tree)


@pytest.mark.anyio
async def test_mcp_server_store_never_serves_the_parent(tree) -> None:
    seen: list[str] = []
    async with connect("in-process", tree["sub"]) as client:
        for tool, arguments in (("history", {}), ("recall", {}), ("recall", {"id": "facts:plan"}),
                                ("remember", {"id": "probe", "content": "written through A/sub"})):
            result = await client.call_tool(tool, arguments)
            seen.append(f"{tool}: error={result.is_error} {result.content!r} {json.dumps(result.structured_content)}")
        for uri in ("mnem://memory", "mnem://log", "mnem://memory/facts:plan"):
            try:
                read = await client.read_resource(uri)
            except MCPError as exc:
                seen.append(f"{uri}: {exc.error.message}")
            else:
                seen.append(f"{uri}: {[c.text for c in read.contents]}")
    assert not [line for line in seen if leaked(line, tree)], "\n".join(seen)
    assert_parent_untouched(tree)


def test_langgraph_store_never_serves_the_parent(tree) -> None:
    try:
        store = MnemosyneStore(tree["sub"], author="tester", mnem=MNEM)
    except mnem_bridge.NoStoreError:
        assert_parent_untouched(tree)
        return
    seen: list[str] = []
    with store:
        assert store.root != tree["A"], "MnemosyneStore(A/sub) opened the parent store"
        for what, action in (
            ("get", lambda: store.get(("facts",), "plan")),
            ("search", lambda: store.search(("facts",))),
            ("history", lambda: store.history()),
            ("put", lambda: store.put(("facts",), "probe", {"from": "A/sub"})),
        ):
            try:
                seen.append(f"{what}: {action()!r}")
            except mnem_bridge.MnemError as exc:
                seen.append(f"{what}: {exc.code}")
    assert not [line for line in seen if leaked(line, tree)], "\n".join(seen)
    assert_parent_untouched(tree)


def test_the_exact_root_and_its_mnem_folder_are_accepted(tree) -> None:
    for args, env in (
        (("-C", str(tree["A"])), None),
        (("-C", str(tree["A"] / ".mnem")), None),
        ((), {"MNEM_STORE": str(tree["A"])}),
    ):
        result = run_mnem(*args, "--json", "status", cwd=tree["elsewhere"], env=env)
        assert result.code == 0, (args, env, result.out, result.err)
        assert result.json["commit"] == tree["tip"]
    assert run_mnem("-C", str(tree["A"] / ".mnem"), "status", cwd=tree["elsewhere"]).code == 0
    client = mnem_bridge.Mnem(MNEM)
    try:
        assert mnem_bridge.open(tree["A"], client=client).head_commit() == tree["tip"]
    finally:
        client.close()


# --------------------------------------------------------------------------- (b) discovery walks up
def test_discovery_from_the_working_directory_walks_up(tree) -> None:
    result = run_mnem("--json", "status", cwd=tree["sub"])
    assert result.code == 0, result.out + result.err
    assert result.json["commit"] == tree["tip"]
    assert run_mnem("status", cwd=tree["sub"]).code == 0


def test_bridge_open_walks_up_to_the_enclosing_store_as_upstreams_sdk(tree) -> None:
    """Upstream's ``mnem.open(path)`` opens the nearest store at or above ``path``; so does ``mnem_bridge.open``."""
    client = mnem_bridge.Mnem(MNEM)
    try:
        deeper = tree["sub"] / "notes" / "2026"
        deeper.mkdir(parents=True)
        for start in (tree["sub"], deeper, tree["A"] / ".mnem"):
            with mnem_bridge.open(start, client=client) as store:
                assert store.root == tree["A"], start
                assert store.head_commit() == tree["tip"]
        with pytest.raises(mnem_bridge.NoStoreError) as caught:
            mnem_bridge.open(tree["elsewhere"], client=client)
        assert caught.value.code == "no_store"
    finally:
        client.close()
    assert_parent_untouched(tree)


# --------------------------------------------------------------------------- (c) another user's store
def chown_tree(root: Path, uid: int) -> None:
    os.chown(root, uid, uid, follow_symlinks=False)
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


def test_discovery_refuses_another_users_store_but_an_explicit_path_is_trusted(tree) -> None:
    # Giving the store to another user needs root, as the suite's mount tests do (CI and this machine run as root).
    parent = tree["A"]
    chown_tree(parent, NOBODY)
    try:
        assert (parent / ".mnem").stat().st_uid == NOBODY != os.geteuid()
        as_json = run_mnem("--json", "status", cwd=tree["sub"])
        as_text = run_mnem("status", cwd=tree["sub"])
        assert as_json.code == 1, f"discovery adopted another user's store: {as_json.out}"
        assert as_text.code == 1
        message = orjson.loads(as_json.out)["error"]["message"]
        for text in (message, as_text.err):
            assert str(parent) in text, text
            assert "another user" in text.lower(), text
            assert any(fix in text for fix in ("-C", "--store", "MNEM_STORE")), text
        assert "Traceback" not in as_json.err + as_text.err
        assert as_text.out == ""

        for args, env in ((("-C", str(parent)), None), ((), {"MNEM_STORE": str(parent)})):
            explicit = run_mnem(*args, "--json", "status", cwd=tree["elsewhere"], env=env)
            assert explicit.code == 0, (args, env, explicit.out, explicit.err)
            assert explicit.json["commit"] == tree["tip"]

        client = mnem_bridge.Mnem(MNEM)
        try:
            with pytest.raises(mnem_bridge.NoStoreError) as caught:
                mnem_bridge.open(tree["sub"], client=client)
            assert str(parent) in caught.value.message and "another user" in caught.value.message
            assert f"mnem_bridge.open({str(parent)!r})" in caught.value.message  # the fix, for a store you trust
            with mnem_bridge.open(parent, client=client) as store:
                assert store.head_commit() == tree["tip"]
        finally:
            client.close()
        assert_parent_untouched(tree)
    finally:
        chown_tree(parent, os.geteuid())


# --------------------------------------------------------------------------- (c) stores are created only where meant
@pytest.mark.anyio
async def test_a_relative_store_from_a_client_started_in_the_root_is_refused_naming_the_absolute_path(
        tmp_path: Path) -> None:
    """Claude Desktop starts servers in ``/``: ``--store ./agent-memory`` must not become ``/agent-memory``."""
    name = f"mnem-relative-{os.getpid()}-{tmp_path.name}"
    params = StdioServerParameters(command=MNEM_MCP, args=["--store", f"./{name}"], env=server_env(), cwd="/")
    with (tmp_path / "stderr").open("w+") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            text = (await client.call_tool("remember", {"id": "plan", "content": "pro"})).content[0].text
        errlog.seek(0)
        logged = errlog.read()
    assert not Path("/", name).exists(), "the store was created in the filesystem root"
    assert text.startswith(f"no_store: --store ./{name} is a relative path, and mnem-mcp was started in /, the "
                           "filesystem root"), text
    assert f"e.g. --store {Path.home() / name}" in text
    assert "no_store" in logged and "Traceback" not in logged


def test_store_paths_resolve_against_a_writable_working_directory_and_expand_the_home_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert locate_store("agent-memory") == StoreLocation(tmp_path / "agent-memory", "--store")
    assert locate_store(None, {"MNEM_STORE": "~/agent-memory"}) == StoreLocation(
        Path.home() / "agent-memory", "MNEM_STORE")
    monkeypatch.chdir("/")
    refused = locate_store(None, {"MNEM_STORE": "agent-memory"})
    assert refused.path == Path("/agent-memory") and refused.refused is not None
    assert refused.refused.endswith(f"e.g. MNEM_STORE={Path.home() / 'agent-memory'}")
    assert locate_store("/srv/agent-memory").refused is None  # absolute paths are taken as given anywhere


def test_a_relative_store_in_a_folder_the_user_cannot_write_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A root-owned folder for a user; for root, /proc/sys or /sys, which are read-only in a container."""
    unwritable = next(folder for folder in ("/usr", "/proc/sys", "/sys") if not os.access(folder, os.W_OK))
    monkeypatch.chdir(unwritable)
    refused = locate_store("agent-memory").refused
    assert refused is not None and refused.startswith(
        f"--store agent-memory is a relative path, and mnem-mcp was started in {unwritable}, a folder you cannot "
        "write to"), refused


@pytest.mark.anyio
async def test_a_typo_in_a_postgresql_store_name_creates_nothing_and_create_is_explicit(tmp_path: Path) -> None:
    real = pg_stores.new_url("real")
    mnem_bridge.init(real).close()
    typo = real + "x"
    shown_real = real.rsplit("store=", 1)[1]
    with pg_stores.connect(real) as conn:
        schemas = conn.execute("SELECT count(*) FROM pg_namespace").fetchone()
    async with connect("stdio", typo) as client:  # mnem-mcp --store URL: start-up does not create it
        text = (await client.call_tool("history", {})).content[0].text
    assert text.startswith(f"no_store: no mnemosyne store named '{shown_real}x'"), text
    assert shown_real in text.split("holds the stores", 1)[1] and "`mnem-mcp --create`" in text
    with pytest.raises(mnem_bridge.NoStoreError) as caught:
        MnemosyneStore(typo, mnem=MNEM)
    assert "holds the stores" in str(caught.value) and "MnemosyneStore(url, create=True)" in str(caught.value)
    with pg_stores.connect(real) as conn:
        assert conn.execute("SELECT count(*) FROM pg_namespace").fetchone() == schemas  # nothing was created

    async with connect("stdio", typo, "--create") as client:
        assert not (await client.call_tool("remember", {"id": "plan", "content": "pro"})).is_error
    made = pg_stores.new_url("made")
    store = MnemosyneStore(made, mnem=MNEM, create=True)
    try:
        store.put(("customers",), "acme", {"seats": 40})
    finally:
        store.close()
    with mnem_bridge.open(typo) as first, mnem_bridge.open(made) as second:
        assert [len(first.log()), len(second.log())] == [1, 1]


def test_a_folder_is_created_on_first_use_unless_create_is_false(tmp_path: Path) -> None:
    with pytest.raises(mnem_bridge.NoStoreError):
        MnemosyneStore(tmp_path / "not-made", mnem=MNEM, create=False)
    assert not (tmp_path / "not-made").exists()
    MnemosyneStore(tmp_path / "made", mnem=MNEM).close()
    assert (tmp_path / "made" / ".mnem").is_dir()
