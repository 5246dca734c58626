"""What redaction records cost a transfer past the 100,000 one message carries: a clone, and fetches of a few new.

A source store gets one commit and ``--records`` redaction records (made in
process through ``redaction.apply``, as a saver's retention leaves them:
records of versions the copies never held).  It is cloned twice, from its
folder and from a ``mnem-mcp --transport streamable-http --auth none``
server serving it; both clones are timed.  Then, ``--rounds`` times, the
source gains ``--delta`` records and each copy fetches them (the two in
alternating order), and each copy fetches once more with nothing new: the
records are compared range by range (``redaction_ranges``) and the new ones
come in pages (``redaction_exchange``), so a fetch's cost follows what is
new, not what there is.  Last, each copy gains ``--delta`` records of its
own and pushes them (folder copy to the folder, HTTP copy to the server).

Usage: ``python benchmarks/redaction_pages.py [--records N] [--delta N] [--rounds N]``;
writes ``benchmarks/results/redaction_pages.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report

from mnem_store import porcelain, sync
from mnem_store.objects import MemoryNode, Provenance, Redaction
from mnem_store.redaction import apply
from mnem_store.repo import Repo

BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def records(repo: Repo, count: int, seed: str) -> None:
    """``count`` records of objects the store does not hold, in one write."""
    with repo.backend.write():
        apply(repo, [Redaction(hashlib.sha256(f"{seed}:{i}".encode()).digest(), f"checkpoint:{seed}:{i}", i,
                               "retention", "kept the last 3 checkpoints") for i in range(count)])


def served(store: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``mnem-mcp`` serving ``store`` over HTTP without authentication, once it answers."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen([str(BIN / "mnem-mcp"), "--store", str(store), "--transport", "streamable-http",
                               "--auth", "none", "--port", str(port)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx2.get(url, timeout=1)
            return server, url
        except httpx2.TransportError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mnem-mcp did not come up on {url}") from None
            time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000, help="redaction records in the source")
    parser.add_argument("--delta", type=int, default=100, help="records new in each fetch and push")
    parser.add_argument("--rounds", type=int, default=10, help="fetches of --delta new records per copy")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = Repo.init(root / "source")
        porcelain.write(source, [MemoryNode("plan", "pro", "note", Provenance(), None)], [], "start", "bench", 1)
        records(source, args.records, "retained")
        server, url = served(root / "source")
        try:
            remotes = {"folder": str(root / "source"), "HTTP (mnem-mcp)": url}
            clones: dict[str, float] = {}
            for i, (name, remote) in enumerate(remotes.items()):
                start = time.perf_counter()
                cloned = sync.clone(remote, root / f"copy-{i}")
                clones[name] = time.perf_counter() - start
                assert cloned.sent.redactions == args.records, cloned
            copies = {name: Repo.open(root / f"copy-{i}") for i, name in enumerate(remotes)}
            new, same, pushes = ({name: Samples() for name in copies} for _ in range(3))
            for round_ in range(args.rounds):
                records(source, args.delta, f"round{round_}")
                for name in list(copies) if round_ % 2 == 0 else list(reversed(copies)):
                    start = time.perf_counter()
                    assert sync.fetch(copies[name]).sent.redactions == args.delta
                    new[name].add(time.perf_counter() - start)
                    start = time.perf_counter()
                    assert sync.fetch(copies[name]).sent.redactions == 0
                    same[name].add(time.perf_counter() - start)
            for name, copy in copies.items():
                records(copy, args.delta, f"push-{name}")
                start = time.perf_counter()
                assert sync.push(copy, "origin", "main").sent.redactions == args.delta
                pushes[name].add(time.perf_counter() - start)
                copy.close()
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait()
            source.close()
    rows = [[name, f"{clones[name]:.1f}", f"{args.records / clones[name]:,.0f}", f"{new[name].p50:.0f}",
             f"{new[name].p90:.0f}", f"{same[name].p50:.0f}", f"{pushes[name].p50:.0f}"] for name in clones]
    write_report("redaction_pages", f"Redaction records in pages: {args.records:,} records, {args.delta} new", [
        f"The source has one commit and {args.records:,} redaction records, past the 100,000 one message carries "
        "(a saver with retention passes it after about 14,000 steps). A clone takes them all, compared range by "
        "range and asked for in pages of 10,000 (`MNEM_REDACTION_PAGE`); each round the source gains "
        f"{args.delta} records and both copies fetch them (alternating order, {args.rounds} rounds), then fetch "
        f"again with nothing new; last, each copy pushes {args.delta} records of its own. Timed in process "
        "(`mnem_store.sync`); over HTTP the server is `mnem-mcp --auth none`, whose `mnem` worker answers.",
        table(["remote", "clone s", "records/s", f"fetch of {args.delta} new p50 ms", "p90 ms",
               "fetch of none new p50 ms", f"push of {args.delta} ms"], rows),
    ])


if __name__ == "__main__":
    main()
