"""Bearer tokens for ``mnem-mcp`` over HTTP: the server as an OAuth resource server.

The MCP authorization spec makes an HTTP server a resource server: some
authorization server (any OIDC issuer) signs access tokens, and this server
only checks them.  ``JwtVerifier`` is the SDK's ``TokenVerifier`` for signed
JWT access tokens (RFC 9068): the signature against the issuer's published
keys (JWKS), ``exp``/``nbf``, ``iss`` equal to ``--issuer``, and ``aud``
holding ``--audience``, this server's resource URI (RFC 8707), so a token
minted for another service is refused here.  Only asymmetric algorithms are
accepted: a shared-secret (``HS256``) or unsigned token is never one an
issuer's public keys can vouch for.

The keys are found the way OIDC clients find them: ``--jwks-url`` when
given, else the ``jwks_uri`` of the issuer's discovery document
(``/.well-known/openid-configuration``, then RFC 8414's
``/.well-known/oauth-authorization-server``).  Discovery runs on the first
token, not at start-up, so a server started while its issuer is briefly
down still comes up; until discovery succeeds, every request with a token
is answered 503 with the reason (the fault is the issuer's, not the
token's), and the log says it too.

A refused token raises ``TokenRefusedError``, which says what is wrong in
words a client's developer can act on (the audience the token carries and
the one this server expects, when it expired, which issuer signed it, which
claim has the wrong type or range: ``claims_problem``, checked once the
signature holds and before any claim is used, so no value an issuer signs
can make the check itself fail);
``http`` answers it as RFC 6750's ``error_description``.  PyJWT's ``PyJWKClient`` caches the key set and refetches
it (at most once per cooldown) when a token names a key it has not seen,
which is how an issuer's key rotation reaches a running server.

Who the caller is and what it may do (``sub``, the scopes) is read per
request by ``identity``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.request
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Final

import anyio.to_thread
import jwt
from jwt.types import Options
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from starlette.authentication import AuthenticationError

from .identity import READ_SCOPE

__all__ = [
    "ALGORITHMS", "LATEST", "LEEWAY", "DiscoveryError", "JwtVerifier", "TokenRefusedError", "auth_settings",
    "claims_problem", "scopes_of",
]

logger = logging.getLogger(__name__)

#: The signature algorithms accepted: public-key ones only, so only the issuer's private key can mint a token.
ALGORITHMS: Final = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
#: Seconds of clock skew forgiven on ``exp``/``nbf`` between the issuer's clock and ours.
LEEWAY: Final = 30.0
#: Seconds one fetch of the discovery document or the key set may take.
FETCH_TIMEOUT: Final = 10.0
#: Where an issuer publishes the document naming its ``jwks_uri``, in the order tried (OIDC, then RFC 8414).
DISCOVERY: Final = ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server")
#: The latest time a token's claim may name: 9999-12-31T23:59:59Z, the last second a UTC date can be written.
LATEST: Final = 253_402_300_799
#: The claims that hold a time (RFC 7519's NumericDate), a text, or a text or a list of texts, by what they mean.
TIME_CLAIMS: Final = {"exp": "expiry", "nbf": "start", "iat": "issue time"}
TEXT_CLAIMS: Final = {"iss": "issuer", "sub": "subject", "client_id": "client", "azp": "client", "jti": "id"}
LIST_CLAIMS: Final = {"aud": "audience", "scope": "scopes", "scp": "scopes"}
#: How much of a claim's value a description shows.
SHOWN: Final = 80
#: PyJWT's options for the first pass, the signature alone; and for the second, the claims' values alone.
SIGNATURE_ONLY: Final[Options] = {
    "verify_exp": False, "verify_nbf": False, "verify_iat": False, "verify_aud": False, "verify_iss": False,
    "verify_sub": False, "verify_jti": False, "require": [],
}
CLAIMS_ONLY: Final[Options] = {
    "verify_signature": False, "verify_exp": True, "verify_nbf": True, "verify_iat": True, "verify_aud": True,
    "verify_iss": True, "verify_sub": True, "verify_jti": True, "require": ["exp", "iss", "aud"],
}


class DiscoveryError(RuntimeError):
    """The issuer's key set could not be located (no discovery document names a ``jwks_uri``)."""


