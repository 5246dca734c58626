"""A remote served over HTTP by ``mnem-mcp --transport streamable-http``: the client half of the sync protocol.

The remote's address is the MCP endpoint's URL (``https://memory.example/mcp``),
the one an MCP client is given; the sync requests live beneath it, so one
resource URI and one token audience cover both (docs/remotes.md):

* ``GET  URL/sync/refs?redactions=summary``: the advertisement
  (``peers.Advert``), as JSON, with ``max_pack``, the largest pack the
  server takes in a push; a server that can sums its redaction records up
  (``redaction_summary``), an older one ignores the query and lists them;
* ``POST URL/sync/upload``: ``{"want": [...], "have": [...]}`` in (and
  ``"redactions": [...]``, the records this store lacks, and ``"held"``,
  the summary whose records came in pages), a pack out (spooled to a
  temporary file as it arrives);
* ``POST URL/sync/receive?branch=B&old=ID&new=ID&force=0|1``: a pack in,
  ``peers.Received`` out; ``&redactions=1`` when the pack carries redaction
  records, which the server takes only with the scope ``mnem:redact``;
* ``POST URL/sync/ranges``: ``{"prefixes": [...]}`` in, the summaries or
  ids of those ranges of the server's record ids out (``redaction_ranges``);
* ``POST URL/sync/records``: a page of redaction records in (a pack that
  carries nothing else), ``{"redactions": N}`` out, with ``mnem:redact``.

Each request goes through ``remotehttp``: a total deadline, a bounded
answer, and the token kept to the remote's origin.  A bearer token, when
``$MNEM_TOKEN`` holds one, goes with every request;
the server maps it to the caller's store and checks its scopes
(``mnem:read`` to fetch, ``mnem:write`` to push, ``mnem:redact`` to push
redaction records), so the token never sits
in the store's remote settings.  A refusal comes back as a typed error:
the server's own code when it sends one (``conflict``, ``corrupt_store``,
...), ``usage`` for a token it does not accept (naming the variable to
set), ``store_io`` when it cannot be reached.
"""

from __future__ import annotations

import json
import tempfile
from typing import Any, BinaryIO, Final
from urllib.parse import urlencode

from .errors import CommandError, MnemError, StoreIoError, UsageError, printable
from .peers import STATUSES, Advert, Received, Update
from .redaction_ranges import Span, Summary, read_spans
from .redaction_travel import REDACT_SCOPE
from .remotehttp import TOKEN_ENV, Answer, request
from .transfer import Sent, carries_redactions

__all__ = ["HttpPeer"]

#: The scopes a token needs: to fetch, and besides it to push (mnem-mcp's ``identity``, which this package may not
#: import; ``redaction_travel.REDACT_SCOPE`` to push records).
READ_SCOPE: Final = "mnem:read"
WRITE_SCOPE: Final = "mnem:write"


def _codes(cls: type[MnemError]) -> set[str]:
    """The codes ``cls`` and its subclasses name (the taxonomy, from the classes that define it)."""
    return {cls.code}.union(*(_codes(sub) for sub in cls.__subclasses__()))


#: The query asking a server for the summary of its redaction records (``Advert.summary``) instead of their list.
_SUMMED: Final = "redactions=summary"
#: The codes a server's error may carry: the engine's own taxonomy.
_CODES: Final = frozenset(_codes(MnemError) - {MnemError.code})


