"""``mnem ui`` names who pushed a commit beside its author, wherever they differ: in its answers and on the page.

A store on each backend takes alice's commits from bob (``mnem receive-pack``
with a ``pusher``, as a ``mnem-mcp`` server runs it) and has a commit of its
own; a real ``mnem ui`` answers every view of those commits (facts' set-by,
why, the timeline, the history, a commit) with ``pushed_by`` and
``pushed_at`` for the pushed ones only, and a real headless Chromium shows
"pushed by bob" beside alice's name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pg_stores
import pytest
from conftest import new_store
from mnem_history import ok, write
from ui_support import WAIT_MS, chromium, serving


@pytest.fixture(params=["sqlite", "postgresql"])
def pushed(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[httpx.Client, str, str, str]]:
    """A served store holding alice's commit pushed by bob, and one of carol's made there; the two ids."""
    source = new_store(tmp_path / "source", "sqlite")
    alices = write(source, "alice: pro", 1000, {"plan": "pro"}, author="alice")
    pack = ok("--json", "upload-pack", cwd=source, input=json.dumps({"want": [alices], "have": []})).json["pack"]
    store = new_store(tmp_path / "store", request.param)
    ok("--json", "receive-pack", cwd=store, input=json.dumps(
        {"pack": pack, "branch": "main", "old": None, "new": alices, "pusher": "bob"}))
    carols = write(store, "carol: 40 seats", 2000, {"seats": 40}, author="carol")
    with serving(pg_stores.address(store), tmp_path / "ui.log") as url, \
            httpx.Client(base_url=url, timeout=20) as client:
        yield client, url, alices, carols


def test_every_answer_names_the_pusher_of_a_pushed_commit_and_only_of_it(pushed: tuple[httpx.Client, str, str, str]
                                                                        ) -> None:
    client, _, alices, carols = pushed
    log = {c["id"]: c for c in client.get("/api/log").json()["commits"]}
    assert (log[alices]["author"], log[alices]["pushed_by"]) == ("alice", "bob")
    assert isinstance(log[alices]["pushed_at"], int) and "pushed_by" not in log[carols]
    facts = {f["id"]: f["set_by"] for f in client.get("/api/facts").json()["facts"]}
    assert facts["plan"]["pushed_by"] == "bob" and "pushed_by" not in facts["seats"]
    assert client.get("/api/blame", params={"id": "plan"}).json()["commit"]["pushed_by"] == "bob"
    step = client.get("/api/timeline", params={"id": "plan"}).json()["entries"][0]
    assert step["commit"]["pushed_by"] == step["origin"]["pushed_by"] == "bob"
    assert client.get(f"/api/commit/{alices}").json()["commit"]["pushed_by"] == "bob"
    assert "pushed_by" not in client.get(f"/api/commit/{carols}").json()["commit"]


def test_the_page_shows_pushed_by_beside_the_author(pushed: tuple[httpx.Client, str, str, str]) -> None:
    _, url, alices, _ = pushed
    with chromium() as browser:
        page = browser.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(url + f"#/commit/{alices}")
        meta = page.locator("dl.meta")
        meta.get_by_text("pushed by", exact=True).wait_for()
        assert re.search(r"pushed by\s*bob at \d{4}-\d\d-\d\d", meta.inner_text()), meta.inner_text()
        page.goto(url + "#/fact?id=plan")
        page.get_by_text("by alice (pushed by bob)", exact=False).first.wait_for()
        page.goto(url + "#/history")
        page.get_by_text("carol ·", exact=False).first.wait_for()
        assert "alice (pushed by bob)" in page.locator("main").inner_text()
