"""One request to an HTTP remote, held to what another party may cost this machine and may learn from it.

``httppeer`` speaks the sync protocol; this module carries each of its
requests over ``http.client``, so that every byte of an answer is counted
and every wait is bounded:

* **A total deadline.** A request, with the redirects it follows, is done
  within ``MNEM_REMOTE_TIMEOUT_MS`` (default 300 s) or fails: a timer shuts
  the connection down at the deadline, which ends any read or write in
  progress.  A socket timeout alone bounds each read, so a remote sending a
  byte now and then would hold a fetch for ever.
* **A bounded answer.** An answer is read in chunks and refused as soon as
  it passes its limit (a ``Content-Length`` over it before any of the body
  is read): a pack up to ``MNEM_MAX_PACK_BYTES`` (default 1 GiB), spooled
  to the caller's file, never held in memory; any other answer (JSON) up
  to ``JSON_LIMIT``; a refusal's body is cut at ``ERROR_LIMIT``.
* **The token stays with its origin.** ``MNEM_TOKEN`` goes only to the
  remote's own origin (scheme, host and port), and over plain ``http``
  only to a loopback host unless ``MNEM_ALLOW_INSECURE_TOKEN=1``: anyone
  on the path of a clear-text request could read the token and use it.
  Redirects are followed as git's ``http.followRedirects=initial`` does,
  and only within the origin: the first request (the advertisement)
  follows up to ``MAX_REDIRECTS`` of them and the later requests go where
  it ended; a redirect to another origin, or one answering a later
  request, is an error naming its target, and nothing is sent there.

Every failure is a typed error that names the remote and the fix;
whatever the remote wrote that reaches a message passes
``errors.printable``.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import os
import socket
import threading
import time
from typing import BinaryIO, Final, NamedTuple
from urllib.parse import urljoin, urlsplit

from .errors import StoreIoError, UsageError, printable

__all__ = [
    "ERROR_LIMIT", "INSECURE_ENV", "JSON_LIMIT", "MAX_PACK_ENV", "MAX_REDIRECTS", "TIMEOUT_ENV", "TOKEN_ENV", "Answer",
    "max_pack_bytes", "request",
]

#: The variable holding the bearer token sent to HTTP remotes.
TOKEN_ENV: Final = "MNEM_TOKEN"
#: ``1`` lets the token go over plain http to a host off this machine.
INSECURE_ENV: Final = "MNEM_ALLOW_INSECURE_TOKEN"
#: Milliseconds one request may take in all (default ``DEFAULT_TIMEOUT_MS``).
TIMEOUT_ENV: Final = "MNEM_REMOTE_TIMEOUT_MS"
#: The largest pack a fetch or clone takes, in bytes (default ``DEFAULT_MAX_PACK``).
MAX_PACK_ENV: Final = "MNEM_MAX_PACK_BYTES"
DEFAULT_TIMEOUT_MS: Final = 300_000
DEFAULT_MAX_PACK: Final = 1 << 30
#: The largest answer read into memory: an advertisement of a hundred thousand branches is a few MB.
JSON_LIMIT: Final = 16 << 20
#: How much of a refusal's body is read (its message is short).
ERROR_LIMIT: Final = 64 << 10
MAX_REDIRECTS: Final = 5
#: Bytes read or sent at a time.
CHUNK: Final = 1 << 16
_REDIRECTS: Final = frozenset({301, 302, 303, 307, 308})


class Answer(NamedTuple):
    """A remote's answer: its status, its reason phrase, the URL that gave it, and its body if read into memory."""

    status: int
    reason: str
    url: str
    body: bytes


