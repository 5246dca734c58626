"""``mnem-mcp --auth jwt`` as an OAuth resource server, end to end with real parts.

One ``mnem-mcp`` process over HTTP (module scope) checks tokens from a local
issuer that signs them with a key made here and publishes it through OIDC
discovery; the ``mcp`` client sends them.  Each bad token is refused with a
401 naming the Protected Resource Metadata; a token without ``mnem:read``
gets 403 ``insufficient_scope``; one without ``mnem:write`` may read but
its writes are typed tool errors; and every write records the token's
subject as its commit author.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import jwt
import pytest
from conftest import new_store, run_mnem
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from http_support import READ_WRITE, HttpServer, Issuer, connect, free_port
from mcp_support import call, fail

from mnem_mcp.dev_issuer import KID

pytestmark = pytest.mark.anyio

#: An HMAC key: a token signed with one is refused whoever knows it (only the issuer's public keys count).
SHARED_SECRET = "a-shared-secret-of-at-least-32-bytes"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


class Setup:
    """The module's issuer and server."""

    def __init__(self, store: Path, issuer: Issuer, server: HttpServer) -> None:
        self.store, self.issuer, self.server = store, issuer, server


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    store = new_store(tmp_path_factory.mktemp("http-auth") / "store", "sqlite")
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(audience)
    try:
        server = HttpServer(store, ["--auth", "jwt", "--issuer", issuer.url, "--audience", audience], port=port)
        try:
            yield Setup(store, issuer, server)
        finally:
            server.stop()
    finally:
        issuer.close()


def post(setup: Setup, token: str | None, body: dict[str, Any] = INITIALIZE) -> httpx2.Response:
    """One raw JSON-RPC POST to the module's server, with ``token`` as the bearer token."""
    return post_to(setup.server.url, token, body)


def post_to(url: str, token: str | None, body: dict[str, Any] = INITIALIZE) -> httpx2.Response:
    """One raw JSON-RPC POST to an MCP endpoint, with ``token`` as the bearer token."""
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return httpx2.post(url, json=body, headers=headers, timeout=30)


def metadata_url(setup: Setup) -> str:
    return f"http://127.0.0.1:{setup.server.port}/.well-known/oauth-protected-resource/mcp"


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_write_records_the_token_subject_as_its_author(setup: Setup, era: str) -> None:
    subject = f"{era}-user@example.com"
    async with connect(setup.server.url, setup.issuer.mint(subject), era=era) as client:
        written = await call(client, "remember", id=f"plan-{era}", content="pro", source="ticket-1")
        refused = await fail(client, "remember", id=f"plan-{era}", content="x", author="mallory")
        assert refused.startswith("usage: remember: author: unknown argument")  # no one writes as another
        commits = await call(client, "history", limit=5)
        why = await call(client, "why", id=f"plan-{era}")
    mine = next(commit for commit in commits if commit["id"] == written["commit"])
    assert mine["author"] == subject
    assert (why["commit"], why["author"]) == (written["commit"], subject)  # why names the commit and who made it
    log = run_mnem("--json", "log", cwd=setup.store).json  # the store itself says who, outside MCP too
    assert any(entry["id"] == written["commit"] and entry["author"] == subject for entry in log)


async def test_a_token_without_a_subject_writes_as_its_client(setup: Setup) -> None:
    async with connect(setup.server.url, setup.issuer.mint(None, client_id="nightly-batch")) as client:
        written = await call(client, "remember", id="batch", content=1)
        commits = await call(client, "history", limit=5)
    assert next(c for c in commits if c["id"] == written["commit"])["author"] == "nightly-batch"


async def test_scp_lists_and_several_audiences_are_understood(setup: Setup) -> None:
    token = setup.issuer.mint("carol", scope=None, scp=["mnem:read", "mnem:write"],
                              audience=["https://other.example.com", setup.issuer.audience])
    async with connect(setup.server.url, token) as client:
        written = await call(client, "remember", id="scp", content=True)
        commits = await call(client, "history", limit=5)
    assert next(c for c in commits if c["id"] == written["commit"])["author"] == "carol"


