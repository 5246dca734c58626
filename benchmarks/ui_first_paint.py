"""``mnem ui`` at 10k facts and 10k commits: time to the memory view's first paint, and each API answer.

The store holds 10k facts (one import commit) and 10k more commits, each
rewriting one of 100 facts, with a hypothesis branch merged back every 100
commits.  A real ``mnem ui`` process serves it; Debian's headless chromium
(Playwright, ``executable_path``) opens the page in a fresh browser context
each time, and the clock runs from ``goto`` until the table holds its first
50 rows: HTML, script, stylesheet, ``/api/head`` and ``/api/facts`` all
included.  The target is 500 ms.  Each JSON route, and the page itself
(whose first paint the server writes in: ``mnem_store/ui/firstpaint.py``),
is then timed alone with httpx on the same warm server.

Run: ``python benchmarks/ui_first_paint.py [--quick]``; writes ``benchmarks/results/ui_first_paint.md``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from benchlib import Samples, table, timed, write_report

from mnem_store import porcelain
from mnem_store.objects import MemoryNode, Provenance
from mnem_store.repo import Repo

MNEM = str(Path(sys.executable).with_name("mnem"))


def grow(root: Path, facts: int, commits: int) -> str:
    """``facts`` facts in one commit, then ``commits`` one-fact commits (a merged branch every 100th).

    Returns the first commit's id (the import).
    """
    with Repo.init(root) as repo:
        porcelain.write(repo, [MemoryNode(f"fact-{i:05d}", f"value {i}", provenance=Provenance(source=f"doc-{i}"))
                               for i in range(facts)], [], "import", "loader", 1_000)
        for i in range(commits):
            node = MemoryNode(f"fact-{i % 100:05d}", f"revised {i}", provenance=Provenance(source="run",
                                                                                        agent_step=f"step-{i}"))
            if i % 100 == 99:
                porcelain.checkout(repo, None, create=f"hypothesis-{i}")
                porcelain.write(repo, [node], [], f"hypothesis {i}", "planner", 2_000 + i)
                porcelain.checkout(repo, "main")
                porcelain.merge(repo, f"hypothesis-{i}", author="agent", time_ms=2_000 + i)
            else:
                porcelain.write(repo, [node], [], f"step {i}", "agent", 2_000 + i)
        return porcelain.log(repo, first_parent=True)[-1][0].hex()


def serve(root: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    err = open(log, "wb")  # noqa: SIM115 - the server writes to it for as long as it runs
    proc = subprocess.Popen([MNEM, "ui", "--store", str(root), "--port", "0"], stderr=err,
                            stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while "http://" not in log.read_text():
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit(f"mnem ui did not start: {log.read_text()}")
        time.sleep(0.02)
    url = "http://" + log.read_text().split("http://", 1)[1].split()[0]
    return proc, url


def first_paints(url: str, samples: int) -> Samples:
    from playwright.sync_api import sync_playwright

    out = Samples()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"))
        for i in range(samples + 2):
            context = browser.new_context()
            page = context.new_page()
            start = time.perf_counter()
            page.goto(url)
            page.locator("table.facts tbody tr").nth(49).wait_for()
            elapsed = time.perf_counter() - start
            if i >= 2:  # two warm-ups: the browser's first page and the server's first reads
                out.add(elapsed)
            context.close()
        browser.close()
    return out


def routes(url: str, first: str, samples: int) -> list[tuple[str, Samples]]:
    import httpx

    calls = [
        ("the page, its first paint written in (store, branch, facts, last commit)", "/", {}),
        ("head", "/api/head", {}),
        ("facts, page 1", "/api/facts", {"limit": 50}),
        ("facts, page 100", "/api/facts", {"limit": 50, "offset": 4_950}),
        ("facts, a search over 10k facts", "/api/facts", {"q": "revised 99"}),
        ("log, newest 50 commits", "/api/log", {"limit": 50}),
        ("log, commits 9,950 to 10,000", "/api/log", {"limit": 50, "offset": 9_950}),
        ("log of every branch, newest 50 (and whether it holds checkpoints)", "/api/log", {"limit": 50, "all": 1}),
        ("timeline, 20 values of a fact changed 100 times", "/api/timeline", {"id": "fact-00007", "limit": 20}),
        ("blame", "/api/blame", {"id": "fact-00007"}),
        ("commit, 50 of the import's 10k changes", f"/api/commit/{first}", {"limit": 50}),
    ]
    with httpx.Client(base_url=url) as client:
        return [(name, timed(lambda p=path, q=query: client.get(p, params=q).raise_for_status(), samples))
                for name, path, query in calls]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    samples = 5 if args.quick else 20
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "store"
        start = time.perf_counter()
        first = grow(root, 10_000, 10_000)
        built = time.perf_counter() - start
        proc, url = serve(root, Path(tmp) / "ui.log")
        try:
            paint = first_paints(url, samples)
            answers = routes(url, first, samples)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    verdict = "within" if paint.p90 <= 500 else "over"
    write_report("ui_first_paint", "mnem ui: first paint at 10k facts and 10k commits", [
        f"A store of 10,000 facts and 10,100 commits (a merged branch every 100; built in process in {built:.0f} s), "
        f"served by a real `mnem ui`; {samples} page loads in fresh Chromium contexts after two warm-ups.",
        table(("measure", "p50 ms", "p90 ms"), [("first paint of the memory view (50 rows)",
                                                  f"{paint.p50:.0f}", f"{paint.p90:.0f}")]),
        f"The 500 ms target: p90 {verdict} it. Each JSON route alone, {samples} requests over one connection:",
        table(("route", "p50 ms", "p90 ms"), [(name, f"{got.p50:.1f}", f"{got.p90:.1f}") for name, got in answers]),
    ])


if __name__ == "__main__":
    main()
