"""``mnem ui`` in a real headless Chromium: pages checked by content, never by pixels.

Each test opens a page of one shared ``mnem ui`` process (the support-agent
store of ``ui_support``) and checks what a person would: the elements and
their accessible names, counts and values, and navigation by click and by
keyboard.  ``test_the_support_agent_story`` walks the README's story without
typing a command and saves the timeline's screenshot the README shows.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_mnem
from ui_support import build_story, chromium, serving

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "ui-timeline.png"


@pytest.fixture(scope="module")
def browser():
    with chromium() as found:
        yield found


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory):
    root = build_story(tmp_path_factory.mktemp("ui-browser") / "agent-memory")
    with serving(str(root), root.parent / "ui.log") as found:
        yield found


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    opened = context.new_page()
    opened.set_default_timeout(10_000)
    errors: list[str] = []
    opened.on("pageerror", lambda exc: errors.append(str(exc)))
    yield opened
    context.close()
    assert errors == [], errors


def expect_text(locator, text: str) -> None:
    locator.filter(has_text=text).first.wait_for()


def test_memory_now_is_a_paginated_table_with_provenance(page, url):
    page.goto(url)
    table = page.get_by_role("table")
    expect_text(table.locator("caption"), "62 facts")
    assert page.get_by_role("heading", level=1).inner_text() == "Memory now"
    headers = table.get_by_role("columnheader").all_inner_texts()
    assert headers[:6] == ["fact", "value", "kind", "source", "step", "observation"]
    assert table.locator("tbody tr").count() == 50
    row = table.get_by_role("row").filter(has=page.get_by_role("link", name="customer-4821", exact=True))
    assert row.get_by_role("cell").all_inner_texts()[:4] == ['"downgraded to Pro last month"', "note",
                                                           "billing-note-8842", "step-31"]
    pages = page.get_by_role("navigation", name="Facts pages")
    assert "Page 1 of 2" in pages.inner_text()
    pages.get_by_role("button", name="Next page").click()
    expect_text(pages, "Page 2 of 2")
    assert table.locator("tbody tr").count() == 12
    assert pages.get_by_role("button", name="Next page").is_disabled()
    page.go_back()
    expect_text(pages, "Page 1 of 2")


def test_search_by_keyboard(page, url):
    page.goto(url)
    page.get_by_role("table").wait_for()
    page.keyboard.press("/")
    search = page.get_by_role("searchbox", name="Search facts")
    assert search.evaluate("node => node === document.activeElement")
    page.keyboard.type("billing")
    caption = page.get_by_role("table").locator("caption")
    expect_text(caption, "1 fact matching")
    assert page.get_by_role("table").locator("tbody tr").count() == 1
    assert search.evaluate("node => node === document.activeElement")  # typing goes on in the box
    page.keyboard.press("Control+A")
    page.keyboard.type("no such thing")
    expect_text(page.locator("main"), "No fact matches.")


def test_the_support_agent_story(page, url):
    """The wrong belief, its timeline, and the commit and source that set it: all by clicking."""
    page.goto(url)
    page.get_by_role("link", name="customer-4821", exact=True).click()
    page.get_by_role("heading", name="Fact customer-4821").wait_for()
    why = page.get_by_role("region", name="Why it holds this value")
    expect_text(why, "downgraded to Pro last month")
    assert why.locator("dd[data-field=source]").inner_text() == "billing-note-8842"
    assert why.locator("dd[data-field=agent_step]").inner_text() == "step-31"
    timeline = page.get_by_role("list", name="values, newest first")
    steps = timeline.locator(":scope > li")
    steps.nth(1).wait_for()
    assert steps.count() == 2
    newest = steps.nth(0)
    assert newest.get_by_role("heading").inner_text().startswith("modified at 2026-03-02 09:03")
    diff = newest.get_by_role("table", name="Changed from the value before")
    content = diff.get_by_role("row").filter(has=page.get_by_role("rowheader", name="content", exact=True))
    assert content.get_by_role("cell").all_inner_texts() == ['"on the Enterprise plan"',
                                                             '"downgraded to Pro last month"']
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    steps.nth(1).get_by_role("button", name="When did this value first hold?").click()
    expect_text(steps.nth(1).locator("output"), "open the case")
    why.get_by_role("link", name=re.compile("reconcile the plan tier")).click()
    page.get_by_role("heading", name=re.compile("^Commit [0-9a-f]{12}$")).wait_for()
    changes = page.get_by_role("table", name="1 fact changed")
    assert changes.locator("tbody tr").first.get_by_role("cell").all_inner_texts() == [
        "modified", '"on the Enterprise plan"', '"downgraded to Pro last month"', "billing-note-8842"]


def test_the_commit_graph_by_click_and_keyboard(page, url):
    page.goto(url + "#/history")
    commits = page.get_by_role("list", name="commits, newest first").get_by_role("link")
    commits.nth(4).wait_for()
    assert commits.count() == 5
    graph = page.get_by_role("img", name=re.compile("^commit graph"))
    assert graph.get_attribute("aria-label") == "commit graph: 5 commits, 1 merges"
    assert graph.locator("circle").count() == 5 and graph.locator("circle.merge").count() == 1
    assert graph.locator("polyline").count() == 5  # four first-parent edges and the merge's second parent
    lanes = {graph.locator("circle").nth(i).get_attribute("cx") for i in range(5)}
    assert len(lanes) == 2  # the hypothesis branch has a lane of its own
    commits.first.focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    focused = page.evaluate("document.activeElement.getAttribute('aria-label')")
    assert focused.endswith("try 40 seats")
    page.keyboard.press("Enter")
    page.get_by_role("heading", name=re.compile("^Commit ")).wait_for()
    assert page.locator(".message").inner_text() == "try 40 seats"
    row = page.get_by_role("table", name="1 fact changed").locator("tbody tr")
    assert row.get_by_role("cell").all_inner_texts() == ["added", "—", "40", "crm-export"]
    page.go_back()
    graph.locator("circle").last.click()
    expect_text(page.locator(".message"), "open the case")


def test_time_travel_from_a_commit(page, url):
    page.goto(url + "#/history")
    page.get_by_role("link", name=re.compile("open the case$")).click()
    page.get_by_role("link", name="See the memory at this commit").click()
    page.get_by_role("heading", name=re.compile("^Memory at commit")).wait_for()
    expect_text(page.get_by_role("table").locator("caption"), "1 fact")
    cells = page.get_by_role("table").locator("tbody tr").first.get_by_role("cell").all_inner_texts()
    assert cells[:3] == ['"on the Enterprise plan"', "note", "ticket-4821"]
    page.get_by_role("link", name="customer-4821").click()
    steps = page.get_by_role("list", name="values, newest first").locator(":scope > li")
    steps.first.wait_for()
    assert steps.count() == 1  # the story as it stood then
    page.get_by_role("link", name="Memory", exact=True).click()
    expect_text(page.get_by_role("heading", level=1), "Memory now")


def test_an_unknown_fact_says_so(page, url):
    page.goto(url + "#/fact?id=ghost")
    alert = page.get_by_role("alert").first
    alert.wait_for()
    assert alert.inner_text().startswith(("invalid_ref:", "not_found:"))


def test_live_updates_show_a_new_commit(browser, tmp_path):
    root = tmp_path / "live"
    assert run_mnem("init", str(root)).code == 0
    assert run_mnem("--store", str(root), "add", "plan", "pro").code == 0
    assert run_mnem("--store", str(root), "commit", "-m", "first").code == 0
    with serving(str(root), tmp_path / "ui.log") as base:
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(base)
            expect_text(page.get_by_role("table").locator("caption"), "1 fact")
            assert run_mnem("--store", str(root), "add", "seats", "40").code == 0
            assert run_mnem("--store", str(root), "commit", "-m", "second").code == 0
            expect_text(page.get_by_role("status"), "Memory updated")
            expect_text(page.get_by_role("table").locator("caption"), "2 facts")
            assert page.get_by_role("link", name="seats").count() == 1
        finally:
            context.close()
