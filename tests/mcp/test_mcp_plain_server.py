"""The server as plain typed tools: ``call_tool`` with no session, strict schemas, short coded errors.

Every tool is driven twice: through ``MCPServer.call_tool(name, arguments)``
with no client session (as upstream mnem-mcp's tests drive its server), and
through a real in-process client over the protocol.  Both must give the same
results and the same coded error texts: a failure raises ``ToolError`` from
``call_tool`` (as the SDK does for any tool, and as upstream's tests expect),
and a session answers it as an ``isError`` result of the same text.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from conftest import run_mnem
from mcp import MCPError
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import INVALID_PARAMS, CallToolResult
from mcp_support import call, connect, fail

from mnem_mcp import TOOLS, build_server
from mnem_mcp.server import MnemServer
from mnem_store.bisect import INCLUDE_ROOT

pytestmark = pytest.mark.anyio

HEX = re.compile(r"[0-9a-f]{64}")


@pytest.fixture
async def server(store: Path) -> AsyncIterator[MnemServer]:
    """A server over ``store`` with every tool, called without any session; its ``mnem`` worker closed after."""
    built = build_server(pg_stores.address(store), tools="all")
    lifespan = built.settings.lifespan
    assert lifespan is not None
    async with lifespan(built):  # what a session runs around its calls: it ends the mnem worker
        yield built


async def ok(server: MnemServer, tool: str, **arguments: Any) -> Any:
    """A direct call's result: the JSON of its text (an object is also its structured content)."""
    result = await server.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    assert not result.is_error, result.content[0].text
    value = json.loads(result.content[0].text)
    assert result.structured_content == ({"result": value} if isinstance(value, list) else value)
    return value


async def refused(server: MnemServer, tool: str, **arguments: Any) -> str:
    """A direct call that must fail: the ``ToolError`` it raises, as with any ``MCPServer`` tool."""
    with pytest.raises(ToolError) as raised:
        await server.call_tool(tool, arguments)
    return str(raised.value)


async def test_every_tool_works_through_call_tool_without_a_session(server: MnemServer, store: Path) -> None:
    first = (await ok(server, "remember", id="plan", content="enterprise", source="ticket-1"))["commit"]
    pro = (await ok(server, "revise", id="plan", content="pro", source="note-2"))["commit"]
    batch = (await ok(server, "remember_many", items=[{"id": "seats", "content": 240}, {"id": "owner", "content": 1}]))
    assert (await ok(server, "recall", id="plan"))["content"] == "pro"
    assert (await ok(server, "recall_at", commit=first))["plan"]["content"] == "enterprise"
    assert [c["id"] for c in await ok(server, "history", limit=3)] == [batch["commit"], pro, first]
    assert (await ok(server, "why", id="plan"))["commit"] == pro
    assert (await ok(server, "when_did", id="plan", equals="pro"))["commit"] == pro
    assert (await ok(server, "whats_new", commit=pro)) == {"plan": "modified"}
    assert HEX.fullmatch((await ok(server, "forget", id="owner"))["commit"])
    assert await ok(server, "branch", name="side") == {"branch": "side"}
    assert await ok(server, "switch", target="side") == {"head": "ref: side"}
    side = (await ok(server, "remember", id="plan", content="team"))["commit"]
    assert await ok(server, "switch", target="main") == {"head": "ref: main"}
    assert await ok(server, "merge", theirs="side") == {"status": "fast-forwarded", "commit": side, "conflicts": []}
    undo = await ok(server, "revert", commit=side, dry_run=True)
    assert undo["commit"] is None and undo["reverted"][0]["restored"]["content"] == "pro"
    called = {"remember", "revise", "remember_many", "recall", "recall_at", "history", "why", "when_did",
              "whats_new", "forget", "branch", "switch", "merge", "revert"}
    assert called == {spec.name for spec in TOOLS}

    # Failures come back the same way: coded, short, by type.
    assert (await refused(server, "why", id="ghost")).startswith('invalid_ref: blame: "ghost" is not in memory')
    assert await refused(server, "remember", id="x", content=1, sources="ticket") == (
        "usage: remember: sources: unknown argument "
        "(remember takes id, content, source, step, observation, tool_call, note, summary, event_time)")
    assert await refused(server, "nope") == "usage: Unknown tool: nope"


async def test_call_tool_and_a_client_session_give_the_same_answers(server: MnemServer, store: Path) -> None:
    await ok(server, "remember", id="plan", content="pro")
    async with connect("in-process", pg_stores.address(store), tools="all") as client:
        for tool, arguments in (("recall", {}), ("recall", {"id": "plan"}), ("recall", {"id": "ghost"}),
                                ("history", {}), ("why", {"id": "plan"}),
                                ("when_did", {"id": "plan", "present": True, "include_root": True})):
            assert await ok(server, tool, **arguments) == await call(client, tool, **arguments)
        for tool, arguments in (("why", {"id": "ghost"}), ("remember", {"id": "x"}), ("recall", {"idd": "x"}),
                                ("when_did", {"id": "plan"}), ("nope", {})):
            assert await refused(server, tool, **arguments) == await fail(client, tool, **arguments)


