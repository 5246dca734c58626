"""A signed token whose claims have the wrong types or ranges is refused 401 with a description, never a 500.

The issuer's signature makes a token's claims the issuer's word, but not
well formed: an issuer (or a misconfigured mapper) can put a string in
``exp``, a list in ``iss`` or a number in ``sub``.  Here real ES256 tokens,
signed by the development issuer's key over raw JSON (so any value can be
sent, ``NaN`` and integers of hundreds of digits among them), go to a real
``mnem-mcp --auth jwt`` process: every token with a malformed claim is
answered ``401 invalid_token`` naming the claim, a well-formed one is
answered as its values deserve (200, 401 expired or foreign, 403 for scopes),
and none is a 500 or leaves a traceback in the server's log.  With
``--store-per tenant``, a tenant claim of the wrong type is the documented
``403 access_denied``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from fuzzing import tried
from http_support import READ_WRITE, HttpServer, Issuer, free_port
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jwt.api_jws import PyJWS

from mnem_mcp.auth import LATEST
from mnem_mcp.dev_issuer import KID

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
#: How many tokens each property sends: to one store's server, and to a server of a store per tenant.
EXAMPLES = 300
TENANT_EXAMPLES = 200
#: Claims that hold a time (RFC 7519's NumericDate), a text, or a text or list of texts.
TIMES = ("exp", "nbf", "iat")
TEXTS = ("iss", "sub", "client_id", "azp", "jti")
TEXT_OR_LIST = ("aud", "scope", "scp")

#: Any JSON value, with what breaks naive code: integers far past 64 bits, NaN and infinities, numeric text.
scalars = (st.none() | st.booleans() | st.integers(-(10**300), 10**300) | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12)
           | st.integers(-(10**12), 10**12).map(str) | st.sampled_from(["1e400", "NaN", "-0", "0x10", " 9 "]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)
#: Values of the right type (a time in range, a text, a list of texts), so a draw can mix good and bad claims.
good_times = st.integers(0, LATEST) | st.floats(0, LATEST)


class Served:
    """An issuer and the server that accepts its tokens."""

    def __init__(self, issuer: Issuer, server: HttpServer) -> None:
        self.issuer, self.server = issuer, server

    def token(self, claims: dict[str, Any]) -> str:
        """``claims`` over a valid token's, signed with the issuer's key as raw JSON (any value goes through)."""
        payload = {**self.issuer.claims("bob", scope=READ_WRITE), "client_id": "cli", **claims}
        raw = json.dumps(payload).encode()  # NaN and Infinity as Python writes them, which PyJWT reads back
        return PyJWS().encode(raw, self.issuer.key, algorithm="ES256", headers={"kid": KID, "typ": "at+jwt"})

    def post(self, token: str) -> httpx2.Response:
        return httpx2.post(self.server.url, json=INITIALIZE, timeout=30, headers={
            "accept": "application/json, text/event-stream", "authorization": f"Bearer {token}"})


def serving(tmp: Any, *extra: str, store: str | None = None) -> Iterator[Served]:
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    issuer = Issuer(audience)
    try:
        server = HttpServer(store or str(tmp / "store"), ["--auth", "jwt", "--issuer", issuer.url, "--audience",
                                                          audience, *extra], port=port)
        try:
            yield Served(issuer, server)
        finally:
            server.stop()
            assert "Traceback" not in server.stderr()
    finally:
        issuer.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serving(tmp_path_factory.mktemp("claims"))


@pytest.fixture(scope="module")
def tenants(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("claims-tenants")
    yield from serving(root, "--store-per", "tenant", store=str(root / "{tenant}"))


def well_formed(claim: str, value: Any) -> bool:
    """Whether a claim's value has the type and range this server reads it as."""
    if claim in TIMES:
        return (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
                and 0 <= value <= LATEST)
    if claim in TEXTS:
        return isinstance(value, str)
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(item, str) for item in value))


def described(response: httpx2.Response) -> str:
    body = response.json()
    assert isinstance(body["error_description"], str) and body["error_description"], body
    return str(body["error_description"])


claim_sets = st.dictionaries(st.sampled_from(TIMES + TEXTS + TEXT_OR_LIST), values | good_times | st.text(max_size=8),
                             min_size=1, max_size=3)


def answered_as_its_claims_deserve(served: Served, claims: dict[str, Any]) -> None:
    """A malformed claim is a 401 naming it; a tenant claim that is not a text is refused; nothing is a 500.

    A refusal always carries a description; a claim of the right type may still be refused for its value
    (expired, another audience or issuer, no scope), and a token with nothing wrong is served (200).
    """
    response = served.post(served.token(claims))
    assert response.status_code in (200, 401, 403), (claims, response.status_code, response.text)
    bad = sorted(claim for claim, value in claims.items() if claim != "tenant" and not well_formed(claim, value))
    if bad:
        assert response.status_code == 401, (claims, response.text)
        assert response.json()["error"] == "invalid_token"
        assert any(f"({claim})" in described(response) for claim in bad), (claims, response.text)
    elif not isinstance(claims.get("tenant", ""), str):  # refused; 401 when a well-formed claim is not valid here
        assert response.status_code in (401, 403), (claims, response.text)
        if response.status_code == 403:
            assert response.json()["error"] == "access_denied"
            assert "'tenant' claim" in described(response)
    if response.status_code != 200:
        described(response)


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(claims=claim_sets)
def test_every_malformed_claim_is_a_401_naming_it_and_no_token_is_a_500(served: Served, claims: dict[str, Any]
                                                                        ) -> None:
    tried("token claims")
    answered_as_its_claims_deserve(served, claims)


@settings(max_examples=TENANT_EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(claims=claim_sets, tenant=st.just("acme") | values.filter(lambda value: not isinstance(value, str)))
def test_with_a_store_per_tenant_a_malformed_claim_is_401_and_a_tenant_of_another_type_403(
        tenants: Served, claims: dict[str, Any], tenant: Any) -> None:
    tried("token claims")
    answered_as_its_claims_deserve(tenants, {**claims, "tenant": tenant})


@pytest.mark.parametrize(("claim", "value", "says"), [
    ("exp", "9999999999", "the token's expiry (exp) holds '9999999999', not a time"),
    ("exp", 10**400, "not a time"),
    ("nbf", 10**12, "the token's start (nbf) holds 1000000000000, not a time"),
    ("iat", -(10**30), "not a time"),
    ("iss", ["x"], "the token's issuer (iss) holds ['x'], not a text"),
    ("sub", 7, "the token's subject (sub) holds 7, not a text"),
    ("scp", [1, 2], "the token's scopes (scp) holds [1, 2], not a text or a list of texts"),
])
def test_the_description_names_the_claim_and_what_it_must_be(served: Served, claim: str, value: Any,
                                                             says: str) -> None:
    response = served.post(served.token({claim: value}))
    assert response.status_code == 401, response.text
    assert says in described(response)
