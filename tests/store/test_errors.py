"""Bad input is a typed error with a clear message, never a traceback, and changes nothing."""

import sys
import unicodedata

import pg_stores
import pytest
from conftest import open_repo, run_mnem, set_store_meta, store_meta, store_sql

from mnem_store import porcelain
from mnem_store.errors import InvalidRefError
from mnem_store.layout import validate_branch_name
from mnem_store.objects import MemoryNode


def snapshot(store):
    """Everything a command could change: objects, refs, HEAD, and staging."""
    return run_mnem("export", cwd=store).out, run_mnem("--json", "status", cwd=store).out


@pytest.fixture
def seeded(store):
    run_mnem("add", "plan", "enterprise", cwd=store)
    run_mnem("commit", "-m", "first", "--time", "1000", cwd=store)
    run_mnem("add", "pending", "x", cwd=store)
    return store


def fails(store, *args, code, message, exit_code=1, input=None):
    """Run a failing command in both modes and check error, text and that nothing changed."""
    before = snapshot(store)
    as_json = run_mnem("--json", *args, cwd=store, input=input)
    assert as_json.code == exit_code, as_json.out + as_json.err
    assert as_json.json["error"]["code"] == code
    error = as_json.json["error"]
    assert message in error["message"]
    assert error["message"].endswith(error["detail"])  # detail: the message without upstream's Display prefix
    assert as_json.err == ""
    as_text = run_mnem(*args, cwd=store, input=input)
    assert as_text.code == exit_code and as_text.out == ""
    assert message in as_text.err and "Traceback" not in as_text.err
    if exit_code == 1:
        assert as_text.err.startswith("Error: ")
    assert snapshot(store) == before
    return as_text.err


@pytest.mark.parametrize(
    "content,cause",
    [("{bad", "--content-json is not valid JSON"), ("NaN", "--content-json is not valid JSON"),
     ("Infinity", "--content-json is not valid JSON"), ("[1e999]", "not valid JSON")],
)
def test_invalid_json_content(seeded, content, cause):
    err = fails(seeded, "add", "n", "--content-json", content, code="usage", message=cause)
    assert "Caused by:" in err


@pytest.mark.parametrize(
    "name,reason",
    [("HEAD", "HEAD is reserved"), ("/x", "must not start or end with '/'"), ("x.", "must not start or end with '.'"),
     ("a..b", "must not contain '..'"), ("a b", "must not contain whitespace or control characters"),
     ("a\tb", "must not contain whitespace or control characters"), ("a~b", "only letters, digits"),
     ("a:b", "only letters, digits"), ("$(touch_pwned)", "only letters, digits")],
)
def test_bad_branch_names(seeded, name, reason):
    err = fails(seeded, "branch", name, code="invalid_ref", message=reason)
    assert err.startswith("Error: invalid ref: ") and not (seeded / "touch_pwned").exists()


def test_empty_branch_name(seeded):
    fails(seeded, "branch", "", code="invalid_ref", message='invalid ref: "": empty')


@pytest.mark.parametrize(
    "rev,message",
    [("nope", 'no branch named "nope", and it is not a commit id prefix (4 to 64 lowercase hex)'),
     ("abc", "not a commit id prefix"), ("ABCD", "not a commit id prefix"),
     ("0000", 'no commit matching "0000"')],
)
def test_unknown_revisions(seeded, rev, message):
    fails(seeded, "show", rev, code="invalid_ref", message=message)
    fails(seeded, "diff", rev, code="invalid_ref", message=message)


def test_ambiguous_revision(store):
    with open_repo(store) as repo:
        seen: dict[str, bytes] = {}
        for i in range(5000):
            raw, _ = porcelain.write(repo, [MemoryNode("n", i)], [], f"c{i}", "t", i).commit
            prefix = raw.hex()[:4]
            if prefix in seen:
                break
            seen[prefix] = raw
    fails(store, "show", prefix, code="invalid_ref", message=f'ambiguous commit prefix "{prefix}": 2 commits match')


