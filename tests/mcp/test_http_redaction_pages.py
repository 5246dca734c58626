"""Redaction records of any number travel over HTTP: a real ``mnem-mcp`` sums its records up, answers ranges of
them and takes them in pages (docs/remotes.md, "Redactions travel" and "HTTP remotes").

The remote is a real ``mnem-mcp --transport streamable-http`` serving a real store; the real ``mnem`` reaches it
through a recording proxy (``HostileRemote`` forwarding every request as it is), so a test reads each page that
went by.  The page is ``MNEM_REDACTION_PAGE``, set small so a few hundred records make several pages.
"""

from __future__ import annotations

import base64
import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import cbor2
import pytest
from conftest import new_store, run_mnem, store_fingerprint, store_sql
from hostile_remote import Answer, HostileRemote, Reply
from http_support import HttpServer, served_with_jwt
from mnem_history import ok, write
from redaction_support import records

PAGE = 50
REDACT = "mnem:read mnem:write mnem:redact"
SMALL = {"MNEM_REDACTION_PAGE": str(PAGE)}



def kept(store: Path) -> list[bytes]:
    return [bytes(row[0]) for row in store_sql(store, "SELECT object FROM redactions ORDER BY object")]


def forward(target: str) -> Reply:
    """A ``HostileRemote`` reply passing each request to ``target`` (a mnem-mcp endpoint) and its answer back."""
    parts = urlsplit(target)

    def reply(path: str, body: bytes) -> Answer:
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
        try:
            kind = "application/json" if path.startswith(("/mcp/sync/upload", "/mcp/sync/ranges")) \
                else "application/cbor"
            connection.request("GET" if path.startswith("/mcp/sync/refs") else "POST", path, body=body,
                               headers={"Content-Type": kind, "Host": f"{parts.hostname}:{parts.port}"})
            answer = connection.getresponse()
            return Answer(answer.status, answer.read(), answer.getheader("Content-Type") or "")
        finally:
            connection.close()

    return reply


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[tuple[Path, HostileRemote]]:
    """A served store (``--auth none``), and a recording proxy in front of it."""
    store = new_store(tmp_path / "hub", "sqlite")
    server = HttpServer(store, ["--auth", "none"])
    try:
        with HostileRemote() as proxy:
            for route in ("refs", "upload", "receive", "ranges", "records"):
                proxy.answers[route] = forward(server.url)
            yield store, proxy
    finally:
        server.stop()


def pages(proxy: HostileRemote) -> tuple[list[int], list[int]]:
    """How many records each page sent (``records``) carried, and how many ids each page asked for named."""
    sent = [len(cbor2.loads(body)["redactions"]) for _, path, body in proxy.requests if path.endswith("/records")]
    asked = [len(json.loads(body)["redactions"]) for _, path, body in proxy.requests
             if path.endswith("/upload") and not json.loads(body)["want"]]
    return sent, asked


def test_a_push_a_clone_and_a_fetch_carry_records_in_pages_over_http(
        hub: tuple[Path, HostileRemote], tmp_path: Path) -> None:
    served, proxy = hub
    local = new_store(tmp_path / "local", "sqlite")
    write(local, "the key", 1_000, {"thread:7:checkpoint": {"token": "sk-9"}})
    ok("redact", "--node", "thread:7:checkpoint", "--reason", "retention", cwd=local)
    records(local, 230, "local")
    ok("remote", "add", "hub", proxy.url, cwd=local)

    pushed = ok("--json", "push", "hub", "main", cwd=local, env=SMALL).json
    assert (pushed["status"], pushed["redactions"]) == ("created", 231)
    assert pages(proxy) == ([PAGE, PAGE, PAGE, PAGE, 31], [])
    assert kept(served) == kept(local)
    assert ok("--json", "verify", cwd=served).json["redacted"] == 1

    proxy.requests.clear()
    dest = tmp_path / "dest"
    cloned = ok("--json", "clone", proxy.url, str(dest), cwd=tmp_path, env=SMALL).json
    assert cloned["redactions"] == 231 and pages(proxy) == ([], [PAGE, PAGE, PAGE, PAGE, 31])
    assert kept(dest) == kept(served)

    records(served, 70, "hub")
    proxy.requests.clear()
    assert ok("--json", "fetch", cwd=dest, env=SMALL).json["redactions"] == 70
    assert pages(proxy) == ([], [PAGE, 20]) and kept(dest) == kept(served)


def post_page(url: str, page: bytes, token: str) -> tuple[int, Any]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    try:
        connection.request("POST", f"{parts.path}/sync/records", body=page, headers={
            "Content-Type": "application/cbor", "Authorization": f"Bearer {token}"})
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def test_a_page_of_records_needs_mnem_redact_and_without_it_nothing_moves(tmp_path: Path) -> None:
    """Sent as the route takes it, and as ``mnem push`` sends it: without ``mnem:redact`` a ``403`` that the
    push reads as ``usage`` naming the scope, and the served store is as it was."""
    local = new_store(tmp_path / "local", "sqlite")
    write(local, "start", 1_000, {"a": 1})
    records(local, 3, "page")
    asked = {"want": [], "have": [], "redactions": [raw.hex() for raw in kept(local)]}
    page = base64.b64decode(ok("--json", "upload-pack", cwd=local, input=json.dumps(asked)).json["pack"])
    served = new_store(tmp_path / "hub", "sqlite")
    with served_with_jwt(served) as (issuer, server):
        before = store_fingerprint(served)
        status, doc = post_page(server.url, page, issuer.mint("alice@example.com", scope="mnem:read mnem:write"))
        assert (status, doc["error"]) == (403, "insufficient_scope") and store_fingerprint(served) == before
        status, doc = post_page(server.url, page, issuer.mint("alice@example.com", scope=REDACT))
        assert (status, doc) == (200, {"redactions": 3}) and kept(served) == kept(local)

        ok("remote", "add", "hub", server.url, cwd=local)
        writer = {"MNEM_TOKEN": issuer.mint("alice@example.com", scope="mnem:read mnem:write"), **SMALL}
        ok("push", "hub", "main", cwd=local, env=writer)
        records(local, 120, "local")
        before = store_fingerprint(served)
        result = run_mnem("--json", "push", "hub", "main", cwd=local, env=writer)
        error = json.loads(result.out)["error"]
        assert error["code"] == "usage" and "mnem:redact" in error["message"], error
        assert store_fingerprint(served) == before
        redactor = {"MNEM_TOKEN": issuer.mint("alice@example.com", scope=REDACT), **SMALL}
        assert ok("--json", "push", "hub", "main", cwd=local, env=redactor).json["redactions"] == 120
    assert kept(served) == kept(local)
