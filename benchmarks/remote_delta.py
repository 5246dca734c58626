"""What a fetch costs when the history is long and the difference is short: 10 new commits on a 10k-commit store.

A source store gets ``--history`` one-fact commits (over 1,000 fact ids);
two copies are cloned from it, one naming the source's folder as its remote,
one naming a ``mnem-mcp --transport streamable-http --auth none`` server
that serves the source.  Then, ``--rounds`` times: the source gains 10
commits, and each copy fetches them (the two in alternating order), timed
in this process (``mnem_store.sync.fetch``, which for the HTTP remote is
two HTTP requests answered by the server's ``mnem`` worker).  The bytes are
the pack's (``transfer.pack`` of exactly what the fetch asks for), the same
for both remotes; for scale, the clone of the whole history is timed once
per remote with its pack's size.

Usage: ``python benchmarks/remote_delta.py [--history N] [--rounds N]``;
writes ``benchmarks/results/remote_delta.md``.
"""

from __future__ import annotations

import argparse
import io
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, write_report

from mnem_store import porcelain, sync
from mnem_store.objects import MemoryNode, Provenance
from mnem_store.repo import Repo
from mnem_store.transfer import missing, pack

BIN = Path(sys.executable).parent
DELTA = 10
FACTS = 1000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def commit(repo: Repo, n: int) -> None:
    """One commit setting one fact (fact ``n % FACTS``) to a value that names the commit."""
    node = MemoryNode(f"fact-{n % FACTS}", {"value": n, "note": f"observation {n}"}, "note", Provenance(), None)
    porcelain.write(repo, [node], [], f"commit {n}", "bench", 1_000_000 + n)


def pack_bytes(repo: Repo, want: bytes, have: bytes | None) -> int:
    with repo.backend.read():
        out = io.BytesIO()
        pack(repo, missing(repo, [want], [] if have is None else [have]), out)
        return out.tell()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=10_000, help="commits in the source before the rounds")
    parser.add_argument("--rounds", type=int, default=30, help="10-commit fetches per remote")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = Repo.init(root / "source")
        for n in range(args.history):
            commit(source, n)
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        server = subprocess.Popen([str(BIN / "mnem-mcp"), "--store", str(root / "source"), "--transport",
                                   "streamable-http", "--auth", "none", "--port", str(port)],
                                  stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    httpx2.get(url, timeout=1)
                    break
                except httpx2.TransportError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"mnem-mcp did not come up on {url}") from None
                    time.sleep(0.05)
            clones: dict[str, float] = {}
            for name, remote in (("folder", str(root / "source")), ("HTTP (mnem-mcp)", url)):
                start = time.perf_counter()
                sync.clone(remote, root / f"copy-{len(clones)}")
                clones[name] = time.perf_counter() - start
            with source.backend.read():
                tip = source.branch_tip("main")
            assert tip is not None
            whole = pack_bytes(source, tip, None)
            copies = {name: Repo.open(root / f"copy-{i}") for i, name in enumerate(clones)}
            times = {name: Samples() for name in copies}
            sizes: list[int] = []
            n = args.history
            for round_ in range(args.rounds):
                before = tip
                for _ in range(DELTA):
                    commit(source, n)
                    n += 1
                with source.backend.read():
                    tip = source.branch_tip("main")
                assert tip is not None
                sizes.append(pack_bytes(source, tip, before))
                order = list(copies) if round_ % 2 == 0 else list(reversed(copies))
                for name in order:
                    start = time.perf_counter()
                    fetched = sync.fetch(copies[name], "origin")
                    times[name].add(time.perf_counter() - start)
                    assert fetched.sent.commits == DELTA, (name, fetched)
            for repo in copies.values():
                repo.close()
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait()
            source.close()
    rows = [[name, f"{times[name].p50:.1f}", f"{times[name].p90:.1f}", f"{statistics.median(sizes):,.0f}",
             f"{clones[name]:.2f}", f"{whole:,}"] for name in times]
    write_report("remote_delta", f"Remotes: a {DELTA}-commit fetch from a {args.history:,}-commit store", [
        "- command: `python benchmarks/remote_delta.py`",
        f"The source has {args.history:,} one-fact commits over {FACTS:,} fact ids; each round it gains {DELTA} "
        f"more and both copies fetch them, in alternating order ({args.rounds} rounds). A fetch is timed in "
        "process (`mnem_store.sync.fetch`): advertisement, pack, one write of the receiving store. Over HTTP the "
        "server is `mnem-mcp --auth none`, whose `mnem` worker answers with `mnem upload-pack`. The pack is the "
        "same for both remotes; the clone of the whole history is timed once per remote, for scale.",
        table(["remote", f"{DELTA}-commit fetch p50 ms", "p90 ms", "pack bytes (p50)",
               f"clone of {args.history:,} commits, s", "whole-history pack bytes"], rows),
    ])


if __name__ == "__main__":
    main()