def test_state_errors(seeded):
    fails(seeded, "rm", "ghost", code="invalid_ref", message='invalid ref: no node "ghost" in memory')
    fails(seeded, "checkout", "-b", "side", code="invalid_ref",
          message="checkout refused: 1 pending change(s) (pending); commit them or pass discard")
    assert "side" not in run_mnem("branch", cwd=seeded).out  # unlike upstream, a refused -b leaves no branch
    fails(seeded, "branch", "-d", "main", code="invalid_ref", message='cannot delete "main": it is the current branch')
    missing = run_mnem("branch", "-d", "ghost", cwd=seeded)  # --json answers a result: tests/test_first_hour.py
    assert (missing.code, missing.out, missing.err) == (1, "", "Error: no branch 'ghost'\n")
    fails(seeded, "branch", "main", code="invalid_ref", message='branch "main" already exists')
    fails(seeded, "checkout", code="usage", message="checkout needs a target, or -b <name> to create one")


def test_nothing_staged_and_detached_commit(store):
    fails(store, "commit", "-m", "x", code="invalid_ref", message="nothing staged; use `mnem add` or `mnem rm` first")
    fails(store, "branch", "x", code="invalid_ref",
          message="cannot create a branch: HEAD does not point at a commit yet")
    run_mnem("add", "a", "1", cwd=store)
    commit = run_mnem("--json", "commit", "-m", "c", cwd=store).json["id"]
    run_mnem("checkout", commit, cwd=store)
    run_mnem("add", "b", "1", cwd=store)
    fails(store, "commit", "-m", "y", code="invalid_ref",
          message="invalid ref: cannot commit from a detached HEAD; check out a branch first")
    fails(store, "write", "-m", "y", code="invalid_ref", message="cannot commit from a detached HEAD", input="{}")


@pytest.mark.parametrize(
    "payload,message",
    [("[]", "must be an object"), ('{"put": [{"id": 1, "content": 2}]}', "put[0].id must be a string"),
     ('{"put": [{"id": "a"}]}', "at least id and content"),
     ('{"put": [{"id": "a", "content": 1, "x": 1}]}', "unknown keys: x"),
     ('{"put": [{"id": "a", "content": 1, "event_time": 1.5}]}', "event_time must be an integer"),
     ('{"delete": [1]}', "array of node ids"), ('{"delete": ["ghost"]}', 'no node "ghost" in memory'),
     ('{"put": [{"id": "a", "content": NaN}]}', "not valid JSON"), ("", "not valid JSON")],
)
def test_bad_write_payloads(seeded, payload, message):
    code = "invalid_ref" if "ghost" in payload else "usage"
    fails(seeded, "write", "-m", "x", code=code, message=message, exit_code=1 if code == "invalid_ref" else 2,
          input=payload)


def test_no_store(tmp_path):
    result = run_mnem("--json", "log", cwd=tmp_path)
    said = f"no mnemosyne store at or above {tmp_path}"
    assert result.code == 1 and result.json["error"] == {"code": "no_store", "message": said, "detail": said}
    assert run_mnem("log", cwd=tmp_path).err == f"Error: no mnemosyne store at or above {tmp_path}\n"


def test_init_refuses_existing_and_nested_stores(store):
    url = pg_stores.url_of(store)
    if url is not None:  # a database holds stores side by side, never nested: only the same name is refused
        shown = url.replace("postgres:@", "postgres@")
        fails(store, "init", url, code="store_exists", message=f"a store already exists at {shown}")
        return
    fails(store, "init", str(store), code="store_exists", message=f"a store already exists at {store / '.mnem'}")
    fails(store, "init", str(store / "inner"), code="store_exists",
          message=f"a store already exists at {store / '.mnem'}")
    assert not (store / "inner").exists()


def test_newer_format_store(seeded):
    config = store_meta(seeded, "config")
    set_store_meta(seeded, "config", config.replace("format_version = 1", "format_version = 2"))
    result = run_mnem("--json", "log", cwd=seeded)
    said = "unsupported format version 2, this release supports up to 1"
    assert result.json["error"] == {"code": "format_version", "message": said, "detail": said}


