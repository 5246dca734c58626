"""A remote served over HTTP by ``mnem-mcp --transport streamable-http``: the client half of the sync protocol.

The remote's address is the MCP endpoint's URL (``https://memory.example/mcp``),
the one an MCP client is given; the sync requests live beneath it, so one
resource URI and one token audience cover both (docs/remotes.md):

* ``GET  URL/sync/refs``: the advertisement (``peers.Advert``), as JSON;
* ``POST URL/sync/upload``: ``{"want": [...], "have": [...]}`` in, a pack out;
* ``POST URL/sync/receive?branch=B&old=ID&new=ID&force=0|1``: a pack in,
  ``peers.Received`` out.

A bearer token, when ``$MNEM_TOKEN`` holds one, goes with every request;
the server maps it to the caller's store and checks its scopes
(``mnem:read`` to fetch, ``mnem:write`` to push), so the token never sits
in the store's remote settings.  A refusal comes back as a typed error:
the server's own code when it sends one (``conflict``, ``corrupt_store``,
...), ``usage`` for a token it does not accept (naming the variable to
set), ``store_io`` when it cannot be reached.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any, Final
from urllib.parse import urlencode

from .errors import CommandError, MnemError, StoreIoError, UsageError, printable
from .peers import STATUSES, Advert, Received, Update
from .transfer import Sent

__all__ = ["TIMEOUT", "TOKEN_ENV", "HttpPeer"]

#: The variable holding the bearer token sent to HTTP remotes.
TOKEN_ENV: Final = "MNEM_TOKEN"
#: Seconds one request may take (a clone of a long history is one request).
TIMEOUT: Final = 300.0


def _codes(cls: type[MnemError]) -> set[str]:
    """The codes ``cls`` and its subclasses name (the taxonomy, from the classes that define it)."""
    return {cls.code}.union(*(_codes(sub) for sub in cls.__subclasses__()))


#: The codes a server's error may carry: the engine's own taxonomy.
_CODES: Final = frozenset(_codes(MnemError) - {MnemError.code})


class HttpPeer:
    """A peer reached over HTTP (see the module's docstring)."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    def advertise(self) -> Advert:
        """See ``peers.Peer``."""
        return Advert.from_dict(self._json(self._request("GET", "refs")))

    def upload(self, wants: list[bytes], haves: list[bytes]) -> bytes:
        """See ``peers.Peer``."""
        body = json.dumps({"want": [w.hex() for w in wants], "have": [h.hex() for h in haves]}).encode()
        return self._request("POST", "upload", body, "application/json")

    def receive(self, blob: bytes, update: Update) -> Received:
        """See ``peers.Peer``."""
        query = urlencode({"branch": update.branch, "old": update.old.hex() if update.old is not None else "",
                           "new": update.new.hex(), "force": int(update.force)})
        doc = self._json(self._request("POST", f"receive?{query}", blob, "application/cbor"))
        try:
            if doc["status"] not in STATUSES:  # printed as it is: only a status a receive can have passes
                raise ValueError(f"status {doc['status']!r}")
            return Received(Sent(int(doc["commits"]), int(doc["objects"])), doc["status"])
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreIoError(f"{self.url} answered a push with a document of the wrong shape ({exc})") from None

    def close(self) -> None:
        """Nothing is held open between requests."""

    def _request(self, method: str, path: str, body: bytes | None = None, kind: str | None = None) -> bytes:
        """One request's answer body; a refusal raised as its typed error."""
        headers = {"Accept": "application/json, application/cbor"}
        if kind is not None:
            headers["Content-Type"] = kind
        token = os.environ.get(TOKEN_ENV)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(f"{self.url}/sync/{path}", data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
                data: bytes = answer.read()
                return data
        except urllib.error.HTTPError as exc:
            raise self._refusal(exc) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise StoreIoError(f"cannot reach the remote {self.url}: {reason}; check the URL and that its "
                               "server is running") from None

    def _refusal(self, exc: urllib.error.HTTPError) -> MnemError:
        """The typed error an HTTP refusal stands for; the remote's words in it pass ``errors.printable``."""
        try:
            doc = json.loads(exc.read() or b"null")
        except ValueError:
            doc = None
        error = doc.get("error") if isinstance(doc, dict) else None
        if exc.code in (401, 403):
            said = doc.get("error_description") if isinstance(doc, dict) else None
            said = said or (error.get("message") if isinstance(error, dict) else None) or exc.reason
            need = "mnem:read mnem:write" if exc.code == 403 else "mnem:read (mnem:write to push)"
            return UsageError(f"the remote {self.url} refused the request ({exc.code}: {printable(str(said))}); set "
                              f"{TOKEN_ENV} to a bearer token its issuer grants for it, with scope {need}")
        if isinstance(error, dict) and error.get("code") in _CODES and isinstance(error.get("message"), str):
            return CommandError(printable(error["message"]), error["code"])
        if exc.code == 404:
            return StoreIoError(f"{self.url} does not serve Mnemosyne sync (404 for {printable(exc.url)}); give the "
                                "URL of a mnem-mcp --transport streamable-http endpoint, e.g. http://HOST:PORT/mcp")
        return StoreIoError(f"the remote {self.url} failed ({exc.code} {printable(str(exc.reason))})")

    def _json(self, data: bytes) -> Any:
        try:
            return json.loads(data)
        except ValueError:
            raise StoreIoError(f"the remote {self.url} answered with something other than JSON") from None
