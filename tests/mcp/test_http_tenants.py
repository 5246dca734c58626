"""One ``mnem-mcp`` over HTTP serving one store per tenant: ``--store-per tenant --store .../{tenant}``.

Real parts throughout: a ``mnem-mcp`` process on a free port, the
development issuer on a thread minting signed tokens (with a ``tenant``
claim), the SDK's client, and the real ``mnem`` under it.  Two tenants see
only their own memory, by tools and by resources; whatever a client puts in
the URL, a header or a tool argument, its writes land in its token's store;
a claim that cannot name a store is refused 403 before anything is created;
a read-only token cannot write its store; the author is the token's
subject.  Stores are served in parallel, shown without timing: a write to
one store completes while a write to another is held inside its commit by
the ``mnem`` under the server (``held_writes``).  The least recently used store's worker is closed
beyond ``--max-stores``, and no worker outlives the server.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pg_stores
import pytest
from conftest import run_mnem
from held_writes import HANG, HeldWrite
from http_support import HttpServer, Issuer, connect, free_port
from manual_clock import eventually
from mcp.server.auth.provider import AccessToken
from mcp_support import MNEM_MCP, call, fail, server_env

from mnem_mcp.tenants import StoreTemplate, TenantRefusedError, tenant_of

pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


class Tenants:
    """An issuer and a server of one store per ``tenant`` claim under ``stores``."""

    def __init__(self, stores: Path, issuer: Issuer, server: HttpServer) -> None:
        self.stores, self.issuer, self.server = stores, issuer, server

    def token(self, tenant: Any, sub: str = "alice", **claims: Any) -> str:
        """A signed token of ``sub`` for ``tenant`` (``None``: no tenant claim)."""
        return self.issuer.mint(sub, **({} if tenant is None else {"tenant": tenant}), **claims)

    def memory(self, tenant: str) -> dict[str, Any]:
        """The tenant's store as the engine shows it, outside MCP."""
        shown = run_mnem("--json", "show", cwd=self.stores / tenant)
        assert shown.code == 0, shown.err
        memory: dict[str, Any] = shown.json
        return memory


@contextlib.contextmanager
def tenant_server(root: Path, *extra: str, template: str | None = None) -> Iterator[Tenants]:
    """A tenant server over ``template`` (default ``root/stores/{tenant}``) and its issuer, stopped at the end."""
    stores = root / "stores"
    stores.mkdir(exist_ok=True)
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(audience)
    try:
        server = HttpServer(template or str(stores / "{tenant}"), ["--auth", "jwt", "--issuer", issuer.url,
                                                                   "--audience", audience, "--store-per", "tenant",
                                                                   *extra], port=port)
        try:
            yield Tenants(stores, issuer, server)
        finally:
            server.stop()
    finally:
        issuer.close()


@pytest.fixture(scope="module")
def tenants(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tenants]:
    with tenant_server(tmp_path_factory.mktemp("tenants")) as made:
        yield made


def workers_of(server: HttpServer) -> set[int]:
    """The server process's ``mnem serve --stdio`` children (Linux: read from /proc)."""
    found = set()
    for task in Path(f"/proc/{server.process.pid}/task").iterdir():
        with contextlib.suppress(OSError):
            for pid in (task / "children").read_text().split():
                with contextlib.suppress(OSError):
                    if b"serve\0--stdio" in Path(f"/proc/{pid}/cmdline").read_bytes():
                        found.add(int(pid))
    return found


def post(url: str, token: str) -> httpx2.Response:
    """One raw JSON-RPC ``initialize`` with ``token`` as the bearer token."""
    return httpx2.post(url, json=INITIALIZE, timeout=30, headers={
        "accept": "application/json, text/event-stream", "authorization": f"Bearer {token}"})


async def test_two_tenants_see_only_their_own_memory(tenants: Tenants) -> None:
    async with connect(tenants.server.url, tenants.token("acme")) as acme, \
            connect(tenants.server.url, tenants.token("globex", sub="bob")) as globex:
        await call(acme, "remember", id="plan", content="enterprise", source="acme-crm")
        await call(globex, "remember", id="seats", content=12)
        assert await call(globex, "recall", id="plan") is None
        assert "plan" not in await call(globex, "recall")
        assert await call(acme, "recall", id="seats") is None
        assert [c["author"] for c in await call(globex, "history")] == ["bob"]  # acme's commit is not in its log
        assert (await fail(globex, "why", id="plan")).startswith("invalid_ref: ")
        seen = json.loads((await globex.read_resource("mnem://memory")).contents[0].text)
        assert "plan" not in seen and "seats" in seen
        assert json.loads((await globex.read_resource("mnem://memory/plan")).contents[0].text) is None
        assert "plan" in json.loads((await acme.read_resource("mnem://memory")).contents[0].text)
    async with connect(tenants.server.url, tenants.token("acme", sub="carol")) as colleague:  # the claim, not sub
        assert (await call(colleague, "recall", id="plan"))["content"] == "enterprise"
    assert "plan" in tenants.memory("acme") and "plan" not in tenants.memory("globex")