class TokenRefusedError(AuthenticationError):
    """A request's bearer token was not accepted, with the HTTP answer that says why.

    Raised from ``JwtVerifier.verify_token``, so the SDK's bearer backend
    lets it through to the authentication middleware, whose error handler
    (``http.refusal``) answers it.

    Args:
        status: 401 for a token that is not valid here, 503 when tokens cannot be checked at all.
        error: The OAuth error code: ``invalid_token``, or ``temporarily_unavailable`` with 503.
        description: What is wrong and what to do, for the client's developer.
    """

    def __init__(self, status: int, error: str, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.error = error
        self.description = description

    @classmethod
    def invalid(cls, description: str) -> TokenRefusedError:
        """A 401 ``invalid_token`` refusal: the token itself is at fault."""
        return cls(401, "invalid_token", description)

    @classmethod
    def unavailable(cls, description: str) -> TokenRefusedError:
        """A 503 refusal: the issuer's keys cannot be had, so no token can be checked (nor is any at fault)."""
        return cls(503, "temporarily_unavailable", description)


def auth_settings(issuer: str, audience: str) -> AuthSettings:
    """The SDK's resource-server settings: ``mnem:read`` for every request, ``audience`` as the resource URI.

    ``validate_token_resource`` is off because ``JwtVerifier`` checks ``aud``
    itself (PyJWT's audience check); the SDK then serves the Protected
    Resource Metadata for ``audience`` and names it in every 401.

    Args:
        issuer: The authorization server (``--issuer``).
        audience: This server's resource URI (``--audience``).

    Returns:
        The settings for ``MCPServer(auth=...)``.
    """
    return AuthSettings.model_validate({  # from strings: AuthSettings keeps a path-less URL without a trailing "/"
        "issuer_url": issuer, "resource_server_url": audience, "required_scopes": [READ_SCOPE],
        "validate_token_resource": False,
    })


def scopes_of(claims: dict[str, Any]) -> list[str]:
    """The token's scopes: RFC 9068's space-separated ``scope``, or the ``scp`` some issuers use instead.

    Args:
        claims: The verified token's claims, well formed (``claims_problem``): each a text or a list of texts.

    Returns:
        The scopes, possibly none.
    """
    scope = claims.get("scope", claims.get("scp", ""))
    return scope.split() if isinstance(scope, str) else [*scope]


class JwtVerifier:
    """Verify signed JWT access tokens against one issuer's keys, for one audience.

    Args:
        issuer: The exact ``iss`` a token must carry.
        audience: The resource URI a token's ``aud`` must hold.
        jwks_url: The issuer's key set (``None``: found through discovery on first use).
    """

    def __init__(self, issuer: str, audience: str, jwks_url: str | None = None) -> None:
        self.issuer = issuer
        self.audience = audience
        self._jwks_url = jwks_url
        self._keys: jwt.PyJWKClient | None = None
        self._lock = threading.Lock()

    async def verify_token(self, token: str) -> AccessToken:
        """Check a bearer token (on a worker thread: a key fetch may block).

        Args:
            token: The bearer token as the client sent it.

        Returns:
            The token's identity and scopes.

        Raises:
            TokenRefusedError: The token is not valid here (401), or the issuer's keys cannot be had (503).
        """
        return await anyio.to_thread.run_sync(self.verify, token)

    def verify(self, token: str) -> AccessToken:
        """``verify_token``'s synchronous body: decode, check, and describe the token.

        A refusal is also logged (INFO for a bad token, which is routine;
        ERROR when the issuer cannot be reached, which an operator must fix).

        Args:
            token: The bearer token.

        Returns:
            The access token.  Its ``expires_at`` is when this server stops
            accepting it, ``exp`` plus the leeway, so the SDK's own expiry check
            agrees with this one.

        Raises:
            TokenRefusedError: Why the token is not accepted.
        """
        try:
            key = self._key_client().get_signing_key_from_jwt(token)
            claims = jwt.decode(token, key, algorithms=list(ALGORITHMS), options=SIGNATURE_ONLY)
        except (DiscoveryError, jwt.PyJWKClientConnectionError) as exc:
            refused = TokenRefusedError.unavailable(self._unreachable(exc))
            logger.error("%s", refused.description)
            raise refused from exc
        except jwt.PyJWTError as exc:
            raise _refused(f"the token is not one {self.issuer} signed for this server: {exc}") from exc
        problem = claims_problem(claims)
        if problem is not None:
            raise _refused(problem)
        try:  # the signature held and every claim has its type: now PyJWT's checks of their values
            jwt.decode(token, options=CLAIMS_ONLY, audience=self.audience, issuer=self.issuer, leeway=LEEWAY)
        except jwt.PyJWTError as exc:
            raise _refused(self._wrong(exc, claims)) from exc
        subject, client = claims.get("sub"), claims.get("client_id", claims.get("azp"))
        if not (subject or client):
            raise _refused("the token names no subject (sub) and no client (client_id, azp), so no one could be "
                           "named as the author of its writes")
        return AccessToken(
            token=token, client_id=client or subject or "", scopes=scopes_of(claims),
            expires_at=int(claims["exp"] + LEEWAY), resource=self.audience, subject=subject, claims=claims,
        )

    def _unreachable(self, exc: Exception) -> str:
        """Why no token can be checked now: the discovery document or the key set could not be fetched."""
        if isinstance(exc, DiscoveryError):
            return f"cannot check tokens: {exc}"
        return (f"cannot check tokens: the issuer's key set could not be fetched ({exc}). Check that the issuer "
                f"{self.issuer} is up, or name its key set with --jwks-url")

    def _wrong(self, exc: jwt.PyJWTError, claims: dict[str, Any]) -> str:
        """What is wrong with a token's claims, which PyJWT refused, naming what was expected and what it carries.

        ``claims`` are the token's, its signature verified and each claim of
        the type it must have (``claims_problem``), so a time can be shown.
        """
        if isinstance(exc, jwt.InvalidAudienceError):
            return (f"the token's audience (aud) is {_shown(claims.get('aud'))}, not this server's {self.audience!r}: "
                    f"ask the issuer for a token for {self.audience} (its resource or audience parameter)")
        if isinstance(exc, jwt.InvalidIssuerError):
            return (f"the token was issued by {_shown(claims.get('iss'))}; this server accepts tokens from "
                    f"{self.issuer!r} only")
        if isinstance(exc, jwt.ExpiredSignatureError):
            return f"the token expired at {_when(claims['exp'])}: get a new one from the issuer"
        if isinstance(exc, jwt.ImmatureSignatureError):
            if "nbf" in claims and claims["nbf"] > time.time() + LEEWAY:
                return f"the token is not valid before {_when(claims['nbf'])}"
            return (f"the token says it was issued at {_when(claims['iat'])}, later than this server's clock: check "
                    "the issuer's clock")
        if isinstance(exc, jwt.MissingRequiredClaimError):
            return f"the token has no {exc.claim} claim, which this server requires"
        return f"the token's claims are not accepted here: {exc}"

    def _key_client(self) -> jwt.PyJWKClient:
        """The issuer's key set client, made on first use (discovery happens then, and again until it works)."""
        with self._lock:
            if self._keys is None:
                url = self._jwks_url or discover_jwks(self.issuer)
                logger.info("checking tokens against the key set at %s", url)
                self._keys = jwt.PyJWKClient(url, cache_keys=True, timeout=FETCH_TIMEOUT)
            return self._keys


def _refused(description: str) -> TokenRefusedError:
    """A 401 for a token at fault, logged at INFO (a bad token is routine)."""
    refused = TokenRefusedError.invalid(description)
    logger.info("refused a bearer token: %s", description)
    return refused


def _when(seconds: float) -> str:
    """A claim's Unix time (a NumericDate in range: ``claims_problem`` checked it) as UTC ISO 8601, for a message."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _shown(value: object) -> str:
    """A claim's value as a message shows it: its ``repr``, cut to ``SHOWN`` characters."""
    text = repr(value)
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}..."


