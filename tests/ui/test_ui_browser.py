"""``mnem ui`` in a real headless Chromium: pages checked by content, never by pixels.

Each test opens a page of one shared ``mnem ui`` process (the support-agent
store of ``ui_support``) and checks what a person would: the elements and
their accessible names, counts and values, and navigation by click and by
keyboard.  ``test_the_support_agent_story`` walks the README's story without
typing a command and saves the timeline's screenshot the README shows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import run_mnem
from ui_support import CONTRACT, build_story, chromium, new_page, serving

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
def page(browser: Any) -> Iterator[Any]:
    with new_page(browser) as opened:
        yield opened


def expect_text(locator, text: str) -> None:
    locator.filter(has_text=text).first.wait_for()


#: What a person must never read on the page: the store's field names and the API's error codes.
INTERNAL_NAMES = ("content_kind", "provenance.", "agent_step", "tool_call", "event_time", "invalid_ref", "not_found")

#: The words of an element's text that the browser broke across two lines (a word: a run without whitespace).
SPLIT_WORDS = """element => {
  const split = [];
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    for (const word of text.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(text, word.index);
      range.setEnd(text, word.index + word[0].length);
      if (new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size > 1) split.push(word[0]);
    }
  }
  return split;
}"""


def assert_users_words(page) -> None:
    """The main view's text names nothing by its internal name."""
    text = page.locator("main").inner_text()
    assert not [name for name in INTERNAL_NAMES if name in text], text


def header_texts(table) -> list[str]:
    return table.get_by_role("columnheader").all_inner_texts()


def test_memory_now_is_a_paginated_table_with_provenance(page, url):
    page.goto(url)
    table = page.get_by_role("table")
    expect_text(table.locator("caption"), "63 facts")
    assert page.get_by_role("heading", level=1).inner_text() == "Memory now"
    # Columns empty on every row of the page are left out, and so is kind while every fact is a note.
    assert header_texts(table) == ["fact", "value", "source", "step", "observation", "set by"]
    assert table.locator("tbody tr").count() == 50
    row = table.get_by_role("row").filter(has=page.get_by_role("link", name="customer-4821", exact=True))
    cells = row.get_by_role("cell").all_inner_texts()
    assert cells[:4] == ['"downgraded to Pro last month"', "billing-note-8842", "step-31",
                         "the February invoice bills the Pro plan"]
    assert_users_words(page)
    pages = page.get_by_role("navigation", name="Facts pages")
    assert "Page 1 of 2" in pages.inner_text()
    pages.get_by_role("button", name="Next page").click()
    expect_text(pages, "Page 2 of 2")
    assert table.locator("tbody tr").count() == 13
    assert header_texts(table) == ["fact", "value", "kind", "source", "step", "set by"]
    seats = table.get_by_role("row").filter(has=page.get_by_role("link", name="seats", exact=True))
    assert seats.get_by_role("cell").all_inner_texts()[:4] == ["40", "claim", "crm-export", "step-12"]
    assert pages.get_by_role("button", name="Next page").is_disabled()
    page.go_back()
    expect_text(pages, "Page 1 of 2")


def test_set_by_names_the_author_beside_the_commit(page, url):
    page.goto(url + "#/?q=crm-export")
    table = page.get_by_role("table")
    expect_text(table.locator("caption"), "1 fact matching")
    set_by = table.locator("tbody tr").first.locator("td.set-by")
    # Written by the planner on the hypothesis branch, and merged by the agent: the planner wrote it.
    assert re.fullmatch(r"planner in [0-9a-f]{8} at 2026-03-02 09:02:00Z", set_by.inner_text()), set_by.inner_text()
    assert set_by.get_by_role("link").get_attribute("aria-label").endswith(": try 40 seats")