async def test_every_input_schema_refuses_unknown_arguments(store: Path) -> None:
    async with connect("in-process", pg_stores.address(store), tools="all") as client:
        listed = (await client.list_tools()).tools
        assert len(listed) == len(TOOLS)
        for tool in listed:
            assert tool.input_schema["additionalProperties"] is False, tool.name
            if tool.name in ("recall", "recall_at"):  # a node, null or {id: node}: no one object schema fits
                assert tool.output_schema is None
            else:
                assert tool.output_schema is not None and tool.output_schema["type"] == "object", tool.name
        (many,) = [tool for tool in listed if tool.name == "remember_many"]
        item = many.input_schema["$defs"]["RememberItem"]
        assert item["additionalProperties"] is False

        before = await call(client, "history")
        sources = await fail(client, "remember", id="plan", content="pro", sources="ticket-1")  # a typo'd source
        assert sources.startswith("usage: remember: sources: unknown argument (remember takes id, content, source")
        assert await call(client, "history") == before  # nothing written without its provenance
        assert (await fail(client, "recall", id="plan", at="main")).startswith("usage: recall: at: unknown argument")


async def test_error_texts_are_short_and_coded_by_type(store: Path) -> None:
    async with connect("in-process", pg_stores.address(store), tools="all") as client:
        await call(client, "remember", id="plan", content="pro")
        texts = [
            await fail(client, "why", id="ghost"),
            await fail(client, "forget", id="ghost"),
            await fail(client, "recall_at", commit="nowhere"),
            await fail(client, "switch", target="nowhere"),
            await fail(client, "remember"),
            await fail(client, "history", limit="many"),
            await fail(client, "merge", theirs="main", strategy="mine"),
            await fail(client, "remember_many", items=[]),
            await fail(client, "when_did", id="plan", present=True, good="nowhere"),
        ]
    for text in texts:
        assert re.match(r"(invalid_ref|usage): ", text), text
        assert not re.match(r"invalid_ref: invalid ref: ", text), text
        assert "Error executing tool" not in text and "pydantic" not in text and "http" not in text, text
        assert "validation error" not in text and "input_value" not in text, text
        assert len(text.partition("\nrerun: ")[0]) < 300, text
    assert texts[4] == "usage: remember: id: required; content: required"
    assert texts[5] == "usage: history: limit: Input should be a valid integer, unable to parse string as an integer"
    assert texts[7] == "usage: remember_many: items: List should have at least 1 item after validation, not 0"


async def test_when_did_answers_the_first_commit_only_with_include_root(store: Path) -> None:
    async with connect("in-process", pg_stores.address(store)) as client:
        root = (await call(client, "remember", id="plan", content="pro", source="ticket-1"))["commit"]
        # one commit: upstream's bisect says "good and bad are the same commit"; include_root lets it answer
        same = await fail(client, "when_did", id="plan", equals="pro")
        assert same.startswith("invalid_ref: bisect: good and bad are the same commit"), same
        only = await call(client, "when_did", id="plan", equals="pro", include_root=True)
        assert only["commit"] == root and only["blame"]["node"]["provenance"]["source"] == "ticket-1"
        later = (await call(client, "remember", id="seats", content=3))["commit"]
        # held at the first commit: upstream's bisect says "the predicate is already true at good"
        held = await fail(client, "when_did", id="plan", present=True)
        assert held.startswith(f"invalid_ref: bisect: the predicate is already true at good ({root})"), held
        assert (await call(client, "when_did", id="plan", present=True, include_root=True))["commit"] == root
        assert (await call(client, "when_did", id="seats", present=True))["commit"] == later  # a real search
        ghost = await call(client, "when_did", id="ghost", absent=True, include_root=True)
        assert ghost == {"commit": root, "blame": None}
        # an explicit good keeps upstream's precondition; a condition false now is still refused
        at_good = await fail(client, "when_did", id="plan", present=True, good=root)
        assert at_good.startswith(f"invalid_ref: bisect: the predicate is already true at good ({root})")
        not_now = await fail(client, "when_did", id="plan", equals="team", include_root=True)
        assert not_now.startswith("invalid_ref: bisect: the predicate is false at bad")
        both = await fail(client, "when_did", id="plan", present=True, good=root, include_root=True)
        assert both.startswith("usage: "), both