class HttpPeer:
    """A peer reached over HTTP (see the module's docstring)."""

    def __init__(self, url: str) -> None:
        self.remote = url.rstrip("/")
        #: Where the sync requests go: the remote's URL, or where its advertisement was redirected within its origin.
        self.url = self.remote
        #: The largest pack the server takes in a push, as its advertisement says (older servers do not say).
        self.max_pack: int | None = None

    def advertise(self) -> Advert:
        """See ``peers.Peer``; the requests after it go where the advertisement was answered."""
        answer = self._request("GET", f"refs?{_SUMMED}", follow=True)
        path = answer.url.removesuffix(f"?{_SUMMED}")
        if not path.endswith("/sync/refs"):
            raise StoreIoError(f"the remote {self.remote} redirected its advertisement to {answer.url}, which is not "
                               "a mnem-mcp endpoint's; give the remote the URL of the endpoint itself")
        self.url = path.removesuffix("/sync/refs")
        doc = self._json(answer.body)
        limit = doc.get("max_pack") if isinstance(doc, dict) else None
        self.max_pack = limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else None
        return Advert.from_dict(doc)

    def upload(self, wants: list[bytes], haves: list[bytes], redactions: list[bytes] | None = None,
               held: Summary | None = None) -> BinaryIO:
        """See ``peers.Peer``: the pack is spooled to an unnamed temporary file as it arrives."""
        request: dict[str, Any] = {"want": [w.hex() for w in wants], "have": [h.hex() for h in haves]}
        if redactions:  # only to a server that advertised records, which reads this key
            request["redactions"] = [raw.hex() for raw in redactions]
        if held is not None:  # only to a server that summed its records up, which reads this key
            request["held"] = held.to_dict()
        body = json.dumps(request).encode()
        spool = tempfile.TemporaryFile()  # noqa: SIM115 - handed to the caller, who closes it
        try:
            self._request("POST", "upload", body, "application/json", sink=spool)
        except BaseException:
            spool.close()
            raise
        spool.seek(0)
        return spool

    def ranges(self, prefixes: list[str]) -> list[Span]:
        """See ``peers.Peer``: the answer is JSON, within ``remotehttp.JSON_LIMIT``, checked by ``read_spans``."""
        answer = self._request("POST", "ranges", json.dumps({"prefixes": prefixes}).encode(), "application/json")
        return read_spans(self._json(answer.body), prefixes, f"the remote {self.remote}")

    def receive_records(self, blob: BinaryIO) -> int:
        """See ``peers.Peer``: a page is refused before it is sent when it passes the server's ``max_pack``."""
        self._fits(blob)
        answer = self._request("POST", "records", blob, "application/cbor",
                               scope=f"{READ_SCOPE} {WRITE_SCOPE} {REDACT_SCOPE}")
        doc = self._json(answer.body)
        applied = doc.get("redactions") if isinstance(doc, dict) else None
        if not isinstance(applied, int) or isinstance(applied, bool) or applied < 0:
            raise StoreIoError(f"{self.url} answered a page of redaction records with a document of the wrong shape")
        return applied

    def _fits(self, blob: BinaryIO) -> None:
        """Refuse a pack over the limit the server advertised, before it is sent (``usage``)."""
        size = blob.seek(0, 2)
        blob.seek(0)
        if self.max_pack is not None and size > self.max_pack:
            raise UsageError(f"the pack is {size} bytes and the remote {self.remote} takes at most {self.max_pack} "
                             "in a push (its mnem-mcp --max-pack); ask its operator to raise --max-pack, or push a "
                             "shorter stretch of history at a time")

    def receive(self, blob: BinaryIO, update: Update) -> Received:
        """See ``peers.Peer``; a pack over the limit the server advertised is refused before it is sent."""
        self._fits(blob)
        fields: dict[str, str | int] = {"branch": update.branch, "old": update.old.hex() if update.old else "",
                                        "new": update.new.hex(), "force": int(update.force)}
        redacting = carries_redactions(blob)
        if redacting:  # said before the pack is read, so a token without the scope is refused before it is sent
            fields["redactions"] = 1
        answer = self._request("POST", f"receive?{urlencode(fields)}", blob, "application/cbor",
                               scope=f"{READ_SCOPE} {WRITE_SCOPE}" + (f" {REDACT_SCOPE}" if redacting else ""))
        doc = self._json(answer.body)
        try:
            if doc["status"] not in STATUSES:  # printed as it is: only a status a receive can have passes
                raise ValueError(f"status {doc['status']!r}")
            applied = doc.get("redactions", 0)
            if not isinstance(applied, int) or isinstance(applied, bool) or applied < 0:
                raise ValueError(f"redactions {applied!r}")
            return Received(Sent(int(doc["commits"]), int(doc["objects"]), (), applied), doc["status"])
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreIoError(f"{self.url} answered a push with a document of the wrong shape ({exc})") from None

    def close(self) -> None:
        """Nothing is held open between requests."""

    def _request(self, method: str, path: str, body: bytes | BinaryIO | None = None, kind: str | None = None, *,
                 sink: BinaryIO | None = None, follow: bool = False, scope: str = READ_SCOPE) -> Answer:
        """One request's answer (``remotehttp.request``); a refusal raised as its typed error.

        ``scope`` is what the request needs of a token, which a ``403`` names as the fix.
        """
        answer = request(method, f"{self.url}/sync/{path}", remote=self.remote, body=body, kind=kind, sink=sink,
                         follow=follow)
        if not 200 <= answer.status < 300:
            raise self._refusal(answer, scope)
        return answer

    def _refusal(self, exc: Answer, scope: str) -> MnemError:
        """The typed error an HTTP refusal stands for; the remote's words in it pass ``errors.printable``."""
        try:
            doc = json.loads(exc.body or b"null")
        except ValueError:
            doc = None
        error = doc.get("error") if isinstance(doc, dict) else None
        if exc.status in (401, 403):
            said = doc.get("error_description") if isinstance(doc, dict) else None
            said = said or (error.get("message") if isinstance(error, dict) else None) or exc.reason
            need = scope if exc.status == 403 else f"{READ_SCOPE} ({WRITE_SCOPE} to push)"
            return UsageError(f"the remote {self.url} refused the request ({exc.status}: {printable(str(said))}); set "
                              f"{TOKEN_ENV} to a bearer token its issuer grants for it, with scope {need}")
        if isinstance(error, dict) and error.get("code") in _CODES and isinstance(error.get("message"), str):
            return CommandError(printable(error["message"]), error["code"])
        if exc.status == 404:
            return StoreIoError(f"{self.url} does not serve Mnemosyne sync (404 for {printable(exc.url)}); give the "
                                "URL of a mnem-mcp --transport streamable-http endpoint, e.g. http://HOST:PORT/mcp")
        return StoreIoError(f"the remote {self.url} failed ({exc.status} {printable(str(exc.reason))})")

    def _json(self, data: bytes) -> Any:
        try:
            return json.loads(data)
        except ValueError:
            raise StoreIoError(f"the remote {self.url} answered with something other than JSON") from None
