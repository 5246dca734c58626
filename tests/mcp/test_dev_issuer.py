"""``python -m mnem_mcp.dev_issuer``: the development issuer of docs/mcp-http.md's recipe, as a process.

The recipe itself runs in tests/test_docs_blocks.py; here are the parts it
does not take: the token endpoint's refusals (RFC 6749 errors that name the
fix), a token for another resource, and the loopback-only rule.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import httpx2
import jwt
import pytest
from http_support import free_port
from manual_clock import eventually

#: The issuer's default audience: mnem-mcp's default endpoint.
AUDIENCE = "http://127.0.0.1:8765/mcp"


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    """The issuer as a process on a free port; its URL."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "mnem_mcp.dev_issuer", "--port", str(port)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        eventually(lambda: answers(f"{url}/jwks.json", process), "the issuer listened")  # the bound: a hang's
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


def answers(url: str, process: subprocess.Popen[bytes]) -> bool:
    """Whether the issuer answers at ``url`` yet (it must still be running)."""
    try:
        httpx2.get(url, timeout=10)
        return True
    except httpx2.TransportError:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        return False


def token_request(url: str, **form: str) -> httpx2.Response:
    return httpx2.post(f"{url}/token", data=form, timeout=10)


def test_discovery_names_the_key_set_and_the_token_endpoint(issuer: str) -> None:
    for path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
        document = httpx2.get(issuer + path, timeout=10).json()
        assert (document["issuer"], document["jwks_uri"], document["token_endpoint"]) == (
            issuer, f"{issuer}/jwks.json", f"{issuer}/token")
    assert httpx2.get(f"{issuer}/nothing", timeout=10).status_code == 404


def test_a_client_gets_a_token_naming_it_for_the_audience_or_the_resource_it_asks(issuer: str) -> None:
    keys = jwt.PyJWKClient(f"{issuer}/jwks.json")
    answer = token_request(issuer, grant_type="client_credentials", client_id="support-agent").json()
    assert (answer["token_type"], answer["scope"], answer["expires_in"]) == ("Bearer", "mnem:read mnem:write", 3600)
    token = answer["access_token"]
    claims = jwt.decode(token, keys.get_signing_key_from_jwt(token), algorithms=["ES256"], audience=AUDIENCE,
                        issuer=issuer)
    assert (claims["sub"], claims["client_id"], claims["scope"]) == ("support-agent", "support-agent",
                                                                      "mnem:read mnem:write")
    other = token_request(issuer, grant_type="client_credentials", client_id="x", scope="mnem:read",
                          resource="https://other.example.com/mcp").json()["access_token"]
    assert jwt.decode(other, options={"verify_signature": False})["aud"] == "https://other.example.com/mcp"


@pytest.mark.parametrize(("form", "error", "says"), [
    ({"grant_type": "password", "client_id": "x"}, "unsupported_grant_type", "client_credentials only"),
    ({"grant_type": "client_credentials"}, "invalid_request", "client_id is required"),
    ({"grant_type": "client_credentials", "client_id": "x", "scope": "mnem:admin"}, "invalid_scope",
     "unknown scope mnem:admin; the scopes are mnem:read mnem:write"),
])
def test_a_bad_token_request_is_an_oauth_error_naming_the_fix(issuer: str, form: dict[str, str], error: str,
                                                              says: str) -> None:
    response = token_request(issuer, **form)
    assert response.status_code == 400
    assert response.json()["error"] == error and says in response.json()["error_description"]


def test_it_listens_on_loopback_only() -> None:
    done = subprocess.run([sys.executable, "-m", "mnem_mcp.dev_issuer", "--host", "0.0.0.0", "--port", "0"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "listens on loopback only, not 0.0.0.0" in done.stderr and "Traceback" not in done.stderr
