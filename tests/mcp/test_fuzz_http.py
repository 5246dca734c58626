"""Fuzz: whatever an HTTP client sends a real ``mnem-mcp`` (its sync routes, its MCP endpoint) gets an answer below 500.

One server (``--auth none``, so every route is reached) serves a store
holding the first three commits of a five-commit history; hypothesis
throws requests at it:

* **sync requests**: ``sync/upload`` bodies (random bytes, random JSON,
  want/have lists of real ids, other ids, text and numbers), ``sync/receive``
  query strings (branch, old, new, force: real, hostile, missing) with a
  real push's pack spoiled or random bytes, ``sync/refs``, ``sync/ranges``
  bodies (prefixes real, too long, not hex, too many), ``sync/records``
  with a real page of redaction records spoiled or random bytes, and
  methods a route does not take;
* **HTTP bodies and headers**: the MCP endpoint, with random bodies (bytes,
  JSON, JSON-RPC requests of real and made-up methods, real tools with
  random arguments, ids of every JSON type) under random ``Accept``,
  ``Content-Type``, protocol-version, session and extra headers.

Every answer is below 500, an error body names a code, a refusal changes
no row of the store, a push that is taken leaves a store that verifies,
and the server's log never holds a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx2
import pytest
from conftest import new_store, run_mnem, store_fingerprint
from fuzzing import tried
from http_support import HttpServer
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mnem_history import ok, write

VERSION = "2026-07-28"
#: The taxonomy, and what the HTTP layer adds (a token's refusal, a scope).
CODES = {"not_found", "invalid_ref", "conflict", "corrupt_store", "format_version", "store_exists", "no_store",
         "store_io", "busy", "usage", "error", "access_denied", "invalid_token", "insufficient_scope"}
WRITE_TOOLS = {"remember", "revise", "remember_many", "forget", "branch", "switch", "merge"}


class Target:
    """The server, its store, the ids a client might name, a real push (the pack of commits 4 and 5), and a real
    page of redaction records (of a version of commit 4's, redacted at the source after the push was made)."""

    def __init__(self, server: HttpServer, store: Path, ids: list[str], push: bytes, page: bytes) -> None:
        self.server, self.store, self.ids, self.push, self.page = server, store, ids, push, page
        self.client = httpx2.Client(timeout=60)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    folder = tmp_path_factory.mktemp("fuzz-http")
    source, served = new_store(folder / "source", "sqlite"), new_store(folder / "served", "sqlite")
    ids = [write(source, f"c{n}", 1000 + n, {f"fact-{n}": n}) for n in range(5)]
    for n in range(3):  # the same commits, so the same ids
        write(served, f"c{n}", 1000 + n, {f"fact-{n}": n})
    pack = folder / "push.pack"
    ok("upload-pack", f"--pack-file={pack}", cwd=source, input=json.dumps({"want": [ids[4]], "have": [ids[2]]}))
    version = ok("--json", "ls", "--objects", cwd=source).json["nodes"]["fact-4"]
    ok("redact", "--object", version, "--reason", "fuzz", cwd=source)
    page = folder / "records.pack"
    ok("upload-pack", f"--pack-file={page}", cwd=source,
       input=json.dumps({"want": [], "have": [], "redactions": [version]}))
    server = HttpServer(served, ("--auth", "none"), "--max-body", "1M", "--max-pack", "1M")
    found = Target(server, served, ids, pack.read_bytes(), page.read_bytes())
    try:
        yield found
    finally:
        found.client.close()
        server.stop()
        assert "Traceback" not in server.stderr(), server.stderr()


#: Header values a client may send: latin-1 text without the line breaks HTTP itself refuses to carry.
header_value = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
                       max_size=40).map(lambda text: text.strip(" ").encode("latin-1"))  # h11 refuses edge spaces
header_name = st.text("abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=12).filter(
    lambda name: name.strip("-") and name not in ("host", "content-length", "transfer-encoding", "connection"))
json_value = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
                          lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                       max_size=4), max_leaves=12)


def extra_headers() -> st.SearchStrategy[dict[str, str | bytes]]:
    return st.dictionaries(header_name, header_value, max_size=3)