def test_values_are_pretty_json_that_wraps_between_words(page, url):
    page.goto(url)
    table = page.get_by_role("table")
    row = table.get_by_role("row").filter(has=page.get_by_role("link", name="contract", exact=True))
    value = row.locator("td.value")
    value.wait_for()
    assert value.inner_text() == json.dumps(CONTRACT, indent=2)
    assert page.locator(".scroll").evaluate("box => box.scrollWidth <= box.clientWidth")  # the table fits the page
    for shown in table.locator("tbody tr").all()[:2]:  # contract and customer-4821: ids and sources with hyphens
        assert shown.evaluate(SPLIT_WORDS) == [], shown.inner_text()
    row.get_by_role("link", name="contract", exact=True).click()
    why = page.get_by_role("region", name="Why it holds this value").locator(".value")
    why.wait_for()
    assert why.inner_text() == json.dumps(CONTRACT, indent=2) and why.evaluate(SPLIT_WORDS) == []


def test_search_by_keyboard(page, url):
    page.goto(url)
    page.get_by_role("table").wait_for()
    page.keyboard.press("/")
    search = page.get_by_role("searchbox", name="Search facts")
    assert search.evaluate("node => node === document.activeElement")
    page.keyboard.type("billing-note")
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
    assert why.locator("dt").all_inner_texts() == ["source", "step", "observation"]
    timeline = page.get_by_role("list", name="values, newest first")
    steps = timeline.locator(":scope > li")
    steps.nth(1).wait_for()
    assert steps.count() == 2
    newest = steps.nth(0)
    assert newest.get_by_role("heading").inner_text().startswith("modified at 2026-03-02 09:03")
    diff = newest.get_by_role("table", name="Changed from the value before")
    assert diff.get_by_role("rowheader").all_inner_texts() == ["value", "source", "step", "observation"]
    content = diff.get_by_role("row").filter(has=page.get_by_role("rowheader", name="value", exact=True))
    assert content.get_by_role("cell").all_inner_texts() == ['"on the Enterprise plan"',
                                                             '"downgraded to Pro last month"']
    assert_users_words(page)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    steps.nth(1).get_by_role("button", name="When did this value first hold?").click()
    expect_text(steps.nth(1).locator("output"), "open the case")
    assert "by agent" in steps.nth(1).locator("output").inner_text()
    why.get_by_role("link", name=re.compile("reconcile the plan tier")).click()
    page.get_by_role("heading", name=re.compile("^Commit [0-9a-f]{12}$")).wait_for()
    changes = page.get_by_role("table", name="1 fact changed")
    assert changes.locator("tbody tr").first.get_by_role("cell").all_inner_texts() == [
        "modified", '"on the Enterprise plan"', '"downgraded to Pro last month"', "billing-note-8842"]
    assert_users_words(page)


def commit_list(page):
    return page.get_by_role("list", name="commits, newest first").get_by_role("link")


def test_the_commit_graph_shows_every_branch_by_click_and_keyboard(page, url):
    page.goto(url + "#/history")
    commits = commit_list(page)
    commits.nth(5).wait_for()
    assert commits.count() == 6
    assert commits.first.get_attribute("aria-label").endswith(": try annual billing")  # not merged into main
    assert page.get_by_role("radio", name="All branches").is_checked()
    graph = page.get_by_role("img", name=re.compile("^commit graph"))
    assert graph.get_attribute("aria-label") == "commit graph: 6 commits, 1 merge"
    assert graph.locator("circle").count() == 6 and graph.locator("circle.merge").count() == 1
    assert graph.locator("polyline").count() == 6  # five first-parent edges and the merge's second parent
    assert len({graph.locator("circle").nth(i).get_attribute("cx") for i in range(6)}) == 3  # a lane per branch
    chips = page.get_by_role("list", name="commits, newest first").locator(".branch").all_inner_texts()
    assert sorted(chips) == ["hypothesis/annual", "hypothesis/seats", "main"]
    commits.first.focus()
    for _ in range(3):
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


def test_the_graph_toggles_to_one_branch_the_current_one_first(page, url):
    page.goto(url + "#/history")
    commits = commit_list(page)
    commits.nth(5).wait_for()
    page.get_by_role("radio", name="One branch").check()
    page.get_by_role("img", name="commit graph: 5 commits, 1 merge").wait_for()
    assert commits.count() == 5 and "try annual billing" not in page.locator("main").inner_text()
    branch = page.get_by_role("combobox", name="Branch")
    assert branch.locator("option:checked").inner_text() == "main (current)"
    branch.select_option("hypothesis/annual")
    page.get_by_role("img", name="commit graph: 4 commits, 0 merges").wait_for()
    assert commits.first.get_attribute("aria-label").endswith(": try annual billing")
    page.get_by_role("radio", name="All branches").check()
    page.get_by_role("img", name="commit graph: 6 commits, 1 merge").wait_for()


