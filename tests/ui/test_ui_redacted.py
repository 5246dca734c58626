"""``mnem ui`` shows a redacted version as its record ("redacted at T by A: reason"), never its old value.

In a real headless Chromium, as ``test_ui_browser`` checks pages: the
memory table, a fact's "why" and its timeline, and a commit's changes all
say who redacted the value, when and why, and the secret is nowhere on the
page (nor in what the page's API answered).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import run_mnem
from ui_support import chromium, new_page, serving

SECRET = "sk-live-0b5e77d1c2a94f3e"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("ui-redacted") / "memory"
    assert run_mnem("init", str(root)).code == 0
    for message, content in (("key", {"token": SECRET}), ("rotated", {"token": "sk-live-rotated"})):
        done = run_mnem("--store", str(root), "write", "-m", message, input=json.dumps({"put": [
            {"id": "api-key", "content": content}, {"id": "owner", "content": "ada"}]}))
        assert done.code == 0, done.err
    done = run_mnem("--store", str(root), "--now", "1796000000000", "redact", "--node", "api-key",
                    "--reason", "leaked in a chat", "--by", "dpo")
    assert done.code == 0, done.err
    with serving(str(root), root.parent / "ui.log") as found:
        yield found


@pytest.fixture(scope="module")
def browser():
    with chromium() as found:
        yield found


MARKER = "redacted at 2026-11-30 00:53:20Z by dpo: leaked in a chat"


def test_every_view_of_a_redacted_value_shows_its_record_and_never_the_value(browser: Any, url: str) -> None:
    with new_page(browser) as page:
        answers: list[Any] = []
        page.on("response", lambda response: answers.append(response) if "/api/" in response.url else None)
        page.goto(url + "#/")
        page.get_by_role("row").filter(has_text="api-key").filter(has_text=MARKER).first.wait_for()
        page.goto(url + "#/fact?id=api-key")
        page.get_by_role("region", name="Why it holds this value").filter(has_text=MARKER).wait_for()
        steps = page.get_by_role("list", name="values, newest first").locator(":scope > li")
        steps.nth(1).wait_for()
        assert [steps.nth(n).filter(has_text=MARKER).count() for n in range(2)] == [1, 1]
        assert page.get_by_role("button", name="When did this value first hold?").count() == 0
        page.get_by_role("region", name="Why it holds this value").get_by_role("link").first.click()
        page.get_by_role("table").filter(has_text=MARKER).first.wait_for()
        assert SECRET not in page.content()
        assert answers and not any(SECRET in answer.text() for answer in answers)