def _other_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _segment(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _forged(issuer: Issuer, alg: str) -> str:
    """A token with every claim right, signed as an attacker without the issuer's private key can.

    ``none``: no signature at all.  ``HS256``: an HMAC keyed with the issuer's
    *public* key (what anyone can fetch from its JWKS), the algorithm-confusion
    attack on a verifier that would take the published key as an HMAC secret.
    PyJWT refuses to make either, so the token is put together by hand.
    """
    claims = {"iss": issuer.url, "aud": issuer.audience, "exp": 10**10, "sub": "mallory", "scope": READ_WRITE}
    header = _segment(json.dumps({"alg": alg, "kid": KID, "typ": "at+jwt"}).encode())
    signing_input = f"{header}.{_segment(json.dumps(claims).encode())}"
    if alg == "none":
        return f"{signing_input}."
    public = issuer.key.public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo)
    return f"{signing_input}.{_segment(hmac.new(public, signing_input.encode(), hashlib.sha256).digest())}"


@pytest.mark.parametrize("make", [
    pytest.param(lambda issuer: None, id="no-token"),
    pytest.param(lambda issuer: issuer.mint(expires_in=-120), id="expired"),
    pytest.param(lambda issuer: issuer.mint(audience="https://other.example.com/mcp"), id="wrong-audience"),
    pytest.param(lambda issuer: issuer.mint(key=_other_key()), id="wrong-signature"),
    pytest.param(lambda issuer: issuer.mint(iss="https://evil.example.com"), id="wrong-issuer"),
    pytest.param(lambda issuer: issuer.mint(nbf=10**10), id="not-yet-valid"),
    pytest.param(lambda issuer: jwt.encode({"iss": issuer.url, "aud": issuer.audience, "exp": 10**10, "sub": "x",
                                            "scope": READ_WRITE}, SHARED_SECRET, algorithm="HS256",
                                           headers={"kid": KID}), id="shared-secret"),
    pytest.param(lambda issuer: "not.a.jwt", id="garbage"),
    pytest.param(lambda issuer: _forged(issuer, "none"), id="alg-none"),
    pytest.param(lambda issuer: _forged(issuer, "HS256"), id="hs256-keyed-with-the-public-key"),
])
def test_a_bad_token_is_refused_with_a_pointer_to_the_metadata(setup: Setup, make: Any) -> None:
    response = post(setup, make(setup.issuer))
    assert response.status_code == 401, response.text
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{metadata_url(setup)}"' in challenge
    assert response.json()["error"] == "invalid_token"
    described = response.json()["error_description"]
    assert described and f'error_description="{described}"' in challenge  # RFC 6750: the reason, in both


def challenge_of(response: httpx2.Response) -> dict[str, str]:
    """The ``WWW-Authenticate: Bearer`` parameters of a 401, by name (RFC 6750's quoted strings)."""
    assert response.status_code == 401, response.text
    scheme, _, parameters = response.headers["www-authenticate"].partition(" ")
    assert scheme == "Bearer"
    return dict(re.findall(r'(\w+)="([^"]*)"', parameters))


def test_a_token_for_another_audience_is_refused_naming_both(setup: Setup) -> None:
    other = "https://other.example.com/mcp"
    challenge = challenge_of(post(setup, setup.issuer.mint(audience=other)))
    assert challenge["error"] == "invalid_token"
    assert f"audience (aud) is '{other}', not this server's '{setup.issuer.audience}'" in challenge[
        "error_description"]
    assert f"ask the issuer for a token for {setup.issuer.audience}" in challenge["error_description"]
    grant = {"grant_type": "client_credentials", "client_id": "support-agent", "resource": other}  # the recipe's way
    token = httpx2.post(f"{setup.issuer.url}/token", data=grant, timeout=10).json()["access_token"]
    assert challenge_of(post(setup, token))["error_description"] == challenge["error_description"]


def test_an_expired_token_and_one_from_another_issuer_say_so(setup: Setup) -> None:
    expired = challenge_of(post(setup, setup.issuer.mint(expires_in=-3600)))["error_description"]
    assert re.fullmatch(r"the token expired at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: get a new one from the issuer",
                        expired), expired
    foreign = challenge_of(post(setup, setup.issuer.mint(iss="https://evil.example.com")))["error_description"]
    assert foreign == (f"the token was issued by 'https://evil.example.com'; this server accepts tokens from "
                       f"'{setup.issuer.url}' only")