def test_time_travel_from_a_commit(page, url):
    page.goto(url + "#/history")
    page.get_by_role("link", name=re.compile("open the case$")).click()
    page.get_by_role("link", name="See the memory at this commit").click()
    page.get_by_role("heading", name=re.compile("^Memory at commit")).wait_for()
    expect_text(page.get_by_role("table").locator("caption"), "2 facts")
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name="customer-4821", exact=True))
    assert row.get_by_role("cell").all_inner_texts()[:2] == ['"on the Enterprise plan"', "ticket-4821"]
    page.get_by_role("link", name="customer-4821").click()
    steps = page.get_by_role("list", name="values, newest first").locator(":scope > li")
    steps.first.wait_for()
    assert steps.count() == 1  # the story as it stood then
    page.get_by_role("link", name="Memory", exact=True).click()
    expect_text(page.get_by_role("heading", level=1), "Memory now")


def test_an_unknown_fact_says_what_is_missing_and_what_to_do(page, url):
    page.goto(url + "#/fact?id=ghost")
    page.get_by_role("heading", name="No fact “ghost”", level=1).wait_for()
    expect_text(page.locator("main"), "No commit on the history of HEAD has held a fact with the id “ghost”")
    assert_users_words(page)
    page.get_by_role("link", name="Search the memory for “ghost”").click()
    expect_text(page.locator("main"), "No fact matches.")
    assert page.get_by_role("searchbox", name="Search facts").input_value() == "ghost"


def test_a_removed_fact_says_which_commit_removed_it(page, url):
    page.goto(url + "#/fact?id=note-00&at=hypothesis/annual")
    page.get_by_role("heading", name="Fact note-00", level=1).wait_for()
    assert page.locator("main > p.dim").inner_text() == "as of hypothesis/annual"
    why = page.get_by_role("region", name="Why it holds this value")
    expect_text(why, "Not in memory at this commit: it was removed by")
    assert why.get_by_role("link").get_attribute("aria-label").endswith(": try annual billing")
    assert_users_words(page)
    steps = page.get_by_role("list", name="values, newest first").locator(":scope > li")
    steps.nth(1).wait_for()
    assert steps.first.get_by_role("heading").inner_text().startswith("removed at")


def test_an_unknown_commit_or_branch_says_what_is_missing(page, url):
    page.goto(url + "#/commit/abababab")
    page.get_by_role("heading", name="No commit abababab", level=1).wait_for()
    expect_text(page.locator("main"), "No commit in this store has an id that starts with abababab")
    assert_users_words(page)
    page.get_by_role("link", name="Pick a commit in the history").click()
    commit_list(page).first.wait_for()
    page.goto(url + "#/history?at=no-such-branch")
    page.get_by_role("heading", name="No branch or commit “no-such-branch”", level=1).wait_for()
    assert_users_words(page)


def test_an_empty_store_says_so_and_follows_its_first_commits(browser, tmp_path):
    root = tmp_path / "live"
    assert run_mnem("init", str(root)).code == 0
    with serving(str(root), tmp_path / "ui.log") as base:
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(base + "#/history")
            page.get_by_role("heading", name="No commits yet", level=1).wait_for()
            page.get_by_role("link", name="Memory", exact=True).click()
            page.get_by_role("heading", name="No commits yet", level=1).wait_for()
            expect_text(page.locator("main"), "mnem commit")
            assert_users_words(page)
            assert run_mnem("--store", str(root), "add", "plan", "pro").code == 0
            assert run_mnem("--store", str(root), "commit", "-m", "first").code == 0
            expect_text(page.get_by_role("status"), "Memory updated")
            expect_text(page.get_by_role("table").locator("caption"), "1 fact")
            assert run_mnem("--store", str(root), "add", "seats", "40").code == 0
            assert run_mnem("--store", str(root), "commit", "-m", "second").code == 0
            expect_text(page.get_by_role("table").locator("caption"), "2 facts")
            assert page.get_by_role("link", name="seats").count() == 1
        finally:
            context.close()
