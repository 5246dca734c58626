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
import pytest
from conftest import MNEM, run_mnem
from mcp import MCPError
from mcp_support import connect

import mnem_bridge
from mnem_langgraph import MnemosyneStore

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