def _env_number(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else default


def max_pack_bytes() -> int:
    """The largest pack this process takes from a remote: ``MNEM_MAX_PACK_BYTES`` or 1 GiB."""
    return _env_number(MAX_PACK_ENV, DEFAULT_MAX_PACK)


def _origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or (443 if parts.scheme == "https" else 80)


def _loopback(host: str) -> bool:
    """Whether ``host`` names this machine (``localhost``, 127.0.0.0/8, ::1), as mnem-mcp's own check says."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _token(remote: str) -> str | None:
    """The token to send to ``remote``, if any; refused over plain http off this machine unless opted in."""
    token = os.environ.get(TOKEN_ENV)
    if not token:
        return None
    scheme, host, _ = _origin(remote)
    if scheme == "http" and not _loopback(host) and os.environ.get(INSECURE_ENV) != "1":
        raise UsageError(f"{TOKEN_ENV} would go in clear text to {remote} (plain http to a host that is not this "
                         f"machine), where anyone on the network path could read and use it; give the remote an "
                         f"https:// URL, or set {INSECURE_ENV}=1 to send it anyway")
    return token


class _Watchdog:
    """Shuts a connection down at the deadline, ending whatever read or write is waiting on it."""

    def __init__(self, connection: http.client.HTTPConnection, seconds: float) -> None:
        self.connection = connection
        self.fired = threading.Event()
        self.timer = threading.Timer(seconds, self._fire)
        self.timer.daemon = True
        self.timer.start()

    def _fire(self) -> None:
        self.fired.set()
        sock = self.connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed: the request ended as the deadline came
                sock.shutdown(socket.SHUT_RDWR)  # a blocked recv returns, a blocked send fails

    def cancel(self) -> None:
        self.timer.cancel()


def request(method: str, url: str, *, remote: str, body: bytes | BinaryIO | None = None, kind: str | None = None,
            sink: BinaryIO | None = None, follow: bool = False) -> Answer:
    """Send one request to the remote ``remote`` (the URL it was added with) and read its answer (module docstring).

    Args:
        method: ``GET`` or ``POST``.
        url: Where to send it: beneath ``remote``, or beneath where its advertisement was redirected.
        remote: The remote's URL, whose origin alone gets the token.
        body: The request's body: bytes, or a file read from its current position to its end.
        kind: The body's media type.
        sink: Where a successful answer's body goes (a pack), up to ``max_pack_bytes``; ``None``: into
            ``Answer.body``, up to ``JSON_LIMIT``.
        follow: Follow redirects within the origin (the first request only).

    Returns:
        The answer, whatever its status (a refusal's body, cut at ``ERROR_LIMIT``, is in ``Answer.body``).

    Raises:
        UsageError: The token would go over plain http off this machine.
        StoreIoError: The remote cannot be reached, did not answer within the deadline, answered more than
            the limit, redirected where this module does not follow, or did not speak HTTP.
    """
    token = _token(remote)
    timeout_ms = _env_number(TIMEOUT_ENV, DEFAULT_TIMEOUT_MS)
    deadline = time.monotonic() + timeout_ms / 1000
    home = _origin(remote)
    for _ in range(MAX_REDIRECTS + 1):
        headers = {"Accept": "application/json, application/cbor"}
        if kind is not None:
            headers["Content-Type"] = kind
        if token is not None and _origin(url) == home:
            headers["Authorization"] = f"Bearer {token}"
        answer, location = _exchange(method, url, body, headers, sink, deadline, remote, timeout_ms)
        if answer.status not in _REDIRECTS or location is None:
            return answer
        target = urljoin(url, location)
        if _origin(target) != home:
            raise StoreIoError(f"the remote {remote} redirects to {printable(target)}, another origin, where mnem does "
                               f"not follow (its {TOKEN_ENV} goes only to {remote}); if the store has moved there, "
                               "remove the remote and add it again with its new URL")
        if not follow or printable(target) != target:
            raise StoreIoError(f"the remote {remote} redirected a {method} to {printable(target)}; mnem follows only "
                               "the redirects of a remote's advertisement, to a plain URL: give the remote the URL it "
                               "redirects to")
        url = target
    raise StoreIoError(f"the remote {remote} redirected more than {MAX_REDIRECTS} times; give the remote the URL of "
                       "its mnem-mcp endpoint itself")


def _exchange(method: str, url: str, body: bytes | BinaryIO | None, headers: dict[str, str], sink: BinaryIO | None,
              deadline: float, remote: str, timeout_ms: int) -> tuple[Answer, str | None]:
    """One request and its answer, within ``deadline``: the answer and its ``Location``, if any."""
    parts = urlsplit(url)
    seconds = deadline - time.monotonic()
    late = StoreIoError(f"the remote {remote} did not answer within {timeout_ms / 1000:g} s ({TIMEOUT_ENV}="
                        f"{timeout_ms}); nothing was written; raise {TIMEOUT_ENV} for a slow link or a large transfer")
    if seconds <= 0:
        raise late
    factory = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = factory(parts.hostname or "", parts.port, timeout=seconds, blocksize=CHUNK)
    watchdog = _Watchdog(connection, seconds)
    target = parts.path or "/"
    if parts.query:
        target += f"?{parts.query}"
    try:
        try:
            if not isinstance(body, bytes) and body is not None:  # a file: send its length, then its bytes
                start = body.tell()
                headers["Content-Length"] = str(body.seek(0, os.SEEK_END) - start)
                body.seek(start)
            connection.request(method, target, body=body, headers=headers)
        except OSError:  # the remote stopped reading, and may have said why (a 413): its answer is read below
            if watchdog.fired.is_set() or connection.sock is None:
                raise
        response = connection.getresponse()
        ok = 200 <= response.status < 300
        data = _read(response, sink if ok else None, (max_pack_bytes() if sink is not None else JSON_LIMIT)
                     if ok else ERROR_LIMIT, remote, cut=not ok)
        if watchdog.fired.is_set():  # the shutdown may read as an early end rather than fail: either is too late
            raise late
        return Answer(response.status, response.reason, url, data), response.getheader("Location")
    except (OSError, http.client.HTTPException) as exc:
        if watchdog.fired.is_set() or isinstance(exc, TimeoutError):
            raise late from None
        if isinstance(exc, http.client.IncompleteRead):
            raise StoreIoError(f"the remote {remote} closed the connection before its answer was complete; nothing "
                               "was written; try again") from None
        if isinstance(exc, http.client.HTTPException):
            raise StoreIoError(f"the remote {remote} answered with something that is not HTTP "
                               f"({printable(type(exc).__name__)}); check the URL names a mnem-mcp endpoint") from None
        reason = printable(str(exc.strerror or exc))
        raise StoreIoError(f"cannot reach the remote {remote}: {reason}; check the URL and that its server is "
                           "running") from None
    finally:
        watchdog.cancel()
        connection.close()


def _read(response: http.client.HTTPResponse, sink: BinaryIO | None, limit: int, remote: str, *, cut: bool) -> bytes:
    """An answer's body, into ``sink`` or memory, refused past ``limit`` bytes (``cut``: stop there instead)."""
    declared = response.getheader("Content-Length") or ""
    if not cut and declared.isdigit() and int(declared) > limit:
        raise _too_big(remote, limit, sink is not None)
    chunks: list[bytes] = []
    total = 0
    while chunk := response.read(CHUNK):
        total += len(chunk)
        if total > limit:
            if cut:
                chunks.append(chunk[: len(chunk) - (total - limit)])
                break
            raise _too_big(remote, limit, sink is not None)
        if sink is not None:
            sink.write(chunk)
        else:
            chunks.append(chunk)
    return b"".join(chunks)


def _too_big(remote: str, limit: int, pack: bool) -> StoreIoError:
    """The refusal of an answer past its limit, found from its ``Content-Length`` or as it arrived."""
    if pack:
        return StoreIoError(f"the remote {remote} sent a pack larger than {limit} bytes, the most this mnem takes "
                            f"({MAX_PACK_ENV}); it was refused as it arrived and nothing was written; if the remote's "
                            f"history is that large, raise {MAX_PACK_ENV}")
    return StoreIoError(f"the remote {remote} answered with more than {limit} bytes where a short JSON document "
                        "belongs; nothing was written; check the URL names a mnem-mcp endpoint")
