"""One source for every result shape: the bridge's models, published as each tool's ``outputSchema``.

Two things must hold for that to be true.  Pydantic's serialization of a
bridge model (what the SDK sends as ``structuredContent``) is exactly the
model's ``to_dict()`` (the docs/cli-json.md shape the binary prints), for
any value; and every tool's real output, in every outcome a tool has,
validates against the schema the server published for it in ``tools/list``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pg_stores
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp_support import call, connect
from pydantic import TypeAdapter

import mnem_bridge
from mnem_mcp import TOOLS
from mnem_mcp.models import result_schema

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
texts = st.none() | st.text(max_size=8)
ids = st.text(min_size=1, max_size=8)
hexes = st.text("0123456789abcdef", min_size=64, max_size=64)
provenances = st.builds(mnem_bridge.Provenance, texts, texts, texts, texts, texts)
nodes = st.builds(mnem_bridge.MemoryNode, ids, json_values, st.sampled_from(["note", "claim"]), provenances,
                  st.none() | st.integers(0, 2**53))
maybe_nodes = st.none() | nodes
commits = st.builds(mnem_bridge.Commit, hexes, st.tuples() | st.tuples(hexes) | st.tuples(hexes, hexes), hexes,
                    st.text(max_size=20), st.text(max_size=8), st.integers(0, 2**53))
conflict_kinds = st.sampled_from(["edit/edit", "delete/edit", "edit/delete", "add/add"])
conflicts = st.builds(mnem_bridge.Conflict, ids, conflict_kinds, maybe_nodes, maybe_nodes, maybe_nodes)
merges = st.builds(mnem_bridge.MergeResult, st.sampled_from(["up-to-date", "fast-forwarded", "merged", "conflicts"]),
                   st.none() | hexes, st.lists(conflicts, max_size=2).map(tuple))
blames = st.builds(mnem_bridge.Blame, hexes, nodes, st.integers(0, 2**53))
by = st.builds(mnem_bridge.ChangedBy, hexes, st.text(max_size=8), st.text(max_size=20), st.integers(0, 2**53))
reverted_facts = st.builds(mnem_bridge.RevertedFact, ids, st.sampled_from(["restore", "remove"]), maybe_nodes,
                           maybe_nodes, st.lists(by, max_size=2).map(tuple))
skipped_facts = st.builds(mnem_bridge.SkippedFact, ids, maybe_nodes, by, st.lists(by, max_size=2).map(tuple))
reverts = st.builds(mnem_bridge.Reverted, st.none() | commits, st.lists(reverted_facts, max_size=2).map(tuple),
                    st.lists(skipped_facts, max_size=2).map(tuple))
MODELS: dict[type[Any], st.SearchStrategy[Any]] = {
    mnem_bridge.Provenance: provenances,
    mnem_bridge.MemoryNode: nodes,
    mnem_bridge.Commit: commits,
    mnem_bridge.Conflict: conflicts,
    mnem_bridge.MergeResult: merges,
    mnem_bridge.Blame: blames,
    mnem_bridge.Reverted: reverts,
}


@pytest.mark.parametrize("model", list(MODELS), ids=lambda model: model.__name__)
@given(data=st.data())
def test_what_the_sdk_sends_is_the_models_to_dict_and_fits_its_schema(model: type[Any], data: st.DataObject) -> None:
    value = data.draw(MODELS[model])
    sent = TypeAdapter(model).dump_python(value, mode="json")
    assert sent == value.to_dict()
    assert list(sent) == list(value.to_dict())  # the same keys in the same order as the CLI's --json
    jsonschema.validate(sent, result_schema(model))


@pytest.mark.anyio
async def test_every_tools_real_output_fits_its_published_schema(store: Path) -> None:
    """Each result, in every outcome, fits its schema; ``recall`` publishes none and answers the ADR's shapes.

    ``recall`` / ``recall_at`` answer one node, ``null`` or ``{id: node}`` (and a
    page only when asked for one): no single object schema holds all three, so
    they are held here to the node's and the page's schemas.
    """
    outputs: dict[str, list[Any]] = {spec.name: [] for spec in TOOLS}

    async def checked(client: Any, tool: str, **arguments: Any) -> Any:
        result = await call(client, tool, **arguments)
        outputs[tool].append({"result": result} if isinstance(result, list) else result)
        return result

    node_schema = result_schema(mnem_bridge.MemoryNode)
    page_schema = result_schema(mnem_bridge.MemoryPage)
    async with connect("in-process", pg_stores.address(store), tools="all") as client:
        schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        assert await checked(client, "recall") == {}
        first = (await checked(client, "remember", id="plan", content={"tier": "pro"}, source="ticket-1",
                               step="s1", observation="o", tool_call="t", note="n"))["commit"]
        await checked(client, "revise", id="plan", content="team")
        many = (await checked(client, "remember_many",
                              items=[{"id": "seats", "content": 3}, {"id": "x", "content": None}]))["commit"]
        for node in (await checked(client, "recall")).values():
            jsonschema.validate(node, node_schema)
        page = await checked(client, "recall", limit=1)
        jsonschema.validate(page, page_schema)
        assert page["next_cursor"] == "plan"  # the nullable cursor, really a string
        jsonschema.validate(await checked(client, "recall", prefix="s", limit=1, cursor="plan"), page_schema)
        jsonschema.validate(await checked(client, "recall", id="plan"), node_schema)
        assert await checked(client, "recall", id="ghost") is None
        for node in (await checked(client, "recall_at", commit=first)).values():
            jsonschema.validate(node, node_schema)
        await checked(client, "history")
        why = await checked(client, "why", id="plan")
        # the tool's dict is the bridge model's to_dict(), key for key, then the commit's author
        with mnem_bridge.open(pg_stores.address(store)) as bridge:
            assert why == {**bridge.blame("plan").to_dict(), "author": "agent"}
        await checked(client, "why", id="plan", at=first)
        await checked(client, "when_did", id="plan", equals="team")
        await checked(client, "forget", id="x")
        absent = await checked(client, "when_did", id="x", absent=True, good=many)
        assert absent["blame"] is None  # the nullable branch of the schema, really taken
        await checked(client, "whats_new", commit=first)
        await checked(client, "branch", name="side", start=first)
        await checked(client, "switch", target="side")
        await checked(client, "remember", id="plan", content="enterprise")
        await checked(client, "switch", target="main")
        conflicted = await checked(client, "merge", theirs="side")
        assert conflicted["status"] == "conflicts" and conflicted["commit"] is None
        await checked(client, "merge", theirs="side", strategy="theirs")
        await checked(client, "merge", theirs="side")  # up to date
        assert (await checked(client, "revert", source="ticket-1", dry_run=True))["commit"] is None
        assert (await checked(client, "revert", author="agent"))["reverted"]
        await checked(client, "switch", target=first)  # detached

    for tool, results in outputs.items():
        assert results, f"{tool} was never called"
        schema = schemas[tool]
        if tool in ("recall", "recall_at"):
            assert schema is None, tool
            continue
        assert schema is not None and schema["type"] == "object", tool
        for result in results:
            jsonschema.validate(result, schema)
