"""``mnem ui``'s HTTP surface, against a real ``mnem ui`` process: safety, validation, pages, both backends.

Every refusal is checked for its status and its typed code; the read-only
promise is checked on the store's own rows (nothing changed after every
kind of write request); static files are checked to ship in the package.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import httpx
import pg_stores
import pytest
from conftest import run_mnem, store_fingerprint
from ui_support import build_story, serving

from mnem_store import porcelain
from mnem_store.layout import StoreUrl
from mnem_store.objects import MemoryNode, Provenance
from mnem_store.repo import Repo
from mnem_store.ui.app import STATIC_FILES

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory):
    root = build_story(tmp_path_factory.mktemp("ui-api") / "agent-memory")
    with serving(str(root), root.parent / "ui.log") as url, httpx.Client(base_url=url, timeout=20) as client:
        yield root, client


def error_of(response: httpx.Response, status: int) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"code", "message"} and "Traceback" not in error["message"]
    return error


def test_a_foreign_host_is_refused_and_loopback_names_are_answered(story):
    _, client = story
    port = client.base_url.port
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}", "localhost",
                 f"10.0.0.1:{port}", ""):
        error = error_of(client.get("/api/head", headers={"host": host}), 421)
        assert error["code"] == "usage" and f"http://127.0.0.1:{port}/" in error["message"]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"LOCALHOST:{port}"):
        assert client.get("/api/head", headers={"host": host}).status_code == 200
    assert client.get("/", headers={"host": "evil.example"}).status_code == 421


def test_it_listens_on_the_loopback_only(story):
    _, client = story
    assert client.base_url.host == "127.0.0.1"


def test_ids_and_paths_are_validated_before_the_store_is_read(story):
    _, client = story
    for path, status, code in [
        ("/api/commit/zz", 400, "invalid_ref"),
        ("/api/commit/ABCD", 400, "invalid_ref"),
        ("/api/commit/" + "ab" * 32, 400, "invalid_ref"),  # well formed, but no such commit
        ("/api/commit/..%2F..%2Fetc%2Fpasswd", 404, "not_found"),
        ("/api/commit/%2e%2e", 400, "invalid_ref"),
        ("/static/..%2F..%2Fpyproject.toml", 404, "not_found"),
        ("/static/app.py", 404, "not_found"),
        ("/static/index.html", 404, "not_found"),
        ("/../../etc/passwd", 404, "not_found"),
        ("/api/facts?at=../../etc", 400, "invalid_ref"),
        ("/api/facts?at=" + "x" * 300, 400, "invalid_ref"),
        ("/api/timeline", 400, "usage"),
        ("/api/timeline?id=ghost", 404, "not_found"),
        ("/api/blame?id=ghost", 400, "invalid_ref"),
        ("/api/when?id=customer-4821&value=not-json", 400, "usage"),
    ]:
        error = error_of(client.get(path), status)
        assert error["code"] == code, (path, error)


def test_pages_are_bounded_and_bad_bounds_are_refused(story):
    _, client = story
    for query in ("limit=0", "limit=201", "limit=-1", "limit=abc", "offset=-1", "offset=9999999999"):
        paths = ["/api/facts?", "/api/log?", "/api/commit/abcd?"]
        if query.startswith("limit"):
            paths.append("/api/timeline?id=customer-4821&")
        for path in paths:
            assert error_of(client.get(path + query), 400)["code"] == "usage", path + query
    first = client.get("/api/facts", params={"limit": 50}).json()
    assert first["total"] == 63 and len(first["facts"]) == 50 and first["facts"][0]["id"] == "contract"
    rest = client.get("/api/facts", params={"limit": 50, "offset": 50}).json()
    assert len(rest["facts"]) == 13 and rest["facts"][-1]["id"] == "seats"
    assert len(client.get("/api/facts", params={"limit": 200}).json()["facts"]) == 63
    log = client.get("/api/log", params={"limit": 2}).json()
    assert len(log["commits"]) == 2 and log["more"] is True
    tail = client.get("/api/log", params={"limit": 50, "offset": 3}).json()
    assert len(tail["commits"]) == 2 and tail["more"] is False


def test_search_matches_ids_values_and_provenance(story):
    _, client = story
    def ids(q: str) -> list[str]:
        return [f["id"] for f in client.get("/api/facts", params={"q": q}).json()["facts"]]
    assert ids("BILLING-note") == ["customer-4821"]
    assert ids("pro last") == ["customer-4821"]
    assert ids("note-5") == [f"note-{i}" for i in range(50, 60)]
    assert ids("nothing like this") == []


def test_the_story_answers_why_when_and_the_timeline(story):
    _, client = story
    why = client.get("/api/blame", params={"id": "customer-4821"}).json()
    assert why["node"]["provenance"]["source"] == "billing-note-8842"
    assert why["commit"]["message"] == "reconcile the plan tier"
    steps = client.get("/api/timeline", params={"id": "customer-4821"}).json()["entries"]
    assert [s["value"]["content"] for s in steps] == ["downgraded to Pro last month", "on the Enterprise plan"]
    changed = {"field": "content", "before": "on the Enterprise plan", "after": "downgraded to Pro last month"}
    assert changed in steps[0]["diff"]
    first = client.get("/api/when", params={"id": "customer-4821", "value": '"on the Enterprise plan"',
                                            "at": steps[1]["commit"]["id"]}).json()
    assert first["commit"]["message"] == "open the case"
    merged = client.get("/api/timeline", params={"id": "seats"}).json()["entries"][0]
    assert merged["commit"]["parents"][1] == merged["origin"]["id"] and merged["origin"]["author"] == "planner"


def test_a_commit_opens_its_change_set_and_memory_at_it(story):
    _, client = story
    log = client.get("/api/log").json()["commits"]
    reconcile = next(c for c in log if c["message"] == "reconcile the plan tier")
    shown = client.get(f"/api/commit/{reconcile['id'][:12]}").json()
    assert shown["total"] == 1 and shown["changes"][0]["kind"] == "modified"
    assert shown["changes"][0]["old"]["content"] == "on the Enterprise plan"
    loaded = client.get(f"/api/commit/{log[-2]['id']}", params={"limit": 7, "offset": 56}).json()
    assert loaded["total"] == 60 and len(loaded["changes"]) == 4
    then = client.get("/api/facts", params={"at": log[-1]["id"]}).json()
    assert [f["id"] for f in then["facts"]] == ["contract", "customer-4821"]
    assert then["facts"][1]["content"] == "on the Enterprise plan"


def test_the_log_of_every_branch(story):
    """``all=1``: the history of every branch at once, newest first, each commit once, paged like one branch's."""
    _, client = story
    every = client.get("/api/log", params={"all": "1"}).json()
    messages = [c["message"] for c in every["commits"]]
    assert messages == ["try annual billing", "merge hypothesis/seats into main", "reconcile the plan tier",
                        "try 40 seats", "import the knowledge base", "open the case"]
    assert every["more"] is False and every["commit"] is None
    assert messages[1:] == [c["message"] for c in client.get("/api/log").json()["commits"]]
    page = client.get("/api/log", params={"all": "1", "offset": 2, "limit": 3}).json()
    assert [c["message"] for c in page["commits"]] == messages[2:5] and page["more"] is True
    for bad in ("yes", "2", ""):
        error = error_of(client.get("/api/log", params={"all": bad}), 400)
        assert error["code"] == "usage" and "all=1" in error["message"]
    error = error_of(client.get("/api/log", params={"all": "1", "at": "main"}), 400)
    assert error["code"] == "usage"