@pytest.mark.parametrize(
    "target,garbage,code",
    [("head", "not a head", "corrupt_store"), ("config", "format_version\n", "corrupt_store"),
     ("store.sqlite3", "this is not a database" * 100, "corrupt_store")],
)
def test_corrupt_store_files(seeded, target, garbage, code):
    """A damaged HEAD or config (rows of the ``meta`` table) or database file is refused and left as it is."""
    if target == "store.sqlite3" and pg_stores.url_of(seeded):  # PostgreSQL's equivalent: a table gone
        store_sql(seeded, "DROP TABLE objects")
        garbage = "dropped"

        def current():
            return "dropped" if store_sql(seeded, "SELECT to_regclass('objects') IS NULL")[0][0] else "there"
    elif target == "store.sqlite3":
        path = seeded / ".mnem" / target
        path.write_text(garbage)
        for suffix in ("-wal", "-shm"):
            (seeded / ".mnem" / f"{target}{suffix}").unlink(missing_ok=True)

        def current():
            return path.read_text()
    else:
        set_store_meta(seeded, target, garbage)

        def current():
            return store_meta(seeded, target)
    for args in (("log",), ("status",), ("show",), ("add", "x", "1")):
        result = run_mnem("--json", *args, cwd=seeded)
        assert result.code == 1 and result.json["error"]["code"] == code, (args, result.out)
        assert "Traceback" not in result.err
    assert current() == garbage


def test_bad_imports(seeded, tmp_path):
    good = run_mnem("export", cwd=seeded).out
    cases = {
        "not-json.json": ("{", "corrupt_store", "is not a valid mnem export"),
        "tampered.json": (good.replace('"enterprise"', '"pro"'), "corrupt_store", "does not hash to its own id"),
        "newer.json": (good.replace('"format_version": 1', '"format_version": 9'), "format_version",
                       "unsupported format version 9"),
        "algo.json": (good.replace('"blake3"', '"sha256"'), "corrupt_store", 'export uses hash_algo "sha256"'),
        "missing.json": ('{"format_version": 1}', "corrupt_store", "the export has no"),
        "badid.json": (good.replace('"objects": {\n    "', '"objects": {\n    "zz'), "corrupt_store",
                       "not a valid object id"),
    }
    for name, (text, code, message) in cases.items():
        (tmp_path / name).write_text(text)
        result = run_mnem("--json", "import", str(tmp_path / name), str(tmp_path / f"into-{name}"), cwd=tmp_path)
        assert result.code == 1 and result.json["error"]["code"] == code, (name, result.out)
        assert message in result.json["error"]["message"], (name, result.out)
        assert not (tmp_path / f"into-{name}").exists() or not (tmp_path / f"into-{name}" / ".mnem").exists()
    fails(seeded, "import", str(tmp_path / "missing-file.json"), str(tmp_path / "x"), code="store_io",
          message="reading")


def test_usage_errors_exit_2(seeded):
    fails(seeded, "log", "-n", "-1", code="usage", message="expected a non-negative integer", exit_code=2)
    fails(seeded, "add", "x", "y", "--content-file", "f", code="usage", message="cannot be used with", exit_code=2)
    fails(seeded, "commit", code="usage", message="-m/--message", exit_code=2)
    fails(seeded, "nope", code="usage", message="invalid choice", exit_code=2)


def test_a_branch_name_with_whitespace_or_a_control_character_is_refused_for_it_over_every_code_point():
    """The rule is whitespace or Unicode's "Other" categories (C*), held for every character, as ``unicodedata`` says.

    ``layout`` tests it without importing ``unicodedata`` (a one-shot read checks HEAD's branch), so the two
    spellings of the rule are compared here, code point by code point.
    """
    refused = set()
    for point in range(sys.maxunicode + 1):
        try:
            validate_branch_name(f"a{chr(point)}b")
        except InvalidRefError as error:
            if "whitespace or control" in str(error):
                refused.add(point)
    assert refused == {point for point in range(sys.maxunicode + 1)
                       if chr(point).isspace() or unicodedata.category(chr(point)).startswith("C")}
