"""Hostile input against the CLI's JSON contract: a typed error or a result, never a crash, and errors change nothing.

Runs through ``invoke``, the one code path of both a one-shot ``mnem`` and
each ``mnem serve`` request, so hypothesis can try thousands of inputs.
"""

import io
import json

import orjson
import pg_stores
from conftest import new_store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnem_store.cli import Streams, invoke

CODES = {"not_found", "invalid_ref", "conflict", "corrupt_store", "format_version", "store_exists", "no_store",
         "store_io", "busy", "usage"}

nasty_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", "-", "--", "-x", "--json", "..", "a..b", "HEAD", "main", "../../etc/passwd", "a:b",
                     "$(touch pwned)", "`id`", "'\"", "\x00", "\x1b[31m", "é\u0301", "\ud800", "0000", "abcd",
                     "NaN", "Infinity", "1e999", "{", "[" * 200, "a" * 5000]),
)
nasty_json = st.one_of(
    st.sampled_from(["NaN", "-Infinity", "[1e400]", '{"a":', "\"\\ud800\"", "9" * 400, "[" * 1000 + "]" * 1000,
                     '{"put": [{"id": "x", "content": NaN}]}', '{"put": "x"}', '{"delete": [null]}', "\xff\xfe"]),
    st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
                 lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                 max_leaves=10).map(json.dumps),
)


def run(store, argv, stdin=b""):
    out, err = io.BytesIO(), io.BytesIO()
    code = invoke(["-C", pg_stores.address(store), "--json", *argv], Streams(io.BytesIO(stdin), out, err))
    return code, out.getvalue(), err.getvalue()


def snapshot(store):
    return run(store, ["export"])[1], run(store, ["status"])[1]


def commands(text, other, doc):
    return st.sampled_from([
        ["add", "--", text, other], ["add", "--content-json", doc, "--", text], ["rm", "--", text],
        ["show", "--node", text], ["show", text], ["branch", "--", text], ["branch", "-d", text],
        ["checkout", "--", text], ["blame", "--", text], ["bisect", "--node", text, "--equals", doc],
        ["diff", text, other], ["merge", "--", text], ["merge", "main", "--resolve", f"{text}={other}"],
        ["merge", "main", "--resolve-json", f"{text}={doc}"], ["log", "-n", text], ["resolve", "--", text],
        ["stamps", "--node", text], ["commit", "--message", text, "--time", other],
    ])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hostile_arguments(seeded_store, data):
    text, other, doc = data.draw(nasty_text), data.draw(nasty_text), data.draw(nasty_json)
    argv = data.draw(commands(text, other, doc))
    before = snapshot(seeded_store)
    code, out, err = run(seeded_store, argv)
    check(code, out, err)
    if code != 0:
        assert snapshot(seeded_store) == before, argv


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=st.one_of(nasty_json, st.binary(max_size=64).map(lambda b: b.decode("latin-1"))),
       skip=st.booleans())
def test_hostile_write_payloads(seeded_store, payload, skip):
    before = snapshot(seeded_store)
    code, out, err = run(seeded_store, ["write", "-m", "x", *(["--skip-missing"] if skip else [])],
                         payload.encode("utf-8", "surrogatepass"))
    check(code, out, err)
    if code != 0:
        assert snapshot(seeded_store) == before


def check(code, out, err):
    assert code in (0, 1, 2)
    assert err == b""
    doc = orjson.loads(out)  # exactly one JSON document
    if code != 0:
        assert doc["error"]["code"] in CODES
        assert "internal error" not in doc["error"]["message"], doc


import pytest  # noqa: E402


@pytest.fixture
def seeded_store(tmp_path_factory, backend):
    root = new_store(tmp_path_factory.mktemp("hostile") / "store", backend)
    for argv, stdin in ((["write", "-m", "seed", "--time", "1"], b'{"put": [{"id": "plan", "content": "pro"}]}'),
                        (["branch", "side"], b"")):
        code, _, _ = run(root, argv, stdin)
        assert code == 0
    return root


def nested(depth):
    value = 0
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(("argv", "stdin"), [
    (["commit", "-m", "x", "--time", str(2**64)], b""),
    (["commit", "-m", "x", "--time", str(-(2**63) - 1)], b""),
    (["write", "-m", "x", "--time", str(2**64)], b'{"put": [{"id": "t", "content": 1}]}'),
    (["merge", "side", "--time", str(10**30)], b""),
    (["add", "--event-time", str(2**63), "--", "t", "1"], b""),
    (["write", "-m", "x"], b'{"put": [{"id": "a\\u0000b", "content": 1}]}'),
    (["add", "--", "a\x00b", "1"], b""),
    (["add", "--content-json", "[" * 128 + "]" * 128, "--", "deep"], b""),
    (["write", "-m", "x"], orjson.dumps({"put": [{"id": "deep", "content": nested(128)}]})),
], ids=["commit-time-2^64", "commit-time-below-i64", "write-time", "merge-time", "event-time", "write-nul-id",
        "add-nul-id", "add-128-deep", "write-128-deep"])
def test_out_of_range_input_is_usage_and_writes_nothing(seeded_store, argv, stdin):
    """Each of these once wrote first and failed after (a time past 64 bits), or stored what no argv can name (NUL)."""
    if argv[0] == "commit":
        assert run(seeded_store, ["add", "--", "staged", "1"])[0] == 0
    before = snapshot(seeded_store)
    code, out, err = run(seeded_store, argv, stdin)
    check(code, out, err)
    assert code != 0 and orjson.loads(out)["error"]["code"] == "usage", out  # exit 1 where upstream's anyhow says it
    assert snapshot(seeded_store) == before


def test_content_nested_127_deep_is_stored_by_add_and_write_alike(seeded_store):
    """serde_json's default limit: 127 levels parse, the 128th does not; ``write``'s envelope does not count."""
    deep = nested(127)
    assert run(seeded_store, ["add", "--content-json", orjson.dumps(deep).decode(), "--", "deep"])[0] == 0
    code, out, _ = run(seeded_store, ["write", "-m", "x"], orjson.dumps({"put": [{"id": "deep2", "content": deep}]}))
    assert code == 0, out
    memory = orjson.loads(run(seeded_store, ["show"])[1])
    assert memory["deep"]["content"] == memory["deep2"]["content"] == deep


def test_a_commit_dated_before_1970_is_stored_logged_and_verifies(tmp_path, backend):
    """A commit's time is signed (upstream's i64): a time before 1970 once failed inside the write, untyped."""
    root = new_store(tmp_path / "store", backend)
    for time, node in ((-5, "a"), (-(2**63), "b"), (7, "c")):
        code, out, err = run(root, ["write", "-m", node, "--time", str(time)],
                             orjson.dumps({"put": [{"id": node, "content": time}]}))
        assert code == 0, (out, err)
    code, out, _ = run(root, ["log"])
    assert code == 0 and [c["message"] for c in orjson.loads(out)] == ["c", "b", "a"]
    assert [c["time"] for c in orjson.loads(out)] == [7, -(2**63), -5]
    code, out, _ = run(root, ["verify"])
    assert code == 0 and orjson.loads(out)["ok"] is True, out
