"""A remote client is never shown where the server keeps its stores or its binary: only a code and a message.

Over stdio the local user gets each failure's ``rerun:`` line (the binary,
``-C`` and the store's path or URL), which they can paste.  Over HTTP the
same text would show every client the server's layout: its folders, the
PostgreSQL role, socket and store names, and with ``--store-per`` where
every tenant's store lies.  Here a real ``mnem-mcp`` process serves a
folder, a PostgreSQL store, and a store per tenant of each kind; a client
with a real token provokes a failure on every route a failure reaches it by
(tool errors, a resource error, each sync route, and a store that breaks
under the server), and no answer holds the store's path or URL, the
socket, the store's name, the binary's path or ``rerun:``, while the
server's log holds the rerun lines and the store's location.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pg_stores
import pytest
from http_support import HttpServer, Issuer, connect, free_port
from mcp.shared.exceptions import MCPError
from mcp_support import call, fail

pytestmark = pytest.mark.anyio

BINARY = str(Path(sys.executable).with_name("mnem"))
KINDS = ["folder", "postgresql", "folder-per-tenant", "postgresql-per-tenant"]


class Served:
    """A server over one store (or one per tenant, the client's being ``acme``'s), and what it must not show."""

    def __init__(self, server: HttpServer, issuer: Issuer, store: str, secrets: list[str]) -> None:
        self.server, self.issuer, self.store, self.secrets = server, issuer, store, secrets
        self.token = issuer.mint("bob", tenant="acme")
        self.headers = {"authorization": f"Bearer {self.token}"}

    def sync(self, method: str, route: str, **kwargs: Any) -> httpx2.Response:
        return httpx2.request(method, f"{self.server.url}/sync/{route}", headers=self.headers, timeout=30, **kwargs)


def secrets_of(store: str) -> list[str]:
    """What shows where a store is: its folder, or its URL, role, store name and socket; and the binary.

    The third from the end (the folder, or the socket) is what the server's log must name.
    """
    if store.startswith("postgresql://"):
        parts = urlsplit(store)
        query = parse_qs(parts.query)
        name = query["store"][0]
        return ["postgresql://", store.split("?")[0], f"{parts.username}@", name, query["host"][0], BINARY,
                os.path.realpath(BINARY)]
    return [os.path.realpath(store), store, BINARY, os.path.realpath(BINARY)]


@pytest.fixture(params=KINDS)
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    kind: str = request.param
    per_tenant = kind.endswith("per-tenant")
    if kind.startswith("postgresql"):
        template = pg_stores.new_url("srv") + ("_{tenant}" if per_tenant else "")
    else:
        (tmp_path / "stores").mkdir()
        template = str(tmp_path / "stores" / ("{tenant}" if per_tenant else "one"))
    store = template.replace("{tenant}", "acme")
    extra = ["--create", *(["--store-per", "tenant"] if per_tenant else [])]
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(audience)
    try:
        server = HttpServer(template, ["--auth", "jwt", "--issuer", issuer.url, "--audience", audience, *extra],
                            port=port)
        try:
            yield Served(server, issuer, store, secrets_of(store))
        finally:
            server.stop()
    finally:
        issuer.close()


def move_store(served: Served, *, away: bool) -> None:
    """Take the store away under the running server (its folder renamed, or its schema), or put it back."""
    if served.store.startswith("postgresql://"):
        names = [pg_stores.schema(served.store), f"away_{os.getpid()}"]
        with pg_stores.connect(served.store) as conn:
            conn.execute('ALTER SCHEMA "{}" RENAME TO "{}"'.format(*(names if away else names[::-1])))
    else:
        places = [Path(served.store) / ".mnem", Path(served.store) / "away"]
        shutil.move(*(places if away else places[::-1]))


async def test_no_answer_to_a_remote_client_shows_the_servers_internals_and_the_log_keeps_them(
        served: Served) -> None:
    answers: list[str] = []
    async with connect(served.server.url, served.token) as client:
        written = await call(client, "remember", id="plan", content="pro")
        answers.append(await fail(client, "why", id="ghost"))  # invalid_ref
        answers.append(await fail(client, "forget", id="ghost"))  # invalid_ref from a write
        answers.append(await fail(client, "recall_at", commit="0123456789"))  # invalid_ref
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("mnem://commit/0123456789abcdef")
        answers.append(str(unknown.value))
    tip = written["commit"]
    pack = served.sync("POST", "upload", json={"want": [tip], "have": []})
    assert pack.status_code == 200, pack.text
    refused = [
        served.sync("POST", "upload", json={"want": ["ab" * 32], "have": []}),  # not_found
        served.sync("POST", "upload", content=b"{"),  # usage
        served.sync("POST", "receive", params={"branch": "main", "new": tip}, content=pack.content),  # conflict
        served.sync("POST", "receive", params={"branch": "main", "old": tip, "new": "cd" * 32},
                    content=pack.content[:-9]),  # corrupt_store
        served.sync("POST", "receive", params={"branch": "main", "old": tip, "new": "cd" * 32},
                    content=b"\xa0"),  # an empty map: corrupt_store
    ]
    assert [response.status_code for response in refused] == [404, 400, 409, 422, 422], [r.text for r in refused]
    move_store(served, away=True)
    try:
        refused.append(served.sync("GET", "refs"))
        async with connect(served.server.url, served.token) as client:
            answers.append(await fail(client, "recall"))
            answers.append(await fail(client, "remember", id="plan", content="free"))
            with pytest.raises(MCPError) as broken:
                await client.read_resource("mnem://memory")
            answers.append(str(broken.value))
    finally:
        move_store(served, away=False)
    assert refused[-1].status_code >= 400, refused[-1].text
    answers += [response.text for response in refused]
    for answer in answers:
        assert json.loads(answer) if answer.startswith("{") else answer  # a code and a message, every time
        for secret in ["rerun:", *served.secrets]:
            assert secret not in answer, (secret, answer)
    log = served.server.stderr()
    assert "rerun: " in log and served.secrets[-3] in log  # the operator still has everything: where the store is
    assert "Traceback" not in log
