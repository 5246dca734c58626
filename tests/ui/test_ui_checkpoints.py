"""``mnem ui``'s history with LangGraph checkpoints: marked apart from memory commits, filtered to one thread.

The store holds what ``MnemosyneSaver`` and an agent write side by side: checkpoints of two threads (one of
them named with a ``:``, escaped in its node ids) and the memory commits between them.  The API is checked
for its ``threads`` marks and its ``thread`` filter, the page in a real headless Chromium for the markers,
the filter box, a marker's link and a ``?thread=`` URL.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from test_ui_browser import expect_text
from ui_support import MINUTE, T0, WAIT_MS, chromium, serving

from mnem_store import porcelain
from mnem_store.objects import MemoryNode
from mnem_store.repo import Repo

#: The commits' messages, oldest first, and the ids each one writes.
RUN = [
    ("remember plan", ["users:u1:plan"]),
    ("checkpoint t1 step -1 (input)", [".checkpoint:t1::c:01", ".checkpoint:t1::b:messages:01"]),
    ("checkpoint run:2 step -1 (input)", [".checkpoint:run%3A2::c:01"]),
    ("remember seats", ["users:u1:seats"]),
    ("checkpoint t1 step 0 (loop)", [".checkpoint:t1::c:02"]),
]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ui-checkpoints") / "agent-memory"
    with Repo.init(root) as repo:
        for minute, (message, ids) in enumerate(RUN):
            porcelain.write(repo, [MemoryNode(node_id, {"n": minute}) for node_id in ids], [], message, "agent",
                            T0 + minute * MINUTE)
    with serving(str(root), root.parent / "ui.log") as found:
        yield found


def test_the_log_marks_checkpoints_and_keeps_one_thread(url: str) -> None:
    with httpx.Client(base_url=url, timeout=20) as client:
        every = client.get("/api/log").json()
        assert [(c["message"], c["threads"]) for c in every["commits"]] == [
            ("checkpoint t1 step 0 (loop)", ["t1"]), ("remember seats", []),
            ("checkpoint run:2 step -1 (input)", ["run:2"]), ("checkpoint t1 step -1 (input)", ["t1"]),
            ("remember plan", [])]
        one = client.get("/api/log", params={"thread": "run:2", "all": "1", "limit": 2}).json()
        assert [c["message"] for c in one["commits"]] == ["remember seats", "checkpoint run:2 step -1 (input)"]
        assert one["thread"] == "run:2" and one["more"] is True
        refused = client.get("/api/log", params={"thread": "x" * 300})
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "usage"


@pytest.fixture(scope="module")
def browser():
    with chromium() as found:
        yield found


def test_the_history_filters_to_one_thread_by_box_link_and_url(browser, url: str, tmp_path: Path) -> None:
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    errors: list[str] = []
    try:
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url + "#/history")
        commits = page.get_by_role("list", name="commits, newest first").locator("a.commit")  # not the markers
        commits.nth(4).wait_for()
        rows = page.get_by_role("list", name="commits, newest first").locator(":scope > li")
        assert rows.evaluate_all("rows => rows.map((row) => row.className)") == [
            "checkpoint", "memory", "checkpoint", "checkpoint", "memory"]
        assert rows.first.locator(".checkpoint-mark").inner_text() == "checkpoint t1"
        assert page.get_by_role("img", name=re.compile("^commit graph")).count() == 1
        # the box: one thread's checkpoints and the memory commits, without the graph
        page.get_by_role("searchbox", name="Checkpoints of thread").fill("t1")
        page.get_by_role("button", name="Filter").click()
        expect_text(page.locator("main"), "The checkpoints of thread “t1”")
        assert "thread=t1" in page.url
        assert [label.split(": ", 1)[1] for label in
                commits.evaluate_all("links => links.map((link) => link.getAttribute('aria-label'))")] == [
            "checkpoint t1 step 0 (loop)", "remember seats", "checkpoint t1 step -1 (input)", "remember plan"]
        assert page.get_by_role("img", name=re.compile("^commit graph")).count() == 0
        # a marker's link filters to its thread, a thread id holding ':' included
        page.get_by_role("link", name="Show every commit").click()
        commits.nth(4).wait_for()
        page.get_by_role("link", name="run:2", exact=True).click()
        expect_text(page.locator("main"), "The checkpoints of thread “run:2”")
        assert commits.count() == 3
        # a URL naming a thread without checkpoints lists the memory commits and says so; the box holds it
        page.goto(url + "#/history?thread=nobody")
        expect_text(page.locator("main"), "None of these commits wrote a checkpoint of thread “nobody”")
        assert commits.count() == 2
        assert page.get_by_role("searchbox", name="Checkpoints of thread").input_value() == "nobody"
    finally:
        context.close()
    assert errors == [], errors
