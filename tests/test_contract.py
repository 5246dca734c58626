"""ADR-0016's tables, read from docs/contract.md, checked against the live server, the bridge and the store.

The tables are the user's contract: a client written from them alone must
work unchanged.  Every check here is driven by a row of docs/contract.md,
and a failure names that row, so a drift (a renamed argument, an optional
argument made required, a shape that changed) fails CI with the row it
breaks.  The tools are driven with exactly the ADR's arguments (no
extension), over stdio and through ``MCPServer.call_tool()`` with no
session; the ``BaseStore`` rows run inside a real LangGraph graph.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypedDict

import pytest
from conftest import MNEM
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from mcp.server.mcpserver.exceptions import ToolError
from mcp_support import connect

import mnem_bridge
import mnem_mcp
from mnem_bridge import agents
from mnem_langgraph import MnemosyneStore
from mnem_mcp import build_server
from mnem_mcp.errors import error_code, tool_error

CONTRACT = Path(__file__).resolve().parents[1] / "docs" / "contract.md"
HEX = re.compile(r"[0-9a-f]{64}")

Row = dict[str, str]


def tables() -> dict[str, list[Row]]:
    """Every table of docs/contract.md under its ``##`` heading (the first table of a section), as rows by column."""
    found: dict[str, list[Row]] = {}
    heading = ""
    lines = CONTRACT.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            heading = line[3:].strip()
        if line.startswith("|") and heading not in found:
            header = _cells(line)
            rows: list[Row] = []
            i += 2  # the header and its --- separator
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(header, _cells(lines[i]), strict=True)))
                i += 1
            found[heading] = rows
            continue
        i += 1
    return found


def _cells(line: str) -> list[str]:
    """A table line's cells; ``\\|`` is a literal bar inside a cell."""
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def names(cell: str) -> list[str]:
    """The code-quoted names in a cell: ``"`id`, `content`"`` is ``["id", "content"]``."""
    return re.findall(r"`([^`]+)`", cell)


TABLES = tables()
TOOLS = {names(row["tool"])[0]: row for row in TABLES["Tools"]}
RESOURCES = {names(row["URI"])[0]: row for row in TABLES["Resources"]}
SHAPES = {row["shape"]: row["JSON"] for row in TABLES["Result shapes"]}
#: Each tool's documented extra result keys (extensions beside its row's shape), by tool.
EXTRA = {names(row["tool"])[0]: set(names(row["extra key"])) for row in TABLES["Extra result keys"]}
#: The tools we add beside the ADR's, each served only with ``--tools all``.
ADDED = {names(row["tool"])[0]: row for row in TABLES["Tools we add"]}
#: The key a redacted version's node carries beside the node shape's ("A redacted version").
REDACTED = {"at", "by", "reason"}


def test_the_contract_file_has_every_adr_table() -> None:
    """The parse itself: a table lost to an edit would make the checks below vacuous."""
    assert len(TOOLS) == 13 and sum(row["set"] == "core" for row in TOOLS.values()) == 10
    assert set(RESOURCES) == {"mnem://memory", "mnem://memory/{node_id}", "mnem://log", "mnem://commit/{id}"}
    assert len(TABLES["`mnem.agents` (`mnem_bridge.agents`)"]) == 3
    assert len(TABLES["`BaseStore` mapping (`mnem_langgraph.MnemosyneStore`)"]) == 8
    assert len(TABLES["Error codes"]) == 7
    assert {row["result"] for row in [*TOOLS.values(), *RESOURCES.values()]} <= SHAPES.keys()
    assert {"why": {"author"}} == EXTRA
    assert all(TOOLS[names(row["tool"])[0]]["result"] == row["result"] for row in TABLES["Extra result keys"])


# --- result shapes ----------------------------------------------------------------------------------------------


def keys(shape: str) -> set[str]:
    """The object keys a shape's JSON column names (``{"commit", "node", "time"}``), before any remark after ``;``."""
    json_column = SHAPES[shape].split(";")[0]
    if shape in ("commit", "branch", "head"):  # {"key": "<value>"}: the key only
        json_column = json_column.split(":")[0]
    return set(re.findall(r'"([a-z_]+)"', json_column))