async def test_the_author_is_the_token_subject_in_the_tenant_store(tenants: Tenants) -> None:
    async with connect(tenants.server.url, tenants.token("initech", sub="peter@initech.example")) as client:
        written = await call(client, "remember", id="stapler", content="red")
        assert (await call(client, "why", id="stapler"))["author"] == "peter@initech.example"
        refused = await fail(client, "remember", id="stapler", content="x", author="lumbergh")
        assert refused.startswith("usage: remember: author: unknown argument")
    log = run_mnem("--json", "log", cwd=tenants.stores / "initech").json
    assert [(c["id"], c["author"]) for c in log] == [(written["commit"], "peter@initech.example")]


@pytest.mark.parametrize("value", [
    "../globex", "a/b", "..", "%2e%2e%2fglobex", "globex/../acme", "-rf", "Acme", "acme\x00", "", " acme",
    "x" * 59, "ACME", "a.b", 42, ["acme"], {"name": "acme"}, True,
])
def test_a_claim_that_cannot_name_a_store_is_refused_403_naming_it(tenants: Tenants, value: Any) -> None:
    before = sorted(path.name for path in tenants.stores.parent.rglob("*") if path.parent.name != ".mnem")
    response = post(tenants.server.url, tenants.token(value))
    assert response.status_code == 403, response.text
    assert response.json()["error"] == "access_denied"
    described = response.json()["error_description"]
    assert described.startswith("the token's 'tenant' claim is ") and "cannot name a store" in described
    after = sorted(path.name for path in tenants.stores.parent.rglob("*") if path.parent.name != ".mnem")
    assert after == before  # nothing was created, anywhere


def test_a_token_without_the_claim_is_refused_403_saying_so(tenants: Tenants) -> None:
    response = post(tenants.server.url, tenants.token(None))
    assert response.status_code == 403, response.text
    assert response.json() == {"error": "access_denied", "error_description": (
        "the token has no 'tenant' claim, which chooses the store on this server: ask the issuer for a token that "
        "carries one")}
    assert post(tenants.server.url, tenants.token("acme")).status_code == 200


async def test_nothing_the_client_sends_but_its_token_chooses_the_store(tenants: Tenants) -> None:
    token = tenants.token("hooli", sub="gavin")
    tries = {"X-Tenant": "globex", "Tenant": "globex", "X-Mnem-Store": "globex", "Mnem-Store": "../globex"}
    async with connect(f"{tenants.server.url}?tenant=globex&store=globex", token, headers=tries) as client:
        await call(client, "remember", id="from-url-and-headers", content=1)
        for tool, arguments in [("remember", {"id": "x", "content": 1, "store": "globex"}),
                                ("remember", {"id": "x", "content": 1, "tenant": "globex"}),
                                ("recall", {"store": str(tenants.stores / "globex")})]:
            assert (await fail(client, tool, **arguments)).startswith(f"usage: {tool}: ")
        assert json.loads((await client.read_resource("mnem://memory/globex")).contents[0].text) is None
        listed = await call(client, "recall")
    assert set(listed) == {"from-url-and-headers"}
    assert set(tenants.memory("hooli")) == {"from-url-and-headers"}
    assert not (tenants.stores / "globex").exists() or "from-url-and-headers" not in tenants.memory("globex")


async def test_a_read_only_token_reads_its_store_and_cannot_write_it(tenants: Tenants) -> None:
    async with connect(tenants.server.url, tenants.token("umbrella", sub="writer")) as writer:
        await call(writer, "remember", id="plan", content="basic")
    async with connect(tenants.server.url, tenants.token("umbrella", sub="reader", scope="mnem:read")) as reader:
        assert (await call(reader, "recall", id="plan"))["content"] == "basic"
        refused = await fail(reader, "remember", id="plan", content="pro")
        assert refused.startswith("insufficient_scope: remember changes memory and needs the scope mnem:write")
        assert (await fail(reader, "forget", id="plan")).startswith("insufficient_scope: ")
    assert tenants.memory("umbrella")["plan"]["content"] == "basic"