def spoil(blob: bytes, data: st.DataObject) -> bytes:
    how = data.draw(st.sampled_from(["whole", "flip", "cut", "random"]))
    event(f"pack: {how}")
    if how == "flip":
        at = data.draw(st.integers(0, len(blob) - 1))
        return blob[:at] + bytes([data.draw(st.integers(0, 255))]) + blob[at + 1:]
    if how == "cut":
        return blob[:data.draw(st.integers(0, len(blob) - 1))]
    return blob if how == "whole" else data.draw(st.binary(max_size=200))


def answered(response: httpx2.Response) -> None:
    """Below 500, and an error body (JSON) names a code: ours, OAuth's, or JSON-RPC's."""
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.status_code >= 400 and response.headers.get("content-type", "").startswith("application/json"):
        body = response.json()
        error = body.get("error") if isinstance(body, dict) else None
        assert error is not None, body
        assert (error["code"] in CODES or isinstance(error["code"], int)) if isinstance(error, dict) \
            else error in CODES, body


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_sync_request_is_answered_below_500_and_a_refusal_writes_nothing(target: Target,
                                                                         data: st.DataObject) -> None:
    route = data.draw(st.sampled_from(["upload", "receive", "refs", "ranges", "records", "wrong-method"]))
    real_id = st.sampled_from(target.ids)
    some_id = real_id | st.text("0123456789abcdef", min_size=64, max_size=64) | st.text(max_size=70) | st.integers()
    headers = data.draw(extra_headers())
    before = store_fingerprint(target.store)
    url = f"{target.server.url}/sync/{route}"
    if route == "upload":
        body = data.draw(st.one_of(
            st.binary(max_size=200),
            json_value.map(lambda value: json.dumps(value).encode()),
            st.fixed_dictionaries({"want": st.lists(some_id, max_size=4), "have": st.lists(some_id, max_size=4)})
            .map(lambda value: json.dumps(value).encode())))
        headers["content-type"] = data.draw(st.sampled_from(["application/json", "application/cbor", "text/plain"]))
        tried("sync requests")
        response = target.client.post(url, content=body, headers=headers)
    elif route == "receive":
        right = {"branch": "main", "old": target.ids[2], "new": target.ids[4], "force": "0"}
        query = data.draw(st.just(right) | st.dictionaries(
            st.sampled_from(["branch", "old", "new", "force", "other"]),
            st.one_of(st.sampled_from(["main", "side", "", "0", "1"]), real_id, st.text(max_size=20)), max_size=5))
        headers["content-type"] = "application/cbor"
        body = spoil(target.push, data)
        tried("sync requests")
        response = target.client.post(f"{url}?{urlencode(query)}", content=body, headers=headers)
    elif route == "ranges":
        prefix = st.text("0123456789abcdef", max_size=66) | st.text(max_size=6) | st.integers() | st.none()
        body = data.draw(st.one_of(
            st.binary(max_size=200), json_value.map(lambda value: json.dumps(value).encode()),
            st.fixed_dictionaries({"prefixes": st.lists(prefix, max_size=300)}).map(
                lambda value: json.dumps(value).encode())))
        headers["content-type"] = "application/json"
        tried("sync requests")
        response = target.client.post(url, content=body, headers=headers)
    elif route == "records":
        headers["content-type"] = "application/cbor"
        body = spoil(target.page, data)
        tried("sync requests")
        response = target.client.post(url, content=body, headers=headers)
    elif route == "refs":
        query_text = quote(data.draw(st.text(max_size=20)), safe="=&")
        tried("sync requests")
        response = target.client.get(f"{url}?{query_text}", headers=headers)
    else:
        method, where = data.draw(st.sampled_from([("GET", "upload"), ("PUT", "receive"), ("POST", "refs"),
                                                   ("DELETE", "refs"), ("POST", "nothing")]))
        tried("sync requests")
        response = target.client.request(method, f"{target.server.url}/sync/{where}", headers=headers)
    event(f"{route}: {response.status_code}")
    answered(response)
    if route in ("receive", "records") and response.status_code == 200:
        assert run_mnem("verify", cwd=target.store).code == 0
    else:
        assert store_fingerprint(target.store) == before