def test_a_description_is_a_valid_quoted_string_whatever_the_token_holds(setup: Setup) -> None:
    response = post(setup, setup.issuer.mint(audience='https://x.example.com/"quoted"\\ünï'))
    described = challenge_of(response)["error_description"]
    assert "https://x.example.com/?quoted??" in described and "\\" not in described
    assert "ünï" in response.json()["error_description"]  # the JSON body keeps it whole


def test_an_unreachable_issuer_is_a_503_with_the_reason_and_the_server_recovers(tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", "sqlite")
    issuer_port, port = free_port(), free_port()
    audience, issuer_url = f"http://127.0.0.1:{port}/mcp", f"http://127.0.0.1:{issuer_port}"
    server = HttpServer(store, ["--auth", "jwt", "--issuer", issuer_url, "--audience", audience], port=port)
    try:
        down = post_to(server.url, "a.b.c")  # any token: none can be checked without the issuer's keys
        assert down.status_code == 503, down.text
        assert down.json()["error"] == "temporarily_unavailable"
        described = down.json()["error_description"]
        assert described.startswith(f"cannot check tokens: no discovery document of the issuer {issuer_url} could "
                                    "be read")
        assert "Check that the issuer is up" in described
        assert "cannot check tokens" in server.stderr()  # the operator's log says it too
        issuer = Issuer(audience, port=issuer_port)  # the issuer comes up: the next token is checked
        try:
            assert post_to(server.url, issuer.mint()).status_code == 200
        finally:
            issuer.close()
    finally:
        server.stop()


def test_an_unreachable_key_set_is_a_503_naming_it(tmp_path: Path) -> None:
    store = new_store(tmp_path / "store", "sqlite")
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(audience)
    jwks = f"http://127.0.0.1:{free_port()}/jwks.json"
    try:
        server = HttpServer(store, ["--auth", "jwt", "--issuer", issuer.url, "--audience", audience,
                                    "--jwks-url", jwks], port=port)
        try:
            down = post_to(server.url, issuer.mint())
        finally:
            server.stop()
    finally:
        issuer.close()
    assert down.status_code == 503, down.text
    assert down.json()["error_description"].startswith("cannot check tokens: the issuer's key set could not be "
                                                       "fetched")
    assert f"Check that the issuer {issuer.url} is up, or name its key set with --jwks-url" in down.json()[
        "error_description"]


def test_a_token_without_the_read_scope_gets_403_insufficient_scope(setup: Setup) -> None:
    response = post(setup, setup.issuer.mint(scope="mnem:write"))
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
    assert "mnem:read" in response.json()["error_description"]


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_read_only_token_reads_but_every_write_is_refused(setup: Setup, era: str) -> None:
    async with connect(setup.server.url, setup.issuer.mint("reader", scope="mnem:read"),
                       era=era) as client:
        before = await call(client, "history", limit=1)
        text = await fail(client, "remember", id="sneaky", content="x")
        assert text.startswith("insufficient_scope: remember changes memory and needs the scope mnem:write")
        assert "mnem:read mnem:write" in text  # names the fix
        assert (await fail(client, "forget", id="batch")).startswith("insufficient_scope: ")
        assert await call(client, "recall", id="sneaky") is None
        assert await call(client, "history", limit=1) == before
        listed = await client.read_resource("mnem://log")
        assert listed.contents


def test_the_protected_resource_metadata_names_issuer_resource_and_its_scopes(setup: Setup) -> None:
    root = f"http://127.0.0.1:{setup.server.port}/.well-known/oauth-protected-resource"
    for url in (metadata_url(setup), root):
        document = httpx2.get(url, timeout=10).json()
        assert document["resource"] == setup.issuer.audience
        assert document["authorization_servers"] == [setup.issuer.url]
        assert document["scopes_supported"] == ["mnem:read", "mnem:write", "mnem:redact"]
        assert document["bearer_methods_supported"] == ["header"]