async def test_stores_are_served_in_parallel_each_by_its_own_worker(tmp_path: Path) -> None:
    """Left's write completes while right's is held inside its commit (``held_writes``), on right's own worker.

    Served one store after another, left's write would wait for right's, which waits for the test: the
    ``fail_after`` would end that wait and fail the test.  Nothing is timed.
    """
    held = HeldWrite(tmp_path, "after-the-hold")
    with tenant_server(tmp_path, "--mnem", str(held.binary)) as served:
        async with connect(served.server.url, served.token("left")) as left, \
                connect(served.server.url, served.token("right")) as right:
            await call(left, "remember", id="warm", content=0)
            await call(right, "remember", id="warm", content=0)
            assert len(workers_of(served.server)) >= 2  # each store its own mnem worker
            done: list[str] = []
            try:
                async with anyio.create_task_group() as group:
                    async def blocked() -> None:
                        await call(right, "remember", id="after-the-hold", content=1)
                        done.append("right")

                    group.start_soon(blocked)
                    await anyio.to_thread.run_sync(held.wait)  # right's write is inside its commit, and waits
                    with anyio.fail_after(HANG):  # only a left served after right's reaches it
                        await call(left, "remember", id="while-right-waits", content=1)
                    done.append("left")
                    assert done == ["left"]  # left's write completed while right's was still held
                    held.release()
            finally:
                held.release()
        assert done == ["left", "right"]
        assert "after-the-hold" in served.memory("right") and "while-right-waits" in served.memory("left")


async def test_beyond_max_stores_the_least_recently_used_worker_is_closed(tmp_path: Path) -> None:
    with tenant_server(tmp_path, "--max-stores", "2") as served:
        seen: set[int] = set()
        for tenant in ("one", "two", "three", "one"):
            async with connect(served.server.url, served.token(tenant)) as client:
                await call(client, "remember", id="here", content=tenant)
            eventually(lambda: len(workers_of(served.server)) <= 2, "the least recently used worker ended")
            seen |= workers_of(served.server)
        assert len(seen) == 4  # one's first worker was closed when three came, and a new one started for it
        assert {tenant: served.memory(tenant)["here"]["content"] for tenant in ("one", "two", "three")} == {
            "one": "one", "two": "two", "three": "three"}
        last = workers_of(served.server)
    assert served.server.process.returncode is not None
    eventually(lambda: not any(Path(f"/proc/{pid}").exists() for pid in seen | last), "every worker ended")


@pytest.mark.serial
async def test_clients_writing_at_once_to_one_store_and_to_many_lose_nothing(tenants: Tenants) -> None:
    clients, writes = 10, 20
    failures: list[str] = []

    async def writer(tenant: str, number: int) -> None:
        async with connect(tenants.server.url, tenants.token(tenant, sub=f"agent-{number}")) as client:
            for seq in range(writes):
                result = await client.call_tool("remember", {"id": f"w{number}-{seq}", "content": seq})
                if result.is_error:
                    failures.append(result.content[0].text)

    async with anyio.create_task_group() as group:
        for number in range(clients):
            group.start_soon(writer, "crowd", number)  # all on one store
            group.start_soon(writer, f"solo-{number}", number)  # each on its own
    assert failures == []
    everyone = {f"w{number}-{seq}" for number in range(clients) for seq in range(writes)}
    assert set(tenants.memory("crowd")) == everyone
    for number in range(clients):
        assert set(tenants.memory(f"solo-{number}")) == {f"w{number}-{seq}" for seq in range(writes)}


