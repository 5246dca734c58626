"""The secret test of issue #47 over a real HTTP remote: a secret an agent remembered through MCP, pushed and
exported, is redacted and the redaction pushed; then no byte of it is anywhere, and every id is unchanged.

The agent writes through a real ``mnem-mcp`` over stdio; the remote is a real ``mnem-mcp --auth jwt`` HTTP
server (its store on both backends) reached by the real ``mnem`` with tokens from the development issuer.
A push that brings redaction records needs the scope ``mnem:redact``: without it the server answers ``403
insufficient_scope`` and nothing moves, and a pack that carries records a push did not declare is refused too.
The secret is looked for as its text and as the bytes its version is stored as (``redaction_support``).
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pg_stores
import pytest
from conftest import new_store, run_mnem, store_fingerprint
from http_support import HttpServer, Issuer, served_with_jwt
from mcp_support import call, connect
from mnem_history import ok, write
from redaction_support import files, holds, version_of
from redaction_support import stored as stored_form

pytestmark = pytest.mark.anyio

SECRET = "ghp_5d1f8a0c3e7b92a4f6d0c8e1b3a5f7d9c2e4a6b8"
NODE = "user:7:token"
WRITE = "mnem:read mnem:write"
REDACT = "mnem:read mnem:write mnem:redact"


class Hub:
    """A served store, its issuer and its server."""

    def __init__(self, store: Path, issuer: Issuer, server: HttpServer) -> None:
        self.store, self.issuer, self.server = store, issuer, server

    def env(self, scope: str) -> dict[str, str]:
        """A ``mnem``'s environment sending a token of alice with ``scope``."""
        return {"MNEM_TOKEN": self.issuer.mint("alice@example.com", scope=scope)}


@contextlib.contextmanager
def hub(root: Path, backend: str) -> Iterator[Hub]:
    store = new_store(root / "hub", backend)
    with served_with_jwt(pg_stores.address(store)) as (issuer, server):
        yield Hub(store, issuer, server)



async def agents_history(local: Path) -> None:
    """The secret remembered through MCP (stdio), a commit on top of it, and a branch."""
    async with connect("stdio", local) as client:
        await call(client, "remember", id=NODE, content={"token": SECRET}, source="chat-42")
    write(local, "on top", 5000, {"user:7:plan": "pro"})
    ok("branch", "side", cwd=local)


def commits(store: Path, *revs: str) -> list[str]:
    return sorted({entry["id"] for rev in revs for entry in ok("--json", "log", rev, cwd=store).json})


def clean(store: Path, stored: bytes, before: list[str], *revs: str) -> None:
    """No byte of the secret in the store's files; it verifies, keeps the record and every commit id."""
    assert not holds(files(store), SECRET, stored)
    assert ok("--json", "verify", cwd=store).json["redacted"] == 1
    assert commits(store, *revs) == before
    assert [record["id"] for record in ok("--json", "redactions", cwd=store).json["redactions"]] == [NODE]


