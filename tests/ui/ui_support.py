"""Shared pieces of the ``mnem ui`` tests: the support-agent store, a real ``mnem ui`` process, and Chromium.

The store is built in process, with fixed commit times so the README's
screenshot does not change from run to run.  The server is a real ``mnem ui --port 0`` process
whose address is read from its stderr; the browser is Debian's ``chromium``
driven by Playwright (``executable_path``: nothing is downloaded).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from conftest import MNEM

from mnem_store import porcelain
from mnem_store.objects import MemoryNode, Provenance
from mnem_store.repo import Repo

#: Milliseconds a page waits for what it looks for to appear (Playwright's timeout): the wait ends when it is
#: there, so the bound only turns a page that never shows it into a failure, however loaded the machine.
WAIT_MS = 30_000
#: Seconds ``serving`` waits for ``mnem ui`` to print its address: likewise only a hang reaches it.
HANG = 60.0

#: 2026-03-02 09:00:00 UTC, and one minute per commit after it.
T0 = 1_772_442_000_000
MINUTE = 60_000
#: Filler facts, so the memory view has two pages (50 a page).
FILLER = 60
#: The ``contract`` fact's value: a JSON map with long tokens.
CONTRACT = {"billing": "monthly", "contact": "finance@customer-4821.example", "renews": "2027-03-01", "seats": 25,
            "tier": "Enterprise"}


def build_story(root: Path) -> Path:
    """The README's support-agent story, two hypothesis branches and filler facts; returns the store root.

    Built in process (what ``mnem write``, ``checkout`` and ``merge`` run), one commit per step of the story:
    ``hypothesis/seats`` (a claim) is merged back, ``hypothesis/annual`` is not, so the graph of every branch
    holds a commit that HEAD's history lacks (one that removes ``note-00``).  ``contract`` is a JSON map, so
    values can be checked for wrapping.
    """
    with Repo.init(root) as repo:
        def write(message: str, author: str, minute: int, *nodes: MemoryNode) -> None:
            porcelain.write(repo, list(nodes), [], message, author, T0 + minute * MINUTE)

        ticket = Provenance(source="ticket-4821")
        write("open the case", "agent", 0,
              MemoryNode("customer-4821", "on the Enterprise plan", provenance=ticket),
              MemoryNode("contract", CONTRACT, provenance=ticket))
        write("import the knowledge base", "loader", 1,
              *(MemoryNode(f"note-{i:02d}", f"note {i}", provenance=Provenance(source="kb")) for i in range(FILLER)))
        porcelain.checkout(repo, None, create="hypothesis/seats")
        write("try 40 seats", "planner", 2,
              MemoryNode("seats", 40, "claim", provenance=Provenance(source="crm-export", agent_step="step-12")))
        porcelain.checkout(repo, "main")
        write("reconcile the plan tier", "agent", 3,
              MemoryNode("customer-4821", "downgraded to Pro last month",
                         provenance=Provenance(source="billing-note-8842", agent_step="step-31",
                                               observation="the February invoice bills the Pro plan")))
        porcelain.checkout(repo, None, create="hypothesis/annual")
        porcelain.write(repo, [MemoryNode("contract", {**CONTRACT, "billing": "annual"},
                                          provenance=Provenance(source="crm-export"))],
                        ["note-00"], "try annual billing", "planner", T0 + 5 * MINUTE)
        porcelain.checkout(repo, "main")
        porcelain.merge(repo, "hypothesis/seats", author="agent", time_ms=T0 + 4 * MINUTE)
    return root


@contextmanager
def serving(store: str, log: Path) -> Iterator[str]:
    """Run ``mnem ui --store STORE --port 0`` and yield its URL; the process is ended (and reaped) on exit."""
    with open(log, "wb") as err:
        proc = subprocess.Popen([MNEM, "ui", "--store", store, "--port", "0"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                                env={k: v for k, v in os.environ.items() if k != "MNEM_STORE"})
    try:
        yield _announced(proc, log)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _announced(proc: subprocess.Popen[bytes], log: Path) -> str:
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        if "http://" in text:
            return text.split("http://", 1)[1].split()[0].join(["http://", ""])
        if proc.poll() is not None:
            raise AssertionError(f"mnem ui exited with {proc.returncode}: {text}")
        time.sleep(0.02)
    raise AssertionError(f"mnem ui did not print its address within {HANG:g} s")


@contextmanager
def new_page(browser: Any) -> Iterator[Any]:
    """A page in a fresh 1100x760 context, waiting at most ``WAIT_MS``; on exit, no script error may have occurred."""
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    yield opened
    context.close()
    assert errors == [], errors


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's chromium under Playwright, headless; closed (with Playwright's driver) on exit."""
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    assert executable, "no chromium on PATH: run bin/install-chromium"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable)
        try:
            yield browser
        finally:
            browser.close()