@pytest.mark.parametrize(("argv", "says"), [
    (["--store", "/srv/{tenant}", "--store-per", "tenant"], "--store-per applies to HTTP only"),
    (["--transport", "http", "--auth", "none", "--store", "/srv/{tenant}", "--store-per", "tenant"],
     "it needs --transport streamable-http --auth jwt"),
    (["--transport", "http", "--auth", "jwt", "--issuer", "http://127.0.0.1:9", "--audience",
      "http://127.0.0.1:8765/mcp", "--store", "/srv/memory", "--store-per", "tenant"],
     "--store with --store-per must hold {tenant}"),
    (["--transport", "http", "--auth", "jwt", "--issuer", "http://127.0.0.1:9", "--audience",
      "http://127.0.0.1:8765/mcp", "--store-per", "tenant"], "--store-per needs --store TEMPLATE holding {tenant}"),
    (["--transport", "http", "--auth", "jwt", "--issuer", "http://127.0.0.1:9", "--audience",
      "http://127.0.0.1:8765/mcp", "--store", "/srv/{tenant}/{user}", "--store-per", "tenant"],
     "may hold {tenant} and no other braces"),
    (["--transport", "http", "--auth", "jwt", "--issuer", "http://127.0.0.1:9", "--audience",
      "http://127.0.0.1:8765/mcp", "--store", "/srv/{tenant}", "--store-per", "a claim"],
     "--store-per names a token claim"),
    (["--transport", "http", "--auth", "jwt", "--issuer", "http://127.0.0.1:9", "--audience",
      "http://127.0.0.1:8765/mcp", "--store", "/nowhere/mnem/{tenant}", "--store-per", "tenant"],
     "the folder /nowhere/mnem does not exist; create it"),
    (["--transport", "http", "--auth", "none", "--store", "/srv/{tenant}"], "--store holds {tenant}, a template: "
     "add --store-per CLAIM"),
    (["--transport", "http", "--auth", "none", "--max-stores", "3"], "--max-stores goes with --store-per CLAIM"),
    (["--store-per", "tenant", "--max-stores", "0"], "--max-stores: must be at least 1"),
])
def test_inconsistent_tenant_options_are_usage_errors_that_name_the_fix(argv: list[str], says: str) -> None:
    done = subprocess.run([MNEM_MCP, *argv], capture_output=True, text=True, env=server_env(), timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr
    assert "Traceback" not in done.stderr


def access(claims: dict[str, Any] | None, subject: str | None = None) -> AccessToken:
    return AccessToken(token="t", client_id="c", scopes=["mnem:read"], subject=subject, claims=claims)


def test_the_mapping_takes_the_claim_or_the_subject_and_nothing_else() -> None:
    assert tenant_of(access({"tenant": "acme", "sub": "x"}), "tenant") == "acme"
    assert tenant_of(access({"sub": "0c9f6a2e-77b1-4c4b-9d7e-1f2a3b4c5d6e"}), "sub") == (
        "0c9f6a2e-77b1-4c4b-9d7e-1f2a3b4c5d6e")
    assert tenant_of(access(None, subject="bob"), "sub") == "bob"  # a verifier that keeps no claims
    with pytest.raises(TenantRefusedError, match="no bearer token"):
        tenant_of(None, "tenant")
    with pytest.raises(TenantRefusedError, match=r"'tenant' claim is 'x{79}\.\.\., which cannot"):
        tenant_of(access({"tenant": "x" * 1000}), "tenant")  # the message shows a long value cut short


def test_a_template_keeps_every_tenant_inside_its_folder(tmp_path: Path) -> None:
    template = StoreTemplate.parse(str(tmp_path / "stores" / "{tenant}" / "memory"))
    assert template.base == tmp_path / "stores"
    assert template.fill("acme") == tmp_path / "stores" / "acme" / "memory"
    with pytest.raises(ValueError, match="outside"):
        template.fill("../../elsewhere")  # never a safe name: the check in depth, should one ever get here
    assert StoreTemplate.parse(str(tmp_path / "mem-{tenant}")).fill("acme") == tmp_path / "mem-acme"
    url = StoreTemplate.parse("postgresql://db.example.com/mnem?store=t_{tenant}")
    assert (url.base, str(url.fill("acme"))) == (None, "postgresql://db.example.com/mnem?store=t_acme")


class AnyToken:
    """A token verifier for a server no HTTP request reaches (the in-process tests below)."""

    async def verify_token(self, token: str) -> AccessToken | None:
        return None


async def test_a_call_that_carries_no_token_reaches_no_store(tmp_path: Path) -> None:
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    from mnem_mcp import build_server
    from mnem_mcp.auth import auth_settings

    server = build_server(str(tmp_path / "{tenant}"), store_per="tenant", token_verifier=AnyToken(),
                          auth=auth_settings("https://id.example.com", "https://memory.example.com/mcp"))
    with pytest.raises(ToolError, match=r"^access_denied: this server serves one store per token claim 'tenant'"):
        await server.call_tool("recall", {})
    with pytest.raises(ResourceError, match=r"^access_denied: "):
        await server.read_resource("mnem://memory")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="give store_path and token_verifier"):
        build_server(str(tmp_path / "{tenant}"), store_per="tenant")


async def test_postgresql_stores_per_tenant_and_a_missing_one_names_no_other(tmp_path: Path) -> None:
    template = pg_stores.new_url("tn") + "_{tenant}"  # store=tn<pid>_<n>_{tenant} in the tests' database
    with tenant_server(tmp_path, "--create", template=template) as served:
        async with connect(served.server.url, served.token("acme")) as acme, \
                connect(served.server.url, served.token("globex")) as globex:
            await call(acme, "remember", id="plan", content="enterprise")
            assert await call(globex, "recall", id="plan") is None
            assert (await call(acme, "recall", id="plan"))["content"] == "enterprise"
    with tenant_server(tmp_path, template=template) as served:  # without --create: only existing stores
        async with connect(served.server.url, served.token("acme")) as acme, \
                connect(served.server.url, served.token("newcomer")) as newcomer:
            assert (await call(acme, "recall", id="plan"))["content"] == "enterprise"
            missing = await fail(newcomer, "recall")
    assert missing.startswith("no_store: the store this request maps to does not exist here and was not created")
    assert "acme" not in missing and "globex" not in missing  # the engine's list of the database's stores stays out