def test_mnem_bisect_include_root_is_an_extension_plain_bisect_names_where_it_applies(store: Path) -> None:
    assert run_mnem("add", "plan", "pro", cwd=store).code == 0
    assert run_mnem("commit", "-m", "one", "--author", "t", cwd=store).code == 0
    root = json.loads(run_mnem("--json", "log", cwd=store).out)[0]["id"]

    same = run_mnem("bisect", "--node", "plan", "--present", cwd=store)
    assert (same.code, same.err) == (1, f"Error: invalid ref: bisect: good and bad are the same commit{INCLUDE_ROOT}\n")
    found = run_mnem("--json", "bisect", "--node", "plan", "--present", "--include-root", cwd=store)
    assert found.code == 0 and json.loads(found.out)["commit"] == root

    assert run_mnem("add", "seats", "--content-json", "3", cwd=store).code == 0
    assert run_mnem("commit", "-m", "two", "--author", "t", cwd=store).code == 0
    true_at_good = run_mnem("bisect", "--node", "plan", "--present", cwd=store)
    assert (true_at_good.code, true_at_good.err) == (
        1, f"Error: invalid ref: bisect: the predicate is already true at good ({root}){INCLUDE_ROOT}\n")
    text = run_mnem("bisect", "--node", "plan", "--equals", '"pro"', "--include-root", cwd=store)
    assert text.code == 0 and text.out.startswith(root[:12]) and "plan set here" in text.out
    false_at_bad = run_mnem("--json", "bisect", "--node", "plan", "--absent", "--include-root", cwd=store)
    assert false_at_bad.code == 1
    assert "the predicate is false at bad" in json.loads(false_at_bad.out)["error"]["message"]
    both = run_mnem("bisect", "--node", "plan", "--present", "--include-root", "--good", root, cwd=store)
    assert (both.code, both.err) == (2, "error: the argument '--include-root' cannot be used with '--good <GOOD>'\n")


async def test_merge_records_the_same_author_as_every_other_write(store: Path) -> None:
    async with connect("in-process", pg_stores.address(store), tools="all") as client:
        await call(client, "remember", id="plan", content="enterprise")
        await call(client, "branch", name="side")
        await call(client, "remember", id="seats", content=1)
        await call(client, "switch", target="side")
        await call(client, "remember", id="plan", content="team")
        await call(client, "switch", target="main")
        merged = await call(client, "merge", theirs="side")
        assert merged["status"] == "merged"
        commits = await call(client, "history")
        assert commits[0]["id"] == merged["commit"] and len(commits[0]["parents"]) == 2
        assert {c["author"] for c in commits} == {"agent"}


async def test_only_write_tools_say_that_writing_an_id_again_revises_it(store: Path) -> None:
    async with connect("in-process", pg_stores.address(store), tools="all") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    revising = {name for name, tool in listed.items() if "revises it" in json.dumps(tool.input_schema)}
    assert revising == {"remember", "revise", "remember_many"}
    for name in ("forget", "why", "when_did"):
        assert listed[name].input_schema["properties"]["id"]["description"].startswith("The id of a fact you ")
    when_did = listed["when_did"]
    assert set(when_did.input_schema["properties"]) == {"id", "equals", "absent", "present", "good", "include_root"}
    assert when_did.input_schema["required"] == ["id"]
    assert "include_root" in (when_did.description or "")


async def test_a_node_id_with_a_slash_is_percent_encoded_in_its_uri(store: Path) -> None:
    async with connect("in-process", pg_stores.address(store)) as client:
        await call(client, "remember", id="team/lead", content={"name": "alice"})
        read = await client.read_resource("mnem://memory/team%2Flead")
        assert json.loads(read.contents[0].text)["content"] == {"name": "alice"}
        with pytest.raises(MCPError) as raw:  # a raw '/' is a path separator: no such resource
            await client.read_resource("mnem://memory/team/lead")
        assert raw.value.error.code == INVALID_PARAMS
        percent = await call(client, "remember", id="100%", content=1)
        assert percent and json.loads((await client.read_resource("mnem://memory/100%25")).contents[0].text)["id"] == (
            "100%")


async def test_a_tool_added_or_removed_after_the_first_call_is_found_or_refused(server: MnemServer) -> None:
    """The server lists its tools' argument names once, and anew after ``add_tool`` or ``remove_tool``."""
    await ok(server, "recall", id="x")

    async def ping(word: str) -> str:
        return word

    server.add_tool(ping)
    added = await server.call_tool("ping", {"word": "hello"})
    assert isinstance(added, CallToolResult) and not added.is_error
    assert (await refused(server, "ping", wrod="hello")).startswith("usage: ping: ")
    server.remove_tool("ping")
    assert await refused(server, "ping", word="hello") == "usage: Unknown tool: ping"
