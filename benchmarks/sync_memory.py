"""Peak memory of a push and of a fetch over HTTP, by pack size: what a pack costs the server and the client.

Every figure is the peak resident memory (RSS, sampled every 10 ms with
psutil) of a whole process tree, less what the tree held before the
request (its baseline, with its ``mnem`` worker already started):

* **The server.**  ``mnem-mcp --transport http --auth none --max-pack 2G``
  (a fresh one on an empty store per row) takes one ``POST
  /mcp/sync/receive`` streamed from a file: random bytes (the body of issue
  #44's report), valid packs of N commits (one-fact commits, and commits
  setting a 25 KB value each), and a hostile pack whose one commit carries
  ``transfer.MAX_CHANGES`` change rows.  The tree is the server and its
  ``mnem`` worker.
* **The client.**  ``mnem clone`` of each valid pack's history from the
  server that took it (the client's own process), and ``mnem fetch`` from a
  hostile HTTP remote (a thread here) that answers the upload with 1 GB.

Usage: ``python benchmarks/sync_memory.py [--random-mb 256] [--commits 100000]``;
writes ``benchmarks/results/sync_memory.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import cbor2
import httpx2
import psutil

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import table, write_report

from mnem_store import porcelain
from mnem_store.cborstream import ARRAY, MAP, head
from mnem_store.layout import FORMAT_VERSION
from mnem_store.objects import Commit, MemoryNode, Provenance, encode_object
from mnem_store.repo import Repo
from mnem_store.transfer import MAX_CHANGES, missing, pack

BIN = Path(sys.executable).parent
MiB = 1 << 20


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tree_rss(process: psutil.Process) -> int:
    total = 0
    for member in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):  # a member that ended meanwhile
            total += member.memory_info().rss
    return total


def peak_during(pid: int, action: Callable[[], Any]) -> tuple[Any, int, int]:
    """``action()``'s result, and the baseline and peak RSS of ``pid``'s tree while it ran."""
    process = psutil.Process(pid)
    baseline = tree_rss(process)
    peak = [baseline]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(process))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        result = action()
    finally:
        done.set()
        sampler.join()
    return result, baseline, peak[0]


class Server:
    """``mnem-mcp`` over a new store (or ``store``), ready."""

    def __init__(self, root: Path, store: Path | None = None) -> None:
        if store is None:
            store = root / f"hub-{time.monotonic_ns()}"
            subprocess.run([str(BIN / "mnem"), "init", str(store)], check=True, capture_output=True)
        self.store = store
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.process = subprocess.Popen([str(BIN / "mnem-mcp"), "--store", str(store), "--transport", "http",
                                         "--auth", "none", "--port", str(port), "--max-pack", "2G"],
                                        stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx2.get(f"{self.url}/sync/refs", timeout=5)  # also starts the store's mnem worker
                return
            except httpx2.TransportError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"mnem-mcp did not come up on {self.url}") from None
                time.sleep(0.05)

    def push(self, path: Path, new: str) -> tuple[str, int, int]:
        """POST the pack at ``path``; the answer's status and code, and the tree's baseline and peak."""

        def send() -> str:
            def chunks() -> Iterator[bytes]:
                with path.open("rb") as handle:
                    while chunk := handle.read(MiB):
                        yield chunk

            answer = httpx2.post(f"{self.url}/sync/receive?branch=main&old=&new={new}&force=0", content=chunks(),
                                 headers={"Content-Length": str(path.stat().st_size)}, timeout=3600)
            code = answer.json().get("error", {}).get("code") if answer.status_code != 200 else "ok"
            return f"{answer.status_code} {code}"

        return peak_during(self.process.pid, send)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait()


def source(root: Path, commits: int, value_bytes: int) -> tuple[Path, Path, str]:
    """A store of ``commits`` one-fact commits (over 1,000 ids, values of about ``value_bytes``) and its pack file."""
    store = root / f"source-{commits}-{value_bytes}"
    repo = Repo.init(store)
    filler = os.urandom(value_bytes // 2).hex() if value_bytes > 40 else ""
    for n in range(commits):
        node = MemoryNode(f"fact-{n % 1000}", {"value": n, "text": f"{n} {filler}"}, "note", Provenance(), None)
        porcelain.write(repo, [node], [], f"commit {n}", "bench", 1_000_000 + n)
    with repo.backend.read():
        tip = repo.branch_tip("main")
        assert tip is not None
        path = root / f"pack-{commits}-{value_bytes}.cbor"
        with path.open("wb") as out:
            pack(repo, missing(repo, [tip], []), out)
    repo.close()
    return store, path, tip.hex()


def hostile_changes(root: Path) -> tuple[Path, str]:
    """A pack of one root commit carrying ``MAX_CHANGES`` deletion rows (a state id that cannot match)."""
    commit = Commit((), b"\x11" * 32, "one commit, many rows", "bench", 1_000_000)
    raw, data = encode_object(commit)
    path = root / "pack-hostile-changes.cbor"
    with path.open("wb") as out:
        out.write(head(MAP, 4) + cbor2.dumps("pack") + cbor2.dumps(1) + cbor2.dumps("format")
                  + cbor2.dumps(FORMAT_VERSION) + cbor2.dumps("commits") + head(ARRAY, 1) + head(ARRAY, 2)
                  + cbor2.dumps(data) + head(ARRAY, MAX_CHANGES))
        for start in range(0, MAX_CHANGES, 10_000):
            out.write(b"".join(cbor2.dumps([f"n{i}", None]) for i in range(start, min(start + 10_000, MAX_CHANGES))))
        out.write(cbor2.dumps("nodes") + head(ARRAY, 0))
    return path, raw.hex()


def random_pack(root: Path, size: int) -> Path:
    path = root / "random.bin"
    with path.open("wb") as out:
        for _ in range(size // MiB):
            out.write(os.urandom(MiB))
    return path


def client_peak(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[str, int]:
    """Run ``mnem ARGV``; its outcome (exit status and error code) and its peak RSS."""
    process = subprocess.Popen([str(BIN / "mnem"), "--json", *argv], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    watched = psutil.Process(process.pid)
    peak = 0
    while process.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.Error:
            break
        time.sleep(0.01)
    out = process.stdout.read() if process.stdout is not None else b""
    code = "ok" if process.returncode == 0 else json.loads(out)["error"]["code"]
    return f"exit {process.returncode} {code}", peak


class Hostile:
    """A remote that advertises one branch and answers the upload with ``size`` bytes of zeros (Content-Length)."""

    def __init__(self, size: int) -> None:
        tip = "ab" * 32

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = f'{{"format": 1, "head": "ref: main", "branches": {{"main": "{tip}"}}}}'.encode()
                self._send(body)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", "application/cbor")
                self.send_header("Content-Length", str(size))
                self.end_headers()
                zeros = bytes(MiB)
                try:
                    for _ in range(size // MiB):
                        self.wfile.write(zeros)
                except OSError:
                    pass  # the client stopped reading

            def _send(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/mcp"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def mib(n: int) -> str:
    return f"{n / MiB:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random-mb", type=int, default=256, help="size of the random body, MiB")
    parser.add_argument("--commits", type=int, default=100_000, help="one-fact commits of the largest small pack")
    parser.add_argument("--hostile-gb", type=int, default=1, help="size of the hostile remote's pack, GB")
    args = parser.parse_args()
    server_rows: list[list[object]] = []
    client_rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bodies: list[tuple[str, Path, str, Path | None]] = [
            (f"random bytes, {args.random_mb} MiB", random_pack(root, args.random_mb * MiB), "ab" * 32, None)]
        for commits, value in ((10_000, 0), (args.commits, 0), (10_000, 25_000)):
            store, path, tip = source(root, commits, value)
            kind = f"valid: {commits:,} commits" + (f" of {value // 1000} KB values" if value else " of one small fact")
            bodies.append((kind, path, tip, store))
        path, tip = hostile_changes(root)
        bodies.append((f"hostile: one commit of {MAX_CHANGES:,} change rows", path, tip, None))
        for kind, path, tip, store in bodies:
            server = Server(root)
            try:
                outcome, baseline, peak = server.push(path, tip)
                server_rows.append([kind, f"{path.stat().st_size:,}", outcome, mib(baseline), mib(peak),
                                    mib(peak - baseline)])
                if store is not None:
                    dest = root / f"clone-{time.monotonic_ns()}"
                    done, client = client_peak(["clone", server.url, str(dest)], root)
                    client_rows.append([f"`mnem clone` of {kind}", f"{path.stat().st_size:,}", done, mib(client)])
            finally:
                server.stop()
        hostile = Hostile(args.hostile_gb * 10**9)
        try:
            store = root / "victim"
            subprocess.run([str(BIN / "mnem"), "init", str(store)], check=True, capture_output=True)
            subprocess.run([str(BIN / "mnem"), "remote", "add", "hostile", hostile.url], cwd=store, check=True)
            for limit in (None, 256 * MiB):
                env = {} if limit is None else {"MNEM_MAX_PACK_BYTES": str(limit)}
                done, client = client_peak(["fetch", "hostile"], store, env)
                shown = "default (1 GiB)" if limit is None else f"{limit // MiB} MiB"
                client_rows.append([f"`mnem fetch` from a hostile remote, MNEM_MAX_PACK_BYTES {shown}",
                                    f"{args.hostile_gb * 10**9:,}", done, mib(client)])
        finally:
            hostile.close()
    write_report("sync_memory", "Sync over HTTP: peak memory by pack size", [
        "Server: `mnem-mcp --transport http --auth none --max-pack 2G`, a fresh one on an empty store per row; one "
        "`POST /mcp/sync/receive` streamed from a file. RSS of the server and its `mnem` worker together, sampled "
        "every 10 ms: the baseline is the tree before the request (worker started), growth is the peak less it.",
        table(["body", "bytes", "answer", "tree before, MiB", "tree peak, MiB", "growth, MiB"], server_rows),
        "Client: the `mnem` process's own peak RSS (it starts at about 30 MiB). A clone takes the history the server "
        "above took; the hostile remote advertises one branch and answers the upload with that many zero bytes "
        "(Content-Length sent).",
        table(["command", "pack bytes", "outcome", "peak, MiB"], client_rows),
    ])


if __name__ == "__main__":
    main()
