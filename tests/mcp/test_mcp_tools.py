"""The tools as plain Python: ``MemoryTools`` methods over a real store, no MCP session involved.

Each tool is declared once, as its method; the last test holds the server's
listing to those declarations (name, description, arguments, result schema).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import get_type_hints

import orjson
import pg_stores
import pytest

import mnem_bridge
from mnem_bridge import reserved
from mnem_mcp import TOOLS, build_server, resources
from mnem_mcp.answers import answer
from mnem_mcp.binding import StoreBinding, locate_store
from mnem_mcp.identity import AUTHOR
from mnem_mcp.models import ContentResolution, RememberItem, result_schema
from mnem_mcp.tools import MemoryTools

pytestmark = pytest.mark.anyio


class Notices:
    """What a write tool announces through its context: the resource URIs it made stale."""

    def __init__(self) -> None:
        self.uris: list[str] = []

    async def notify_resource_updated(self, uri: str) -> None:
        self.uris.append(uri)


@pytest.fixture
def bridge_store(store: Path) -> Iterator[mnem_bridge.Store]:
    with mnem_bridge.open(pg_stores.address(store)) as opened:
        yield opened


@pytest.fixture
async def memory(store: Path) -> AsyncIterator[MemoryTools]:
    binding = StoreBinding(locate_store(pg_stores.address(store)).path)
    try:
        yield MemoryTools(binding, AUTHOR)
    finally:
        binding.close()


async def test_writes_are_one_commit_each_and_reads_return_the_bridges_results(
        memory: MemoryTools, bridge_store: mnem_bridge.Store) -> None:
    notices = Notices()
    first = (await memory.remember(notices, "plan", "enterprise", source="ticket-1", step="s1"))["commit"]
    assert notices.uris == ["mnem://memory", "mnem://log", "mnem://memory/plan"]
    batch = (await memory.remember_many(notices, [RememberItem(id="plan", content="pro", observation="obs-7"),
                                                  RememberItem(id="seats", content=[240])]))["commit"]
    assert notices.uris[3:] == ["mnem://memory", "mnem://log", "mnem://memory/plan", "mnem://memory/seats"]
    assert [c.id for c in bridge_store.log(first_parent=True)] == [batch, first]
    assert bridge_store.staged() == [] and bridge_store.staged_deletions() == []
    plan = await memory.recall("plan")
    assert isinstance(plan, mnem_bridge.MemoryNode) and plan.content == "pro"
    assert plan.provenance == mnem_bridge.Provenance(observation="obs-7")
    whole = await memory.recall()  # the memory as the binary printed it: nodes built only when asked for
    assert isinstance(whole, mnem_bridge.WholeMemory) and whole.memory == bridge_store.working_memory()
    assert await memory.recall("nobody") is None
    at = await memory.recall_at(first)
    assert isinstance(at, mnem_bridge.WholeMemory) and at.memory == bridge_store.state_at(first)
    at_first = await memory.recall_at(first, "plan")
    assert isinstance(at_first, mnem_bridge.MemoryNode) and at_first.provenance.agent_step == "s1"
    assert await memory.recall_at(first, "seats") is None
    assert await memory.whats_new(batch) == {"plan": "modified", "seats": "added"}
    assert [c["id"] for c in await memory.history()] == [batch, first]
    assert (await memory.forget(notices, "seats"))["commit"] == bridge_store.head_commit()


async def test_remember_many_takes_the_adrs_plain_dicts(store: Path, bridge_store: mnem_bridge.Store) -> None:
    """ADR-0016: ``items: [{id, content, ...}]``; a caller passes plain dicts, the tool gets them validated."""
    server = build_server(pg_stores.address(store))
    lifespan = server.settings.lifespan
    assert lifespan is not None
    async with lifespan(server):
        result = await server.call_tool("remember_many", {"items": [
            {"id": "plan", "content": "pro", "source": "ticket-9"}, {"id": "seats", "content": 40, "step": "s2"}]})
    commit = orjson.loads(result.content[0].text)["commit"]
    assert bridge_store.changed_by(commit) == {"plan": "added", "seats": "added"}
    assert bridge_store.working_node("plan").provenance.source == "ticket-9"
    assert bridge_store.working_node("seats").provenance.agent_step == "s2"


async def test_when_did_takes_exactly_one_of_equals_absent_present(
        memory: MemoryTools, bridge_store: mnem_bridge.Store) -> None:
    notices = Notices()
    first = (await memory.remember(notices, "plan", "enterprise"))["commit"]
    pro = (await memory.remember(notices, "plan", "pro"))["commit"]
    found = await memory.when_did("plan", equals="pro")
    assert found == {"commit": pro, "blame": bridge_store.blame("plan", at=pro)}
    for chosen in ({}, {"equals": "pro", "absent": True}, {"absent": True, "present": True}):
        with pytest.raises(mnem_bridge.UsageError, match="exactly one of equals, absent or present"):
            await memory.when_did("plan", **chosen)
    with pytest.raises(mnem_bridge.InvalidRefError):  # as upstream: the search starts after the first commit
        await memory.when_did("plan", present=True)
    assert (await memory.when_did("plan", present=True, include_root=True))["commit"] == first
    with pytest.raises(mnem_bridge.InvalidRefError):  # with an explicit good, upstream's precondition stands
        await memory.when_did("plan", present=True, good=first)
    gone = (await memory.forget(notices, "plan"))["commit"]
    assert await memory.when_did("plan", absent=True) == {"commit": gone, "blame": None}


async def test_every_write_records_the_same_author(memory: MemoryTools, bridge_store: mnem_bridge.Store) -> None:
    notices = Notices()
    await memory.remember(notices, "plan", "enterprise")
    await memory.remember_many(notices, [RememberItem(id="seats", content=1)])
    await memory.branch("other")
    await memory.switch(notices, "other")
    await memory.remember(notices, "plan", "team")
    await memory.switch(notices, "main")
    await memory.forget(notices, "seats")
    assert (await memory.merge(notices, "other")).status == "merged"
    assert {commit.author for commit in bridge_store.log()} == {AUTHOR}


async def test_a_content_resolution_becomes_a_node_for_the_bridge(
        memory: MemoryTools, bridge_store: mnem_bridge.Store) -> None:
    notices = Notices()
    await memory.remember(notices, "plan", "enterprise")
    await memory.branch("other")
    await memory.remember(notices, "plan", "pro")
    await memory.switch(notices, "other")
    await memory.remember(notices, "plan", "team")
    await memory.switch(notices, "main")
    result = await memory.merge(notices, "other", resolutions={"plan": ContentResolution(content={"tier": "mixed"})})
    assert result.status == "merged"
    assert bridge_store.working_node("plan").content == {"tier": "mixed"}


async def test_recall_pages_memory_only_when_asked(memory: MemoryTools) -> None:
    await memory.remember_many(Notices(), [RememberItem(id=f"fact-{i:03d}", content=i) for i in range(250)]
                               + [RememberItem(id="other", content="x")])
    whole = await memory.recall()  # the ADR's "the whole current memory"
    assert isinstance(whole, mnem_bridge.WholeMemory) and len(whole.document) == 251
    assert list(await memory.recall(prefix="fact-")) == [f"fact-{i:03d}" for i in range(250)]
    first = await memory.recall(cursor="fact-000")
    assert isinstance(first, mnem_bridge.MemoryPage)
    assert len(first.memory) == 100 and first.next_cursor == "fact-100"  # a cursor alone: the default page
    seen: list[str] = []
    cursor = None
    while True:
        page = await memory.recall(prefix="fact-", limit=60, cursor=cursor)
        assert isinstance(page, mnem_bridge.MemoryPage)
        seen += list(page.memory)
        if (cursor := page.next_cursor) is None:
            break
    assert seen == [f"fact-{i:03d}" for i in range(250)]
    whole = await memory.recall(limit=10_000)
    assert isinstance(whole, mnem_bridge.MemoryPage) and list(whole.memory)[-1] == "other"
    with pytest.raises(mnem_bridge.UsageError, match="not both"):
        await memory.recall("fact-001", prefix="fact-")


async def test_the_whole_memory_is_answered_as_the_binary_printed_it_building_no_node(
        memory: MemoryTools, bridge_store: mnem_bridge.Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """``recall()``, ``recall_at`` and ``mnem://memory`` answer what they did when each node was built, with none built.

    The text is what encoding every node's ``to_dict()`` gave (floats, non-ASCII text, a redacted version and
    event times as they were), without the checkpoint's node; reading it builds no ``MemoryNode``.  A page is
    spelled the same way once the checkpoint's node is taken out of it (it was encoded again by ``json``, whose
    ``1e-05`` the binary spells ``0.00001``).
    """
    await memory.remember_many(Notices(), [
        RememberItem(id="plan", content={"tier": "pro", "ratio": 1e-05, "tiny": 1.5e-07, "big": 1e16},
                     source="ticket-1", event_time=1_700_000_000_000),
        RememberItem(id="seats", content=[240, 0.1, None, True], step="s1", observation="o1"),
        RememberItem(id="token", content="ghp_secret"), RememberItem(id="ünï", content="café ✓ \u2028 \"q\"")])
    bridge_store.write([{"id": f"{mnem_bridge.reserved.CHECKPOINT_PREFIX}t1:c1", "content": {"step": 0}}],
                       message="a saver's checkpoint", allow_reserved=True)
    bridge_store.redact(nodes=["token"], reason="pasted", by="security@acme")
    head = bridge_store.head_commit()
    assert head is not None
    built = {node_id: node.to_dict() for node_id, node in reserved.visible(bridge_store.working_memory()).items()}
    assert built["token"]["redacted"]["by"] == "security@acme" and ".checkpoint" not in str(built)

    def refuse(cls: type, data: object) -> None:
        raise AssertionError("a node was built")

    monkeypatch.setattr(mnem_bridge.MemoryNode, "from_dict", classmethod(refuse))
    for value in (await memory.recall(), await memory.recall_at(head)):
        result = answer(value)
        assert result.content[0].text == orjson.dumps(built).decode()
        assert result.structured_content == built
    assert resources.memory(bridge_store) == built
    assert resources.commit(bridge_store, head)["state"] == built
    page = answer(await memory.recall(limit=100))  # without the checkpoint's node too: encoded as the binary encodes
    assert page.content[0].text == orjson.dumps({"memory": built, "next_cursor": None}).decode()


async def test_a_result_is_one_compact_json_text_equal_to_its_structured_content(memory: MemoryTools) -> None:
    await memory.remember(Notices(), "plan", {"tier": "pro"}, source="ticket-1")
    for value in (await memory.recall(limit=5), await memory.why("plan"), await memory.history()):
        result = answer(value)
        text = result.content[0].text
        decoded = orjson.loads(text)
        assert result.structured_content == ({"result": decoded} if isinstance(value, list) else decoded)
        assert "\n" not in text and ", " not in text


async def test_each_listed_tool_is_its_method(store: Path) -> None:
    """Name, description, arguments and result schema all come from the one method each tool is."""
    server = build_server(pg_stores.address(store), tools="all")
    listed = {tool.name: tool for tool in await server.list_tools()}
    assert list(listed) == [spec.name for spec in TOOLS]
    for spec in TOOLS:
        tool = listed[spec.name]
        if spec.name == spec.method.__name__:
            assert tool.description == " ".join((spec.method.__doc__ or "").split())
        parameters = [name for name in inspect.signature(spec.method).parameters if name not in ("self", "ctx")]
        assert list(tool.input_schema["properties"]) == parameters, spec.name
        assert tool.input_schema["title"] == f"{spec.name}Arguments"
        assert tool.output_schema == result_schema(get_type_hints(spec.method)["return"]), spec.name
        assert tool.title == spec.title and tool.annotations == spec.annotations