def conforms(shape: str, value: Any, arguments: dict[str, Any], extra: frozenset[str] = frozenset()) -> str | None:
    """Why ``value`` is not of ``shape`` (``None`` when it is); ``arguments`` pick node-or-memory's branch.

    ``extra``: the keys a tool's "Extra result keys" row allows beside the shape's own, which all stay required.
    """
    def node(v: Any) -> str | None:
        if isinstance(v, dict) and "redacted" in v:  # "A redacted version": content null, and who removed it
            if v["content"] is not None or not isinstance(v["redacted"], dict) or set(v["redacted"]) != REDACTED:
                return f"not a redacted node (content null, redacted {sorted(REDACTED)}): {v!r}"
            v = {key: value for key, value in v.items() if key != "redacted"}
        return None if isinstance(v, dict) and set(v) <= keys("node") and {"id", "content"} <= set(v) \
            else f"not a node {sorted(keys('node'))}: {v!r}"

    def exact(v: Any, shape: str) -> str | None:
        return None if isinstance(v, dict) and set(v) == keys(shape) else f"keys are not {sorted(keys(shape))}: {v!r}"

    def memory(v: Any) -> str | None:
        if not isinstance(v, dict):
            return f"not a map of nodes: {v!r}"
        return next((f"{k}: {problem}" for k, n in v.items()
                     if (problem := node(n) or (None if n["id"] == k else "id differs from its key"))), None)

    match shape:
        case "commit":
            return exact(value, shape) or (None if HEX.fullmatch(value["commit"]) else "not a commit id")
        case "node":
            return node(value)
        case "node-or-null":
            return None if value is None else node(value)
        case "memory":
            return memory(value)
        case "node-or-memory":
            return conforms("node-or-null" if "id" in arguments else "memory", value, arguments)
        case "commits":
            if not isinstance(value, list):
                return f"not a list: {value!r}"
            return next((problem for c in value if (problem := exact(c, "commits"))), None)
        case "blame":
            if isinstance(value, dict) and set(value) - keys(shape) <= extra:
                value = {key: value[key] for key in keys(shape) if key in value}
            return exact(value, shape) or node(value["node"])
        case "found":
            return exact(value, shape) or (None if value["blame"] is None else conforms("blame", value["blame"], {}))
        case "changes":
            kinds = set(re.findall(r'"([a-z]+)"', SHAPES["changes"]))
            return None if isinstance(value, dict) and set(value.values()) <= kinds else f"not {{id: kind}}: {value!r}"
        case "branch" | "head" | "merge-result":
            return exact(value, shape)
        case "commit-view":
            return exact(value, shape) or conforms("changes", value["changed"], {}) or memory(value["state"])
    return f"no check for the shape {shape!r}"


def test_every_shape_has_a_check() -> None:
    for shape in SHAPES:
        assert conforms(shape, object(), {}) != f"no check for the shape {shape!r}", shape


def test_a_redacted_node_is_a_node_with_content_null_and_who_removed_it() -> None:
    node = {"id": "plan", "content": None, "content_kind": "note", "provenance": None, "event_time": None}
    record = {"at": 1, "by": "ops", "reason": "erasure request"}
    assert conforms("node", {**node, "redacted": record}, {}) is None
    assert conforms("memory", {"plan": {**node, "redacted": record}}, {}) is None
    assert conforms("node", {**node, "content": "secret", "redacted": record}, {}) is not None
    assert conforms("node", {**node, "redacted": {"by": "ops"}}, {}) is not None


def test_a_blame_carries_the_why_rows_extra_key_and_no_other() -> None:
    blame = {"commit": "a" * 64, "node": {"id": "plan", "content": "pro"}, "time": 1}
    why = frozenset(EXTRA["why"])
    assert conforms("blame", blame, {}) is None and conforms("blame", blame, {}, why) is None
    assert conforms("blame", {**blame, "author": "agent"}, {}, why) is None
    assert conforms("blame", {**blame, "author": "agent"}, {}) is not None  # when_did's blame: the row only
    assert conforms("blame", {**blame, "author": "agent", "who": "x"}, {}, why) is not None
    assert conforms("blame", {"node": blame["node"], "time": 1, "author": "agent"}, {}, why) is not None


