"""``mnem ui`` as a new user meets it (issue #45, point 8), in a real headless Chromium.

* ``--open`` where no browser can be started says so, with the address;
* the History page offers *Checkpoints of thread* only where the history
  holds LangGraph checkpoints (or a thread is already asked for);
* where a commit's author is upstream's default ``unknown``, the page says
  how to set one (``--author``, ``MNEM_AUTHOR``), and says nothing on a
  store whose commits all name their author;
* the first paint, before the page's script has run, already shows the
  store, its branch, how many facts it holds and its last commit.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import MNEM
from test_ui_browser import expect_text
from ui_support import MINUTE, T0, build_story, chromium, new_page, serving

from mnem_store import porcelain
from mnem_store.objects import MemoryNode
from mnem_store.repo import Repo

HINT = re.compile(r"--author NAME.*MNEM_AUTHOR")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as found:
        yield found


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    with new_page(browser) as opened:
        yield opened


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The support-agent store: every commit names its author, and none holds a checkpoint."""
    root = build_story(tmp_path_factory.mktemp("ui-first-hour") / "agent-memory")
    with serving(str(root), root.parent / "ui.log") as found:
        yield found


@pytest.fixture(scope="module")
def anonymous(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A store of CLI commits made without --author (upstream's default author, "unknown"), then 60 by an agent.

    The first commit wrote a LangGraph checkpoint, so the only checkpoint commit is on the history's second page.
    """
    root = tmp_path_factory.mktemp("ui-anonymous") / "cli-memory"
    with Repo.init(root) as repo:
        porcelain.write(repo, [MemoryNode(".checkpoint:t1::c:01", {"step": 0}), MemoryNode("plan", "pro")], [],
                        "checkpoint t1 step -1 (input)", "unknown", T0)
        for minute in range(1, 61):
            porcelain.write(repo, [MemoryNode(f"note-{minute:02d}", minute)], [], f"note {minute}", "agent",
                            T0 + minute * MINUTE)
    with serving(str(root), root.parent / "ui.log") as found:
        yield found


# ------------------------------------------------------------------------------- --open
def test_open_without_a_browser_says_so_with_the_address(tmp_path: Path) -> None:
    """No $BROWSER, no display, no console browser on PATH: what a server or a container is."""
    assert subprocess.run([MNEM, "init", str(tmp_path / "s")], capture_output=True, timeout=60).returncode == 0
    (tmp_path / "bin").mkdir()
    env = {key: value for key, value in os.environ.items()
           if key not in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY", "MNEM_STORE")}
    env["PATH"] = str(tmp_path / "bin")
    proc = subprocess.Popen([MNEM, "ui", "--store", str(tmp_path / "s"), "--port", "0", "--open"], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert proc.stderr is not None
        said = b""
        while said.count(b"\n") < 2:  # the program's own lines decide; the bound only ends a hang
            assert select.select([proc.stderr], [], [], 30)[0], f"no second line after {said!r}"
            chunk = os.read(proc.stderr.fileno(), 4096)
            assert chunk, f"mnem ui ended after {said!r}"
            said += chunk
        first, second = said.decode().splitlines()[:2]
        url = re.fullmatch(r"mnem ui: \S+ at (http://127\.0\.0\.1:\d+/) \(read-only; Ctrl-C stops it\)", first)
        assert url, first
        assert second == (f"mnem ui: no browser could be started here (set $BROWSER to one); open {url[1]} in a "
                          "browser yourself")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)


# ------------------------------------------------------------------------------- the checkpoint box
def test_the_api_says_whether_the_history_holds_checkpoints(story: str, anonymous: str) -> None:
    for base, expected in ((story, False), (anonymous, True)):
        with httpx.Client(base_url=base, timeout=20) as client:
            for params in ({"all": "1"}, {}, {"all": "1", "offset": "50"}):
                answer = client.get("/api/log", params=params).json()
                assert answer["checkpoints"] is expected, (base, params, answer["checkpoints"])


def test_history_offers_the_thread_filter_only_where_there_are_checkpoints(page: Any, story: str,
                                                                            anonymous: str) -> None:
    box = page.get_by_role("searchbox", name="Checkpoints of thread")
    page.goto(story + "#/history")
    page.get_by_role("list", name="commits, newest first").locator("a.commit").nth(5).wait_for()
    assert box.count() == 0 and "Checkpoints of thread" not in page.locator("main").inner_text()
    page.goto(story + "#/history?thread=t1")  # asked for by URL: the box holds it, to change or clear
    expect_text(page.locator("main"), "None of these commits wrote a checkpoint of thread “t1”")
    assert box.input_value() == "t1"
    page.goto(anonymous + "#/history")  # its one checkpoint commit is on the second page: the box is there at once
    page.get_by_role("list", name="commits, newest first").locator("a.commit").nth(49).wait_for()
    assert box.count() == 1 and page.locator(".checkpoint-mark").count() == 0


# ------------------------------------------------------------------------------- unknown authors
def test_an_unknown_author_comes_with_how_to_set_one(page: Any, anonymous: str) -> None:
    hint = page.locator("main .author-hint")
    page.goto(anonymous + "#/?q=plan")
    expect_text(page.get_by_role("table").locator("caption"), "1 fact matching")
    assert page.locator("td.set-by .author").inner_text() == "unknown"
    hint.wait_for()
    assert hint.count() == 1 and HINT.search(hint.inner_text()), hint.inner_text()
    page.get_by_role("link", name=re.compile("checkpoint t1 step -1")).click()
    page.get_by_role("heading", name=re.compile("^Commit ")).wait_for()
    hint.wait_for()
    assert hint.count() == 1 and HINT.search(hint.inner_text())
    page.goto(anonymous + "#/history?at=main")  # the unknown author is on the second page: the hint comes with it
    rows = page.get_by_role("list", name="commits, newest first").locator("a.commit")
    rows.nth(49).wait_for()
    assert hint.count() == 0
    page.get_by_role("button", name="Load older commits").click()
    rows.nth(60).wait_for()
    hint.wait_for()
    assert hint.count() == 1


def test_no_hint_where_every_author_is_named(page: Any, story: str) -> None:
    page.goto(story)
    expect_text(page.get_by_role("table").locator("caption"), "63 facts")
    page.goto(story + "#/history")
    page.get_by_role("list", name="commits, newest first").locator("a.commit").nth(5).wait_for()
    assert page.locator("main .author-hint").count() == 0


# ------------------------------------------------------------------------------- the first paint
def test_the_first_paint_shows_the_store_before_the_script_runs(page: Any, story: str) -> None:
    page.route("**/static/app.js", lambda route: route.abort())  # the page as it arrives, before any script
    page.goto(story + "#/history")
    main = page.locator("main")
    assert page.get_by_role("heading", level=1).inner_text() == "agent-memory"
    summary, waiting = main.locator("p").all_inner_texts()
    assert re.fullmatch(r"63 facts on main \(3 branches\)\. Last commit [0-9a-f]{12} “merge hypothesis/seats into "
                        r"main” by agent at 2026-03-02 09:04:00Z\.", summary), summary
    assert waiting == "Loading the page…"
    assert page.locator("#store").inner_text() == "agent-memory"
    assert page.locator("#head").inner_text() == "on main"
    assert page.title() == "mnem ui · agent-memory"
    assert "Loading…" not in main.inner_text()


def test_the_first_paint_of_an_empty_store_says_it_is_empty(page: Any, tmp_path: Path) -> None:
    Repo.init(tmp_path / "fresh").close()
    with serving(str(tmp_path / "fresh"), tmp_path / "ui.log") as base:
        page.route("**/static/app.js", lambda route: route.abort())
        page.goto(base)
        assert page.get_by_role("heading", level=1).inner_text() == "fresh"
        assert page.locator("main p").inner_text().startswith("No commits yet: this store's memory is empty.")