def refused(store: Path, *args: str, env: dict[str, str]) -> dict[str, Any]:
    result = run_mnem("--json", *args, cwd=store, env=env)
    assert result.code != 0 and "Traceback" not in result.err, (result.out, result.err)
    error: dict[str, Any] = json.loads(result.out)["error"]
    return error


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_the_secret_test_no_byte_of_a_redacted_secret_survives_anywhere(tmp_path: Path, backend: str) -> None:
    local = new_store(tmp_path / "local", "sqlite")
    await agents_history(local)
    stored = stored_form(local, version_of(local, NODE))
    with hub(tmp_path, backend) as served:
        ok("remote", "add", "hub", served.server.url, cwd=local)
        ok("push", "hub", "main", cwd=local, env=served.env(WRITE))
        ok("push", "hub", "side", cwd=local, env=served.env(WRITE))
        ok("clone", served.server.url, str(tmp_path / "early"), cwd=tmp_path, env=served.env("mnem:read"))
        unsealed = ok("export", cwd=local).out  # made before the redaction: an old export keeps what it holds
        assert holds(unsealed.encode(), SECRET, stored)
        for store in (local, served.store, tmp_path / "early"):
            assert holds(files(store), SECRET, stored)  # the bytes are there: every check below can fail
        before = commits(local, "main", "side")

        ok("redact", "--node", NODE, "--reason", "leaked token", cwd=local, env={"MNEM_AUTHOR": "dpo"})
        at_hub = store_fingerprint(served.store)
        error = refused(local, "push", "hub", "main", env=served.env(WRITE))
        assert error["code"] == "usage" and "403" in error["message"] and "mnem:redact" in error["message"]
        assert store_fingerprint(served.store) == at_hub  # nothing moved
        pushed = ok("--json", "push", "hub", "main", cwd=local, env=served.env(REDACT)).json
        assert (pushed["status"], pushed["redactions"]) == ("up-to-date", 1)

        clean(local, stored, before, "main", "side")
        clean(served.store, stored, before, "main", "side")
        for store in (local, served.store):
            assert not holds(ok("export", "--seal", cwd=store).out.encode(), SECRET, stored)
        fetched = ok("--json", "fetch", cwd=tmp_path / "early", env=served.env("mnem:read")).json
        assert fetched["redactions"] == 1  # the erasure reached a clone made before it
        clean(tmp_path / "early", stored, before, "main", "origin/side")
        ok("clone", served.server.url, str(tmp_path / "from-hub"), cwd=tmp_path, env=served.env("mnem:read"))
        ok("clone", str(local), str(tmp_path / "from-local"), cwd=tmp_path)
        for clone in ("from-hub", "from-local"):
            clean(tmp_path / clone, stored, before, "main", "origin/side")


async def test_a_pack_with_records_a_push_did_not_declare_is_refused_without_mnem_redact(tmp_path: Path) -> None:
    local = new_store(tmp_path / "local", "sqlite")
    write(local, "the key", 1000, {NODE: {"token": SECRET}})
    with hub(tmp_path, "sqlite") as served:
        ok("remote", "add", "hub", served.server.url, cwd=local)
        ok("push", "hub", "main", cwd=local, env=served.env(WRITE))
        ok("redact", "--node", NODE, "--reason", "leaked token", cwd=local)
        tip = ok("resolve", "main", cwd=local).out.strip()
        request = {"want": [], "have": [tip], "redactions": [version_of(local, NODE).hex()]}
        pack = base64.b64decode(ok("--json", "upload-pack", cwd=local, input=json.dumps(request)).json["pack"])
        before = store_fingerprint(served.store)
        url = f"{served.server.url}/sync/receive?branch=main&old={tip}&new={tip}&force=0"
        for query, status, scope in (("", 400, WRITE), ("&redactions=1", 403, WRITE)):
            token = served.issuer.mint("alice@example.com", scope=scope)
            answer = httpx2.post(url + query, content=pack, timeout=30, headers={
                "Authorization": f"Bearer {token}", "Content-Type": "application/cbor"})
            assert answer.status_code == status, answer.text
            assert store_fingerprint(served.store) == before
        assert answer.json()["error"] == "insufficient_scope"
        token = served.issuer.mint("alice@example.com", scope=REDACT)
        answer = httpx2.post(url + "&redactions=1", content=pack, timeout=30, headers={
            "Authorization": f"Bearer {token}", "Content-Type": "application/cbor"})
        assert answer.status_code == 200 and answer.json()["redactions"] == 1


def test_without_authentication_a_push_brings_its_records_as_it_brings_writes(tmp_path: Path) -> None:
    local = new_store(tmp_path / "local", "sqlite")
    write(local, "the key", 1000, {NODE: {"token": SECRET}})
    served = new_store(tmp_path / "hub", "sqlite")
    server = HttpServer(served, ["--auth", "none"])
    try:
        ok("remote", "add", "hub", server.url, cwd=local)
        ok("push", "hub", "main", cwd=local)
        stored = stored_form(served, version_of(served, NODE))
        ok("redact", "--node", NODE, "--reason", "leaked token", cwd=local)
        assert ok("--json", "push", "hub", "main", cwd=local).json["redactions"] == 1
    finally:
        server.stop()
    assert not holds(files(served), SECRET, stored)
