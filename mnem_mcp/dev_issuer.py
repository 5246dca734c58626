"""A development OAuth issuer on loopback, to try ``mnem-mcp --auth jwt`` without an identity provider.

``python -m mnem_mcp.dev_issuer`` plays the part Keycloak, Auth0 or Entra ID
play in production (docs/mcp-http.md, "Try it locally"): it makes a P-256
signing key when it starts and publishes it the way every OIDC issuer does,
so ``mnem-mcp`` checks its tokens through the same discovery, key set and
claim checks as a real issuer's:

* ``/.well-known/openid-configuration`` (and RFC 8414's
  ``/.well-known/oauth-authorization-server``): the issuer, ``jwks_uri``,
  ``token_endpoint``;
* ``/jwks.json``: the public key;
* ``POST /token``: OAuth's client credentials grant (RFC 6749, 4.4) with no
  client secret.  ``client_id`` becomes the token's subject, which is the
  author ``mnem-mcp`` records for its writes; ``scope`` defaults to
  ``mnem:read mnem:write``; ``resource`` (RFC 8707) defaults to
  ``--audience``, and another value mints a token for another audience,
  which is how a wrong-audience refusal can be seen.

It is for development only: anyone who can reach it gets a token, so it
listens on loopback and nowhere else, and its key lives only as long as
the process.  The standard library's HTTP server and PyJWT (``mnem-mcp``'s
own token checker) are all it is built on; tests/mcp/http_support.py runs
it as the test suite's issuer.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final
from urllib.parse import parse_qs

try:
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec
    from jwt.algorithms import ECAlgorithm
except ImportError as missing:  # the http extra: the message names its install
    from mnem_bridge.install import pip_install

    _NEEDS = f"mnem_mcp.dev_issuer needs PyJWT with cryptography ({missing}): {pip_install('http')}"
    if __name__ == "__main__":  # run as a program (python -m): the message alone, not a traceback
        raise SystemExit(_NEEDS) from None
    raise ImportError(_NEEDS, name=missing.name) from missing

from .identity import READ_SCOPE, SCOPES, WRITE_SCOPE
from .loopback import is_loopback

__all__ = ["AUDIENCE", "KID", "DevIssuer", "main"]

logger = logging.getLogger(__name__)

#: The id of the issuer's one key, named in every token's header.
KID: Final = "dev-key-1"
#: The scopes a token gets when the client asks for none: read and write (``mnem:redact`` only when asked for).
ALL_SCOPES: Final = f"{READ_SCOPE} {WRITE_SCOPE}"
#: The default audience: ``mnem-mcp --transport http``'s endpoint with its default host, port and path.
AUDIENCE: Final = "http://127.0.0.1:8765/mcp"
#: The default port (``mnem-mcp`` itself defaults to 8765).
PORT: Final = 9000
#: Seconds a token stays valid by default.
LIFETIME: Final = 3600


class DevIssuer:
    """The issuer: its key, its documents, and an HTTP server for them (``start`` serves on a thread).

    Args:
        audience: The resource URI tokens are minted for unless a request names another.
        host: The loopback address to listen on.
        port: The port (0: any free one; ``url`` says which).
        lifetime: Seconds each minted token is valid.

    Raises:
        ValueError: ``host`` is not a loopback address.
        OSError: The port cannot be bound.
    """

    def __init__(self, audience: str = AUDIENCE, *, host: str = "127.0.0.1", port: int = 0,
                 lifetime: int = LIFETIME) -> None:
        if not is_loopback(host):
            raise ValueError(f"a development issuer gives a token to anyone who asks: it listens on loopback only, "
                             f"not {host}")
        self.audience = audience
        self.lifetime = lifetime
        self.key = ec.generate_private_key(ec.SECP256R1())
        jwk = {**ECAlgorithm.to_jwk(self.key.public_key(), as_dict=True), "kid": KID, "use": "sig", "alg": "ES256"}
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self.url = f"http://{host}:{self._server.server_address[1]}"
        metadata = {
            "issuer": self.url, "jwks_uri": f"{self.url}/jwks.json", "token_endpoint": f"{self.url}/token",
            "grant_types_supported": ["client_credentials"], "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": list(SCOPES), "response_types_supported": ["token"],
            "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["ES256"],
        }
        self._documents: dict[str, Any] = {
            "/.well-known/openid-configuration": metadata,
            "/.well-known/oauth-authorization-server": metadata,
            "/jwks.json": {"keys": [jwk]},
        }
        self._thread: threading.Thread | None = None

    def claims(self, subject: str | None, *, scope: str | None = ALL_SCOPES, audience: str | list[str] | None = None,
               expires_in: float | None = None) -> dict[str, Any]:
        """An access token's claims (RFC 9068), before signing.

        Args:
            subject: ``sub`` (``None``: left out).
            scope: ``scope``, space-separated (``None``: left out).
            audience: ``aud`` (default: the issuer's audience).
            expires_in: Seconds until ``exp`` (default: the issuer's lifetime).

        Returns:
            The claims.
        """
        now = int(time.time())
        payload: dict[str, Any] = {"iss": self.url, "aud": audience or self.audience, "iat": now,
                                   "exp": now + int(self.lifetime if expires_in is None else expires_in)}
        if subject is not None:
            payload["sub"] = subject
        if scope is not None:
            payload["scope"] = scope
        return payload

    def sign(self, claims: dict[str, Any]) -> str:
        """``claims`` signed with the issuer's key, as a JWT naming that key."""
        return jwt.encode(claims, self.key, algorithm="ES256", headers={"kid": KID, "typ": "at+jwt"})

    def token_response(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """The token endpoint's answer to one client credentials request: its status and JSON body.

        Args:
            form: The request's form fields.

        Returns:
            200 and ``{access_token, token_type, expires_in, scope}``, or 400 and an RFC 6749 error.
        """
        if form.get("grant_type") != "client_credentials":
            return 400, {"error": "unsupported_grant_type",
                         "error_description": "this development issuer grants client_credentials only"}
        client = form.get("client_id", "").strip()
        if not client:
            return 400, {"error": "invalid_request",
                         "error_description": "client_id is required: it becomes the token's subject (sub)"}
        scope = form.get("scope") or ALL_SCOPES
        unknown = sorted(set(scope.split()) - set(SCOPES))
        if unknown:
            return 400, {"error": "invalid_scope",
                         "error_description": f"unknown scope {' '.join(unknown)}; the scopes are {' '.join(SCOPES)}"}
        claims = {**self.claims(client, scope=scope, audience=form.get("resource") or None), "client_id": client}
        return 200, {"access_token": self.sign(claims), "token_type": "Bearer", "expires_in": self.lifetime,
                     "scope": scope}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                document = issuer._documents.get(self.path)
                if document is None:
                    self._answer(404, {"error": "not_found", "error_description": f"nothing at {self.path}"})
                else:
                    self._answer(200, document)

            def do_POST(self) -> None:
                if self.path != "/token":
                    self._answer(404, {"error": "not_found", "error_description": f"nothing at {self.path}"})
                    return
                length = int(self.headers.get("content-length") or 0)
                fields = parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
                self._answer(*issuer.token_response({name: values[-1] for name, values in fields.items()}))

            def _answer(self, status: int, document: dict[str, Any]) -> None:
                body = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("cache-control", "no-store")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                logger.debug("%s %s", self.address_string(), format % args)

        return Handler

    def start(self) -> None:
        """Serve on a daemon thread (in-process use: the tests); ``close`` stops it."""
        self._thread = threading.Thread(target=self._server.serve_forever, name="dev-issuer", daemon=True)
        self._thread.start()

    def serve_forever(self) -> None:
        """Serve on this thread until interrupted."""
        self._server.serve_forever()

    def close(self) -> None:
        """Stop serving and release the port."""
        if self._thread is not None:
            self._server.shutdown()
        self._server.server_close()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the development issuer until Ctrl-C or SIGTERM.

    Args:
        argv: Arguments without the program name (default: ``sys.argv[1:]``).

    Returns:
        0 after Ctrl-C; 1 when the port cannot be bound; 2 for usage errors (argparse exits).
    """
    p = argparse.ArgumentParser(
        prog="python -m mnem_mcp.dev_issuer",
        description="A development OAuth issuer on loopback for trying mnem-mcp --auth jwt: any client gets a "
        "token (client credentials, no secret) for this process's lifetime. Not for production.",
    )
    p.add_argument("--port", type=int, default=PORT, help=f"the port to listen on (default {PORT}; 0: any free one)")
    p.add_argument("--host", default="127.0.0.1", help="the loopback address to listen on (default 127.0.0.1)")
    p.add_argument("--audience", default=AUDIENCE,
                   help=f"the resource URI tokens are for: mnem-mcp's --audience (default {AUDIENCE})")
    p.add_argument("--lifetime", type=int, default=LIFETIME, metavar="SECONDS",
                   help=f"how long each token is valid (default {LIFETIME})")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="mnem-mcp-dev-issuer: %(message)s", stream=sys.stderr)
    try:
        issuer = DevIssuer(args.audience, host=args.host, port=args.port, lifetime=args.lifetime)
    except ValueError as exc:
        p.error(str(exc))
    except OSError as exc:
        logger.error("cannot listen on %s port %d: %s (pick another with --port)", args.host, args.port, exc)
        return 1
    logger.info("issuing tokens for %s at %s (development only: any client gets one); POST %s/token",
                issuer.audience, issuer.url, issuer.url)
    try:
        issuer.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        issuer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