# --- the MCP surface as listed ----------------------------------------------------------------------------------


@pytest.fixture
async def server(sqlite_store: Path) -> AsyncIterator[Any]:
    """A server with every tool over a fresh store, called with no session; its ``mnem`` worker closed after."""
    built = build_server(sqlite_store, tools="all", mnem=MNEM)
    lifespan = built.settings.lifespan
    assert lifespan is not None
    async with lifespan(built):
        yield built


@pytest.mark.anyio
async def test_tools_list_has_every_row_with_its_arguments(server: Any, sqlite_store: Path) -> None:
    listed = {tool.name: tool for tool in await server.list_tools()}
    async with connect("in-process", sqlite_store, tools="core") as client:
        core = {tool.name for tool in (await client.list_tools()).tools}
    for name, row in TOOLS.items():
        where = f"docs/contract.md, Tools row `{name}`"
        assert name in listed, f"{where}: the server has no such tool"
        schema = listed[name].input_schema
        properties, required = set(schema.get("properties", {})), set(schema.get("required", []))
        assert required == set(names(row["required"])), f"{where}: required is {sorted(required)}"
        missing = set(names(row["ADR optional"])) - properties
        assert not missing, f"{where}: no argument {sorted(missing)}"
        assert (name in core) == (row["set"] == "core"), f"{where}: listed {'with' if name in core else 'without'} " \
                                                         "--tools all"
    for name, row in ADDED.items():
        where = f"docs/contract.md, Tools we add row `{name}`"
        assert name in listed and name not in core, f"{where}: not served with --tools all only"
        schema = listed[name].input_schema
        assert not schema.get("required") and set(schema["properties"]) == set(names(row["arguments"])), where
    extra = set(listed) - set(TOOLS) - set(ADDED)
    assert not extra, f"tools not in docs/contract.md: {sorted(extra)}"
    item = listed["remember_many"].input_schema["$defs"]["RememberItem"]
    assert set(item["required"]) == {"id", "content"}, "docs/contract.md: remember_many items need id and content"
    assert {"source", "step", "observation"} <= set(item["properties"]), "docs/contract.md: remember_many items"
    assert set(item["properties"]) == {"id", "content", *agents.ITEM_KEYS}, "an item takes every provenance key"


@pytest.mark.anyio
async def test_resources_list_has_every_row(server: Any) -> None:
    listed = {str(r.uri) for r in await server.list_resources()}
    listed |= {t.uri_template for t in await server.list_resource_templates()}
    for uri in RESOURCES:
        assert uri in listed, f"docs/contract.md, Resources row `{uri}`: not served (served: {sorted(listed)})"


# --- every tool and resource with exactly the ADR's arguments ---------------------------------------------------


class RefusedError(Exception):
    """A tool call that failed: its text, as the client read it."""


class Driver(Protocol):
    """One way a client reaches the server: a tool call's JSON value, or ``RefusedError``; a resource's JSON value."""

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any: ...

    async def read(self, uri: str) -> Any: ...


class DirectDriver:
    """``MCPServer.call_tool()`` / ``read_resource()`` with no session, as upstream's tests drive its server."""

    def __init__(self, server: Any) -> None:
        self.server = server

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        try:
            result = await self.server.call_tool(tool, arguments)
        except ToolError as error:
            raise RefusedError(str(error)) from error
        value = json.loads(result.content[0].text)
        assert result.structured_content == (value if isinstance(value, dict) else
                                             {"result": value} if isinstance(value, list) else None)
        return value

    async def read(self, uri: str) -> Any:
        (content,) = await self.server.read_resource(uri)
        return json.loads(content.content)