def test_set_by_is_the_commit_that_wrote_the_value_with_its_author(story):
    _, client = story
    seats = client.get("/api/facts", params={"q": "crm-export"}).json()["facts"]
    assert [(f["set_by"]["author"], f["set_by"]["message"]) for f in seats] == [("planner", "try 40 seats")]


def test_nothing_writes(story):
    root, client = story
    before = store_fingerprint(root)
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        for path in ("/", "/api/head", "/api/facts", "/api/commit/abcd", "/static/app.js"):
            error = error_of(client.request(method, path, content=b"{}"), 405)
            assert error["code"] == "usage" and "read-only" in error["message"]
    for path in ("/", "/api/head", "/api/facts", "/api/log", "/api/timeline?id=seats", "/api/blame?id=seats"):
        response = client.get(path)
        assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
        assert "default-src 'self'" in response.headers["content-security-policy"]
    assert store_fingerprint(root) == before


def test_static_files_ship_in_the_package():
    folder = resources.files("mnem_store.ui").joinpath("static")
    shipped = {entry.name for entry in folder.iterdir() if entry.is_file()}
    assert set(STATIC_FILES) == shipped
    globs = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    patterns = globs["mnem_store.ui"]
    assert all(any(Path("static", name).match(p) for p in patterns) for name in shipped)


def test_a_postgresql_store(tmp_path):
    url = pg_stores.new_url("ui")
    with Repo.init(StoreUrl.parse(url)) as repo:
        for time, (value, source, message) in enumerate([("on the Enterprise plan", "ticket-4821", "open the case"),
                                                          ("downgraded to Pro last month", "billing-note-8842",
                                                           "reconcile")]):
            node = MemoryNode("customer-4821", value, provenance=Provenance(source=source))
            porcelain.write(repo, [node], [], message, "agent", time + 1)
    with serving(url, tmp_path / "ui.log") as base, httpx.Client(base_url=base, timeout=20) as client:
        head = client.get("/api/head").json()
        assert head["store"].startswith("postgresql://") and head["branch"] == "main"
        facts = client.get("/api/facts").json()["facts"]
        assert [(f["id"], f["provenance"]["source"]) for f in facts] == [("customer-4821", "billing-note-8842")]
        steps = client.get("/api/timeline", params={"id": "customer-4821"}).json()["entries"]
        assert [s["commit"]["message"] for s in steps] == ["reconcile", "open the case"]
        assert client.post("/api/facts").status_code == 405


def test_a_taken_port_is_a_usage_error_naming_the_fix(story, tmp_path):
    root, client = story
    taken = run_mnem("ui", "--store", str(root), "--port", str(client.base_url.port))
    assert taken.code == 2 and "--port 0" in taken.err and "Traceback" not in taken.err
    missing = run_mnem("ui", "--store", str(tmp_path / "nowhere"), "--port", "0")
    assert missing.code == 1 and "mnem init" in missing.err