def claims_problem(claims: dict[str, Any]) -> str | None:
    """What is malformed in a verified token's claims, the first problem found; ``None`` when nothing is.

    A claim this server reads must have the type RFC 7519 / RFC 9068 give it,
    whatever the issuer signed: a time (``exp``, ``nbf``, ``iat``) is a
    number of seconds from 0 to ``LATEST`` (not a numeric text, a boolean,
    NaN or a number past any date); ``iss``, ``sub``, ``client_id``,
    ``azp`` and ``jti`` are texts; ``aud``, ``scope`` and ``scp`` are a
    text or a list of texts.  A claim left out is not malformed (PyJWT's
    check of required claims says so).

    Args:
        claims: The token's claims, its signature verified.

    Returns:
        A description naming the claim, what it holds and what it must be, for the 401.
    """
    for claim, name in TIME_CLAIMS.items():
        value = claims.get(claim, 0)
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= LATEST:
            return (f"the token's {name} ({claim}) holds {_shown(value)}, not a time: it must be a number of seconds "
                    f"since 1970 from 0 to {LATEST} (a NumericDate); ask the issuer for a well-formed token")
    for claim, name in TEXT_CLAIMS.items():
        value = claims.get(claim, "")
        if not isinstance(value, str):
            return f"the token's {name} ({claim}) holds {_shown(value)}, not a text"
    for claim, name in LIST_CLAIMS.items():
        value = claims.get(claim, "")
        if not (isinstance(value, str) or (isinstance(value, list) and all(isinstance(item, str) for item in value))):
            return f"the token's {name} ({claim}) holds {_shown(value)}, not a text or a list of texts"
    return None


def discover_jwks(issuer: str, documents: Sequence[str] = DISCOVERY) -> str:
    """The ``jwks_uri`` from the issuer's discovery document.

    Args:
        issuer: The issuer URL.
        documents: The well-known paths to try, in order.

    Returns:
        The key set's URL.

    Raises:
        DiscoveryError: No document could be read or none names a ``jwks_uri``.
    """
    tried: list[str] = []
    for document in documents:
        url = issuer.rstrip("/") + document
        try:
            with urllib.request.urlopen(url, timeout=FETCH_TIMEOUT) as response:
                jwks = json.load(response).get("jwks_uri")
        except (OSError, ValueError, AttributeError) as exc:
            tried.append(f"{url} ({exc})")
            continue
        if isinstance(jwks, str) and jwks:
            return jwks
        tried.append(f"{url} (no jwks_uri)")
    raise DiscoveryError(f"no discovery document of the issuer {issuer} could be read to find its key set; tried "
                         f"{'; '.join(tried)}. Check that the issuer is up and --issuer is its URL, or name the key "
                         "set with --jwks-url")