class ClientDriver:
    """A protocol client (here: ``mnem-mcp`` spawned over stdio)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        result = await self.client.call_tool(tool, arguments)
        if result.is_error:
            raise RefusedError(result.content[0].text)
        value = json.loads(result.content[0].text)
        assert result.structured_content == (value if isinstance(value, dict) else
                                             {"result": value} if isinstance(value, list) else None)
        return value

    async def read(self, uri: str) -> Any:
        result = await self.client.read_resource(uri)
        return json.loads(result.contents[0].text)


class Checked:
    """A driver whose every answer is checked against its row's result shape, keeping which rows were used."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.tools: set[str] = set()
        self.resources: set[str] = set()

    async def call(self, tool: str, **arguments: Any) -> Any:
        row = TOOLS[tool]
        allowed = {*names(row["required"]), *names(row["ADR optional"])}
        assert set(arguments) <= allowed, f"the test sends {tool} more than the ADR's arguments"
        value = await self.driver.call(tool, arguments)
        problem = conforms(row["result"], value, arguments, frozenset(EXTRA.get(tool, ())))
        assert problem is None, f"docs/contract.md, Tools row `{tool}` ({row['result']}): {problem}"
        self.tools.add(tool)
        return value

    async def read(self, uri: str) -> Any:
        template = next(t for t in RESOURCES if re.fullmatch(re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(t)), uri))
        value = await self.driver.read(uri)
        problem = conforms(RESOURCES[template]["result"], value, {})
        assert problem is None, f"docs/contract.md, Resources row `{template}`: {problem}"
        self.resources.add(template)
        return value


async def adr_session(m: Checked) -> None:
    """ADR-0016's running example through every tool and resource, with only the ADR's arguments."""
    c1 = (await m.call("remember", id="plan", content="enterprise", source="ticket-1", step="s1"))["commit"]
    c2 = (await m.call("revise", id="plan", content="pro", observation="obs-7", summary="tier corrected"))["commit"]
    c3 = (await m.call("remember_many", items=[{"id": "seats", "content": 240, "source": "crm"},
                                               {"id": "owner", "content": "alice"}], summary="account"))["commit"]
    assert (await m.call("recall", id="plan"))["content"] == "pro"
    assert set(await m.call("recall")) == {"plan", "seats", "owner"}
    assert await m.call("recall", id="ghost") is None
    assert (await m.call("recall_at", commit=c1))["plan"]["content"] == "enterprise"
    assert (await m.call("recall_at", commit=c1, id="plan"))["content"] == "enterprise"
    assert await m.call("recall_at", commit=c1, id="seats") is None

    blame = await m.call("why", id="plan")
    assert blame["commit"] == c2 and blame["node"]["provenance"]["observation"] == "obs-7"
    assert (await m.call("why", id="plan", at=c1))["node"]["provenance"]["source"] == "ticket-1"
    found = await m.call("when_did", id="plan", equals="pro")
    assert found["commit"] == c2 and found["blame"]["node"]["provenance"]["observation"] == "obs-7"
    assert (await m.call("when_did", id="seats", present=True))["commit"] == c3
    assert (await m.call("when_did", id="plan", equals="pro", good=c1))["commit"] == c2
    assert await m.call("whats_new", commit=c3) == {"seats": "added", "owner": "added"}

    c4 = (await m.call("forget", id="owner", summary="owner left"))["commit"]
    assert await m.call("recall", id="owner") is None
    assert await m.call("when_did", id="owner", absent=True, good=c3) == {"commit": c4, "blame": None}
    assert [c["id"] for c in await m.call("history")] == [c4, c3, c2, c1]
    assert [c["id"] for c in await m.call("history", limit=2)] == [c4, c3]

    assert await m.call("branch", name="hypothesis") == {"branch": "hypothesis"}
    assert await m.call("branch", name="from-start", start=c1) == {"branch": "from-start"}
    assert await m.call("switch", target="hypothesis") == {"head": "ref: hypothesis"}
    c5 = (await m.call("revise", id="plan", content="team"))["commit"]
    assert await m.call("switch", target="main") == {"head": "ref: main"}
    assert await m.call("merge", theirs="hypothesis") == {"status": "fast-forwarded", "commit": c5, "conflicts": []}
    await m.call("switch", target="from-start")
    await m.call("revise", id="plan", content="starter")
    await m.call("switch", target="main")
    conflicted = await m.call("merge", theirs="from-start")
    assert conflicted["status"] == "conflicts" and conflicted["commit"] is None
    assert [c["id"] for c in conflicted["conflicts"]] == ["plan"]
    assert (await m.call("merge", theirs="from-start", resolutions={"plan": "ours"}))["status"] == "merged"
    await m.call("switch", target="from-start")
    await m.call("revise", id="plan", content="free")
    await m.call("switch", target="main")
    assert (await m.call("merge", theirs="from-start", strategy="theirs"))["status"] == "merged"
    assert (await m.call("recall", id="plan"))["content"] == "free"

    head = (await m.call("history", limit=1))[0]["id"]
    assert (await m.read("mnem://memory"))["plan"]["content"] == "free"
    assert (await m.read("mnem://memory/seats"))["content"] == 240
    assert await m.read("mnem://memory/ghost") is None
    assert (await m.read("mnem://log"))[0]["id"] == head
    assert await m.read(f"mnem://commit/{c1}") == {
        "changed": {"plan": "added"}, "state": {"plan": (await m.call("recall_at", commit=c1))["plan"]}}

    with pytest.raises(RefusedError) as refused:  # upstream's test_a_failing_tool_raises_a_tool_error
        await m.call("why", id="nothing")
    assert str(refused.value).startswith("invalid_ref: ")
    assert m.tools == set(TOOLS) and m.resources == set(RESOURCES)


