"""``mnem show --limit`` (extension): memory a page at a time, in id order, resumable by cursor."""

from __future__ import annotations

import json

from conftest import run_mnem


def j(*args, cwd):
    result = run_mnem("--json", *args, cwd=cwd)
    assert result.code == 0, result.out + result.err
    return result.json


def write(store, time, put=(), delete=()):
    payload = json.dumps({"put": [{"id": i, "content": c} for i, c in put], "delete": list(delete)})
    result = run_mnem("--json", "write", "-m", f"t{time}", "--time", str(time), cwd=store, input=payload)
    assert result.code == 0, result.out + result.err
    return result.json["commit"]["id"]


def walk(*args, cwd, limit):
    """Every page in turn; returns the ids of each page."""
    pages, cursor = [], None
    while True:
        page = j("show", f"--limit={limit}", *([] if cursor is None else ["--cursor", cursor]), *args, cwd=cwd)
        pages.append(list(page["memory"]))
        cursor = page["next_cursor"]
        if cursor is None:
            return pages


def test_pages_cover_memory_once_in_id_order(store):
    ids = [f"u{i}:fact" for i in range(7)] + ["a", "zz"]
    first = write(store, 100, [(i, n) for n, i in enumerate(ids)])
    whole = j("show", cwd=store)
    assert walk(cwd=store, limit=3) == [sorted(ids)[0:3], sorted(ids)[3:6], sorted(ids)[6:9]]
    assert walk(cwd=store, limit=100) == [sorted(ids)]
    page = j("show", "--limit", "2", cwd=store)
    assert page["memory"] == {i: whole[i] for i in sorted(ids)[:2]}  # the same node documents as a whole show
    assert page["next_cursor"] == sorted(ids)[1]
    assert walk("--prefix", "u1", "--prefix", "z", cwd=store, limit=1) == [["u1:fact"], ["zz"]]
    write(store, 200, [("u0:new", 1)], delete=["a"])
    assert walk(cwd=store, limit=50)[0][:2] == ["u0:fact", "u0:new"]
    assert walk(first, cwd=store, limit=50) == [sorted(ids)]  # a past commit, by id
    # A cursor is an id, not a position: one that was deleted still resumes after it.
    assert list(j("show", "--limit=2", "--cursor=a", cwd=store)["memory"]) == ["u0:fact", "u0:new"]
    # Staged changes are working memory, as in a whole show.
    assert run_mnem("add", "u1:staged", "1", cwd=store).code == 0
    assert "u1:staged" in j("show", "--limit=10", "--prefix=u1", cwd=store)["memory"]
    assert run_mnem("show", "--limit=1", cwd=store).out.endswith("(more: --cursor u0:fact)\n")


def test_bad_pages_are_usage_errors_and_change_nothing(store):
    write(store, 100, [("a", 1)])
    for args in (["--limit=0"], ["--cursor=a"], ["--prefix=a"], ["--limit=-3"]):
        bad = run_mnem("--json", "show", *args, cwd=store)
        assert bad.code == 2 and bad.json["error"]["code"] == "usage", args
    assert j("show", cwd=store) == j("show", cwd=store) and list(j("show", cwd=store)) == ["a"]
    bad = run_mnem("--json", "show", "--limit=1", "nope", cwd=store)
    assert bad.code == 1 and bad.json["error"]["code"] == "invalid_ref"
