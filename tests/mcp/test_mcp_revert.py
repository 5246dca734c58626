"""The harness tool ``revert`` (``--tools all``): undo a misread billing note over the real MCP protocol (issue #47).

The agent remembers the ticket, then misreads billing note 8842 (a wrong
plan tier and a discount band from it, and a contact that the CRM corrects
later).  One ``revert`` undoes the note, answers the corrected contact as
skipped, and ``why`` then names the revert commit.  Over HTTP with
``--auth jwt``, ``revert`` changes memory, so a read-only token is refused
and nothing moves.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pg_stores
import pytest
from conftest import new_store
from http_support import HttpServer, Issuer, served_with_jwt
from http_support import connect as connect_http
from mcp_support import call, connect, fail

pytestmark = pytest.mark.anyio

BILLING = "billing-note-8842"


async def misread_run(client: object) -> dict[str, str]:
    ticket = await call(client, "remember_many", items=[
        {"id": "customer-4821", "content": "on the Enterprise plan", "source": "ticket-4821"},
        {"id": "customer-4821/contact", "content": "dana@acme.example", "source": "ticket-4821"}])
    misread = await call(client, "remember_many", items=[
        {"id": "customer-4821", "content": "downgraded to Pro last month", "source": BILLING, "step": "step-31"},
        {"id": "customer-4821/discount-band", "content": "pro-tier (10%)", "source": BILLING},
        {"id": "customer-4821/contact", "content": "billing@acme.example", "source": BILLING}])
    crm = await call(client, "revise", id="customer-4821/contact", content="dana.r@acme.example", source="crm")
    return {"ticket": ticket["commit"], "misread": misread["commit"], "crm": crm["commit"]}


async def test_one_revert_undoes_the_note_over_stdio_and_why_names_it(store: Path) -> None:
    async with connect("stdio", pg_stores.address(store), "--author", "support-agent", tools="all") as client:
        commits = await misread_run(client)
        before = await call(client, "history")
        preview = await call(client, "revert", source=BILLING, dry_run=True)
        assert preview["commit"] is None and await call(client, "history") == before  # a dry run writes nothing

        done = await call(client, "revert", source=BILLING)
        assert [(fact["id"], fact["action"]) for fact in done["reverted"]] == [
            ("customer-4821", "restore"), ("customer-4821/discount-band", "remove")]
        assert (done["reverted"], done["skipped"]) == (preview["reverted"], preview["skipped"])
        [skipped] = done["skipped"]
        assert skipped["id"] == "customer-4821/contact" and skipped["changed_by"]["commit"] == commits["crm"]
        assert done["reverted"][0]["undone"][0]["commit"] == commits["misread"]

        assert (await call(client, "recall", id="customer-4821"))["content"] == "on the Enterprise plan"
        assert await call(client, "recall", id="customer-4821/discount-band") is None
        assert (await call(client, "recall", id="customer-4821/contact"))["content"] == "dana.r@acme.example"
        why = await call(client, "why", id="customer-4821")
        assert why["commit"] == done["commit"]["id"] and why["author"] == "support-agent"
        assert why["node"]["provenance"]["source"] == "ticket-4821"

        again = await fail(client, "revert", source=BILLING)
        assert again.startswith("invalid_ref: nothing to revert") and "customer-4821/contact" in again
        missing = await fail(client, "revert", source="billing-note-0000")
        assert missing.startswith("not_found: ") and "billing-note-0000" in missing
        assert (await fail(client, "revert")).startswith("usage: ")
        assert len(await call(client, "history")) == len(before) + 1


async def test_revert_is_a_harness_tool(store: Path) -> None:
    async with connect("in-process", pg_stores.address(store)) as client:
        assert "revert" not in {tool.name for tool in (await client.list_tools()).tools}
    async with connect("in-process", pg_stores.address(store), tools="all") as client:
        [listed] = [tool for tool in (await client.list_tools()).tools if tool.name == "revert"]
    assert listed.annotations is not None and listed.annotations.destructive_hint is True


@pytest.fixture(scope="module")
def jwt_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HttpServer, Issuer, Path]]:
    store = new_store(tmp_path_factory.mktemp("revert-http") / "store", "sqlite")
    with served_with_jwt(store, "--tools", "all") as (issuer, server):
        yield server, issuer, store


async def test_over_http_revert_needs_the_write_scope(jwt_server: tuple[HttpServer, Issuer, Path]) -> None:
    server, issuer, store = jwt_server
    async with connect_http(server.url, issuer.mint("writer")) as client:
        await misread_run(client)
    async with connect_http(server.url, issuer.mint("reader", scope="mnem:read")) as client:
        before = await call(client, "history")
        for dry_run in (False, True):
            refused = await fail(client, "revert", source=BILLING, dry_run=dry_run)
            assert refused.startswith("insufficient_scope: revert changes memory and needs the scope mnem:write")
        assert await call(client, "history") == before
        assert (await call(client, "recall", id="customer-4821"))["content"] == "downgraded to Pro last month"
    async with connect_http(server.url, issuer.mint("ops")) as client:
        missing = await fail(client, "revert", source="billing-note-0000")
        assert missing.startswith("not_found: ") and "billing-note-0000" in missing
        assert "rerun" not in missing and str(store) not in missing  # another party sees no internals
        long = await fail(client, "revert", source="x" * 100_000)
        assert long.startswith("not_found: ") and len(long) < 1_000  # the caller's own text is not echoed whole
        done = await call(client, "revert", source=BILLING)
        assert done["commit"]["author"] == "ops"  # the token's subject records the revert