@pytest.mark.anyio
async def test_every_tool_and_resource_with_the_adr_arguments_through_call_tool(server: Any) -> None:
    await adr_session(Checked(DirectDriver(server)))


@pytest.mark.anyio
async def test_every_tool_and_resource_with_the_adr_arguments_over_stdio(sqlite_store: Path) -> None:
    async with connect("stdio", sqlite_store, tools="all", mnem=MNEM) as client:
        await adr_session(Checked(ClientDriver(client)))


# --- mnem.agents --------------------------------------------------------------------------------------------------


def adr_parameters(signature: str) -> list[inspect.Parameter]:
    """The parameters a row's ``(store, id, *, summary=None)`` names, with their kinds and defaults."""
    args = ast.parse(f"def f{signature}: pass").body[0].args  # type: ignore[attr-defined]
    positional = [inspect.Parameter(a.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD) for a in args.args]
    keyword = [inspect.Parameter(a.arg, inspect.Parameter.KEYWORD_ONLY, default=ast.literal_eval(d))
               for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    return positional + keyword


@pytest.mark.parametrize("row", TABLES["`mnem.agents` (`mnem_bridge.agents`)"], ids=lambda row: row["function"])
def test_agents_signatures_are_the_adr_rows(row: Row) -> None:
    (name,) = names(row["function"])
    where = f"docs/contract.md, mnem.agents row `{name}`"
    ours = inspect.signature(getattr(agents, name)).parameters
    adr = adr_parameters(row["signature"].strip("`"))
    for wanted in adr:
        assert wanted.name in ours, f"{where}: no parameter {wanted.name!r}"
        have = ours[wanted.name]
        assert have.kind == wanted.kind, f"{where}: {wanted.name} is {have.kind.description}"
        assert have.default == wanted.default, f"{where}: {wanted.name} defaults to {have.default!r}"
    positional = [p.name for p in ours.values() if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == [p.name for p in adr if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD], \
        f"{where}: positional parameters are {positional}"
    for extra in ours.keys() - {p.name for p in adr}:
        param = ours[extra]
        assert param.kind == inspect.Parameter.KEYWORD_ONLY and param.default is not inspect.Parameter.empty, \
            f"{where}: the extension {extra!r} must be keyword-only with a default"


# --- the BaseStore mapping, through a LangGraph graph -------------------------------------------------------------

NS = ("memories", "u1")


def namespace_row(store: BaseStore, sdk: mnem_bridge.Store) -> None:
    store.put(NS, "plan", {"tier": "pro"})
    node = sdk.working_node("memories:u1:plan")
    assert node is not None and node.content == {"tier": "pro"}


def key_row(store: BaseStore, sdk: mnem_bridge.Store) -> None:
    store.put(NS, "plan", {"tier": "pro"})
    item = store.get(NS, "plan")
    assert item is not None and (item.namespace, item.key) == (NS, "plan")


def value_row(store: BaseStore, sdk: mnem_bridge.Store) -> None:
    store.put(NS, "plan", {"tier": "pro", "_meta": {"source": "ticket-1"}})
    node = sdk.working_node("memories:u1:plan")
    assert node is not None and node.content == {"tier": "pro"}
    item = store.get(NS, "plan")
    assert item is not None and item.value == {"tier": "pro"}


def put_row(store: BaseStore, sdk: mnem_bridge.Store) -> None:
    before = len(sdk.log())
    store.put(NS, "plan", {"tier": "pro", "_meta": {"source": "billing-8842", "step": "s31", "observation": "o1"}})
    assert len(sdk.log()) == before + 1  # one remember, one commit
    provenance = sdk.blame("memories:u1:plan").node.provenance
    assert (provenance.source, provenance.agent_step, provenance.observation) == ("billing-8842", "s31", "o1")


def get_row(store: BaseStore, sdk: mnem_bridge.Store) -> None:
    store.put(NS, "plan", {"tier": "pro"})
    item = store.get(NS, "plan")
    node = sdk.working_node("memories:u1:plan")
    assert item is not None and node is not None and item.value == node.content
    assert store.get(NS, "ghost") is None


def delete_row(store: BaseStore, sdk: mnem_bridge.Store) -> None:
    store.put(NS, "plan", {"tier": "pro"})
    written = sdk.log()[0].id
    store.delete(NS, "plan")
    assert sdk.working_node("memories:u1:plan") is None and store.get(NS, "plan") is None
    assert sdk.changed_by(sdk.log()[0].id) == {"memories:u1:plan": "removed"}  # a forget commit
    assert "memories:u1:plan" in sdk.state_at(written)  # history keeps it


def search_row(store: BaseStore, sdk: mnem_bridge.Store) -> None:
    store.put(("docs",), "a", {"text": "The ENTERPRISE plan"})
    store.put(("docs",), "b", {"text": "pro", "seats": 240})
    store.put(("docs",), "c", {"text": "starter"})
    store.put(("other",), "d", {"text": "enterprise"})
    assert [item.key for item in store.search(("docs",), query="enterprise")] == ["a"]  # case-insensitive, scoped
    assert [item.key for item in store.search(("docs",), query="240")] == ["b"]  # stringified content
    assert [item.key for item in store.search(("docs",), query="docs:c")] == ["c"]  # the node id
    assert store.search(("docs",), query="nowhere") == []
    assert sorted(item.key for item in store.search(("docs",))) == ["a", "b", "c"]  # query omitted: the namespace


def list_namespaces_row(store: BaseStore, sdk: mnem_bridge.Store) -> None:
    store.put(("memories", "u1"), "plan", {"tier": "pro"})
    store.put(("memories", "u2"), "plan", {"tier": "team"})
    store.put(("docs",), "a", {"text": "x"})
    assert set(store.list_namespaces()) == {("memories", "u1"), ("memories", "u2"), ("docs",)}


#: Each mapping row's check, by the row's first column.
MAPPING: dict[str, Callable[[BaseStore, mnem_bridge.Store], None]] = {
    "namespace: tuple[str, ...]": namespace_row,
    "key: str": key_row,
    "value: dict": value_row,
    "put(ns, key, value)": put_row,
    "get(ns, key)": get_row,
    "delete(ns, key)": delete_row,
    "search(ns, query?)": search_row,
    "list_namespaces()": list_namespaces_row,
}
MAPPING_ROWS = TABLES["`BaseStore` mapping (`mnem_langgraph.MnemosyneStore`)"]


class Step(TypedDict):
    done: bool


@pytest.fixture
def langgraph_store(sqlite_store: Path) -> Iterator[tuple[MnemosyneStore, mnem_bridge.Store]]:
    """A ``MnemosyneStore`` with no index (the ADR's store), and the SDK's handle on the same store."""
    with MnemosyneStore(sqlite_store, mnem=MNEM) as store, mnem_bridge.open(sqlite_store, exact=True) as sdk:
        yield store, sdk


@pytest.mark.parametrize("row", MAPPING_ROWS, ids=lambda row: names(row["BaseStore"])[0])
def test_every_basestore_mapping_row_inside_a_graph(row: Row,
                                                    langgraph_store: tuple[MnemosyneStore, mnem_bridge.Store]) -> None:
    (first,) = names(row["BaseStore"])
    assert first in MAPPING, f"docs/contract.md, BaseStore row `{first}`: no check for it"
    store, sdk = langgraph_store

    def node(state: Step, runtime: Runtime) -> Step:
        assert runtime.store is not None
        MAPPING[first](runtime.store, sdk)
        return {"done": True}

    graph = StateGraph(Step)
    graph.add_node("check", node)
    graph.add_edge(START, "check")
    graph.add_edge("check", END)
    try:
        assert graph.compile(store=store).invoke({"done": False}) == {"done": True}
    except AssertionError as failed:
        pytest.fail(f"docs/contract.md, BaseStore row `{first}` ({row['Mnemosyne']}): {failed}")


def test_every_mapping_check_has_its_row() -> None:
    assert set(MAPPING) == {names(row["BaseStore"])[0] for row in MAPPING_ROWS}


@pytest.mark.parametrize("row", TABLES["`MnemosyneStore`'s extra methods"], ids=lambda row: row["method"])
def test_extra_methods_are_the_adr_rows(row: Row) -> None:
    (name,) = names(row["method"])
    where = f"docs/contract.md, extra methods row `{name}`"
    assert callable(getattr(MnemosyneStore, name, None)), f"{where}: MnemosyneStore has no {name}"
    ours = list(inspect.signature(getattr(MnemosyneStore, name)).parameters.values())[1:]  # after self
    adr = ast.parse(f"def f{row['signature'].strip('`')}: pass").body[0].args  # type: ignore[attr-defined]
    defaults = [inspect.Parameter.empty] * (len(adr.args) - len(adr.defaults)) + [ast.literal_eval(d)
                                                                                   for d in adr.defaults]
    assert [(p.name, p.default) for p in ours[:len(adr.args)]] == [
        (a.arg, d) for a, d in zip(adr.args, defaults, strict=True)], f"{where}: the parameters differ"
    for extra in ours[len(adr.args):]:
        assert extra.default is not inspect.Parameter.empty, f"{where}: the extension {extra.name!r} needs a default"


@pytest.mark.parametrize("row", TABLES["Error codes"], ids=lambda row: row["code"])
def test_error_codes_are_the_adr_rows(row: Row) -> None:
    (code,), (name,) = names(row["code"]), names(row["bridge error"])
    where = f"docs/contract.md, Error codes row `{code}`"
    error_class = getattr(mnem_bridge, name, None)
    assert isinstance(error_class, type) and issubclass(error_class, mnem_bridge.MnemError), \
        f"{where}: mnem_bridge has no {name}"
    error = error_class("the store said no")
    assert error.code == code and error_code(error) == code, f"{where}: {name} has the code {error.code!r}"
    assert str(tool_error(error, "remember")).startswith(f"{code}: "), f"{where}: a tool error's text"


@pytest.mark.anyio
async def test_build_server_takes_upstreams_arguments_and_falls_back_to_mnem_store(
        sqlite_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream's ``build_server(store_path=None, tools="core")``, and its test_store_path_falls_back_to_the_env."""
    monkeypatch.setenv("MNEM_STORE", str(sqlite_store))
    monkeypatch.setenv("MNEM_BIN", MNEM)
    for built in (build_server(), build_server(store_path=sqlite_store, tools="core")):
        lifespan = built.settings.lifespan
        assert lifespan is not None
        async with lifespan(built):
            await built.call_tool("remember", {"id": "x", "content": 1})
            recalled = await built.call_tool("recall", {"id": "x"})
            assert json.loads(recalled.content[0].text)["content"] == 1
    assert mnem_mcp.error_code(mnem_bridge.NotFoundError("gone")) == "not_found"