def mcp_body(data: st.DataObject, well_formed: bool) -> tuple[bytes, str | None, str]:
    """A body for the MCP endpoint, the tool it calls (None: no tool call) and its method ("": none).

    ``well_formed``: a JSON-RPC request as a 2026-07-28 client shapes one (an
    integer id, params with the protocol's ``_meta``), so that the random
    part (the method, the tool, its arguments, params) reaches the server's
    handlers rather than the transport's first check.
    """
    kind = data.draw(st.sampled_from(["request", "tool"] if well_formed else ["bytes", "json", "request", "tool"]))
    if kind == "bytes":
        return data.draw(st.binary(max_size=200)), None, ""
    if kind == "json":
        return json.dumps(data.draw(json_value)).encode(), None, ""
    ident = data.draw(st.integers(0, 2**31) if well_formed else
                      st.one_of(st.integers(), st.text(max_size=8), st.none(), st.floats(allow_nan=False),
                                st.lists(st.integers(), max_size=2)))
    tool: str | None = None
    if kind == "request":
        method = data.draw(st.sampled_from(["initialize", "ping", "tools/list", "resources/list", "resources/read",
                                            "resources/templates/list", "prompts/list", "notifications/initialized",
                                            "completion/complete", "logging/setLevel"]) | st.text(max_size=16))
        params: Any = data.draw(st.one_of(st.dictionaries(st.text(max_size=8), json_value, max_size=3),
                                          st.just({"uri": "mnem://memory"}), st.just({"uri": "mnem://memory/fact-1"}),
                                          *([] if well_formed else [json_value])))
    else:
        tool = data.draw(st.sampled_from(["remember", "recall", "why", "history", "when_did", "whats_new", "forget",
                                          "recall_at", "remember_many", "nope"]))
        arguments = st.dictionaries(st.sampled_from(["id", "content", "limit", "at", "commit", "equals", "items"])
                                    | st.text(max_size=6), json_value, max_size=4)
        method, params = "tools/call", {"name": tool, "arguments": data.draw(arguments if well_formed else json_value)}
    if isinstance(params, dict) and (well_formed or data.draw(st.booleans())):
        params = {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": VERSION,
                                      "io.modelcontextprotocol/clientCapabilities": {}}}
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode(), tool, method


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_mcp_endpoint_answers_any_body_and_headers_below_500(target: Target, data: st.DataObject) -> None:
    verb = data.draw(st.sampled_from(["POST", "POST", "POST", "GET", "DELETE"]))
    well_formed = data.draw(st.booleans())  # headers and body as a 2026-07-28 client sends them
    body, tool, method = mcp_body(data, well_formed) if verb == "POST" else (b"", None, "")
    headers = data.draw(extra_headers())
    if well_formed:
        carried = method.isascii() and method.isprintable() and method == method.strip()  # a made-up one may not be
        headers.update({"accept": "application/json, text/event-stream", "content-type": "application/json",
                        "mcp-protocol-version": VERSION, **({"mcp-method": method} if carried else {}),
                        **({"mcp-name": tool} if tool else {})})
    else:
        headers["accept"] = data.draw(st.sampled_from(["application/json, text/event-stream", "application/json",
                                                       "text/event-stream", "*/*"]) | header_value)
        headers["content-type"] = data.draw(st.sampled_from(["application/json", "text/plain"]) | header_value)
        headers["mcp-protocol-version"] = data.draw(st.sampled_from([VERSION, "2025-11-25", "2025-06-18"])
                                                    | header_value)
        if data.draw(st.booleans()):
            headers["mcp-session-id"] = data.draw(header_value)
    before = store_fingerprint(target.store)
    tried("http bodies and headers")
    response = target.client.request(verb, target.server.url, content=body, headers=headers)
    event(f"{verb}: {response.status_code}")
    answered(response)
    if tool not in WRITE_TOOLS:
        assert store_fingerprint(target.store) == before
    assert target.server.process.poll() is None, "the server died"


def test_the_server_still_serves_after_the_fuzz(target: Target) -> None:
    """The same server answers a plain read once every input above was thrown at it."""
    refs = target.client.get(f"{target.server.url}/sync/refs")
    assert refs.status_code == 200 and set(refs.json()["branches"]) >= {"main"}
