"""``mnem serve --stdio`` (extension): a persistent worker for programs that call ``mnem`` often.

Spawning a Python process costs tens of milliseconds; a worker pays it once.
Each request is one line of JSON, ``{"argv": [...], "stdin": "..."}``, where
``argv`` is exactly what would follow ``mnem`` on a command line; each answer
is one line, ``{"exit": N, "stdout": "...", "stderr": "..."}``, holding what
that one-shot command would have printed.  Requests run through the same
``invoke`` as a one-shot process, so the two cannot disagree.  Stores stay
open between requests (re-opened if the database file is replaced).

Framed requests (feature ``serve-framed``) carry their stdin and answers
their output as raw bytes after the JSON line instead of as JSON strings:
``{"argv": [...], "stdin_bytes": N | null, "framed": true}`` then N bytes,
answered by ``{"exit": N, "stdout_bytes": A, "stderr_bytes": B}`` then A + B
bytes.  A write's JSON payload and a read's JSON document then cross the
pipe as they are, not escaped into a string and parsed out of it again
(for a 10k-fact page, 2.4 MB each way).

Between requests the worker sleeps in a blocking read of the next one.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path
from typing import BinaryIO

import orjson

from ...errors import UsageError
from ...location import Address, discover_root, exact_root
from ...repo import Repo, StorePools
from ..context import Context, Outcome
from ..dispatch import COMMANDS, Streams, build_parser, error_document, invoke
from ..jsonout import use_orjson
from ..parsecache import ParseCache

__all__ = ["StoreCache", "prepare", "serve"]


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true", required=True, help="serve requests on stdin/stdout")


class StoreCache:
    """Open stores kept between requests, keyed by root or URL; a store replaced on disk is reopened.

    Stores in PostgreSQL take their connections from one pool per database
    (made when the first such store is opened), so a worker serving many
    stores of one database holds a few connections, not one per store.
    """

    def __init__(self) -> None:
        self._open: dict[Address, Repo] = {}
        self._named: dict[Path, Repo] = {}  # an exact -C path -> its open store (the root found once)
        self._pools = StorePools()

    def __call__(self, start: Address, exact: bool) -> Repo:
        """The store for ``start`` (exactly there when ``exact``), as ``Context.opener`` asks.

        An open store is reused unless its database was replaced on disk since
        it was opened (deleted and made again, or restored from a backup); then
        it is closed and opened again.  A path given exactly is looked up as
        given, without finding its root again: while its store's database is
        the one opened, the root it names has not changed.
        """
        named = self._named.get(start) if exact and isinstance(start, Path) else None
        if named is not None and not named.backend.replaced():
            return named
        where: Address = start
        if isinstance(start, Path):
            where = exact_root(start) if exact else discover_root(start)
        cached = self._open.pop(where, None)
        if cached is not None and not cached.backend.replaced():
            self._open[where] = cached
        else:
            if cached is not None:
                self._named = {path: repo for path, repo in self._named.items() if repo is not cached}
                cached.close()
            cached = self._open[where] = Repo.open(where, self._pools)
        if exact and isinstance(start, Path):
            self._named[start] = cached
        return cached

    def close(self) -> None:
        """Close every store, then the pools."""
        for repo in self._open.values():
            repo.close()
        self._open.clear()
        self._named.clear()
        self._pools.close()


def _request(line: bytes, requests: BinaryIO) -> tuple[list[str], bytes, bool]:
    """A request's argv, its stdin and whether it is framed (its stdin bytes are read from ``requests``)."""
    try:
        request = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"a request is not valid JSON: {exc}") from None
    argv = request.get("argv") if isinstance(request, dict) else None
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise UsageError('a request must be {"argv": [strings], "stdin": string or null}')
    if request.get("framed") is True:
        size = request.get("stdin_bytes")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
            raise UsageError("a framed request's stdin_bytes must be a byte count or null")
        data = requests.read(size) if size else b""
        if size and len(data) != size:
            raise UsageError(f"a framed request promised {size} bytes of stdin and sent {len(data)}")
        return argv, data, True
    payload = request.get("stdin")
    if payload is not None and not isinstance(payload, str):
        raise UsageError("a request's stdin must be a string or null")
    return argv, (payload or "").encode("utf-8", "surrogateescape"), False


def _answer(code: int, out: bytes, err: bytes, framed: bool) -> bytes:
    if framed:
        header = {"exit": code, "stdout_bytes": len(out), "stderr_bytes": len(err)}
        return b"".join((orjson.dumps(header), b"\n", out, err))
    decoded = {"exit": code, "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace")}
    return orjson.dumps(decoded) + b"\n"


def prepare() -> tuple[ParseCache, StoreCache]:
    """What a worker sets up once: orjson for its answers, its parser, and the stores it keeps open.

    Many answers, some large, are worth orjson's import (``jsonout.py``).
    A worker starts no other worker, nor a web server.
    """
    use_orjson()
    return ParseCache(build_parser(exclude=frozenset({"serve", "ui"})), COMMANDS), StoreCache()


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """Answer requests until end of input."""
    parser, stores = prepare()
    try:
        while line := requests.readline():
            if not line.strip():
                continue
            out, err = io.BytesIO(), io.BytesIO()
            try:
                argv, payload, framed = _request(line, requests)
            except UsageError as exc:
                answer = _answer(exc.exit_code, error_document(exc).encode(), b"", framed=False)
            else:
                code = invoke(argv, Streams(io.BytesIO(payload), out, err), parser=parser, opener=stores)
                answer = _answer(code, out.getvalue(), err.getvalue(), framed)
            answers.write(answer)
            answers.flush()
    finally:
        stores.close()


def run(args: argparse.Namespace, ctx: Context) -> Outcome:
    serve(sys.stdin.buffer, sys.stdout.buffer)
    return Outcome(None)
