"""What the operator of a store-per-tenant server reads in its log: true, in order, and in words.

A real ``mnem-mcp --store-per sub`` (the recipe of docs/mcp-http.md, "One
server, many stores") serves a first request of a new subject: its store
is created, then served, and the log says so in that order.  The start-up
line names the claim, where the stores go and how many are kept running,
as an operator reads them, not a Python repr, and never a password the
template's URL carries.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pg_stores
import pytest
from http_support import HttpServer, Issuer, connect, free_port
from mcp_support import call

pytestmark = pytest.mark.anyio


def tenant_log(template: str, subject: str, *extra: str) -> str:
    """The log of a server of one store per ``sub`` over ``template``, after one call of ``subject``, stopped."""
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(audience)
    try:
        server = HttpServer(template, ["--auth", "jwt", "--issuer", issuer.url, "--audience", audience,
                                       "--store-per", "sub", "--max-stores", "5", *extra], port=port)
        try:
            async def first_call() -> None:
                async with connect(server.url, issuer.mint(subject)) as client:
                    await call(client, "remember", id="plan", content="pro")

            anyio.run(first_call)
        finally:
            server.stop()
        return server.stderr()
    finally:
        issuer.close()


def lines_of(log: str) -> list[str]:
    return [line.split(": ", 2)[2] for line in log.splitlines() if line.startswith("mnem-mcp: ")]


def test_a_new_subjects_store_is_logged_created_then_served(tmp_path: Path) -> None:
    template = str(tmp_path / "{tenant}")
    said = lines_of(tenant_log(template, "billing-agent"))
    store = tmp_path / "billing-agent"
    created = said.index(f"created the store of sub 'billing-agent' at {store}")
    served = said.index(f"serving the store of sub 'billing-agent' at {store}")
    assert created < served, said
    assert (store / ".mnem").is_dir()
    assert f"serving one store per value of the token claim 'sub', at {template} (each created on its first " \
           "use); at most 5 stores' mnem workers run at once" in said, said
    assert not any("StoreRouter(" in line or "TenantBinding(" in line for line in said), said


def test_the_start_up_line_leaves_out_a_password_the_template_carries(tmp_path: Path) -> None:
    url = pg_stores.new_url("lg") + "_{tenant}"
    scheme, rest = url.split("://", 1)
    user, at, host = rest.partition("@")
    with_password = f"{scheme}://{user.split(':')[0]}:s3cret-word@{host}" if at else url
    said = lines_of(tenant_log(with_password, "acme", "--create"))
    assert not any("s3cret-word" in line for line in said), said
    assert any(line.startswith("serving one store per value of the token claim 'sub', at postgresql://")
               and "{tenant}" in line for line in said), said
