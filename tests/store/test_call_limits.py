"""Limits on one call (``mnem_store.limits``): what one new write may hold, on both backends.

Every writer ends up in ``mnem add``, ``mnem write`` or a merge's
``--resolve-json``, so this is where an id too long, a value too large or a
write too big is refused: ``usage`` (exit 2) naming the limit, the size
found and the variable that raises it, and nothing written.  ``0`` lifts a
limit.  What a store already holds, and what an export brings, is never
held to them: such a store still reads, merges, exports, imports and
verifies, and its over-long ids can still be removed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pg_stores
import pytest
from conftest import MNEM, run_mnem, store_fingerprint
from mnem_history import memory, ok

HOUR = 3_600_000
#: "Now" for the invocations that judge a lease (2026-01-01T00:00:00Z).
NOW = 1_767_225_600_000
MiB = 1 << 20
#: What lifts every limit, as a store written elsewhere (upstream's, which has none) was written.
LIFTED = {"MNEM_MAX_ID_BYTES": "0", "MNEM_MAX_VALUE_BYTES": "0", "MNEM_MAX_WRITE_NODES": "0",
          "MNEM_MAX_WRITE_BYTES": "0"}


def refused(store: Path, *args: str, input: bytes | str | None = None, env: dict[str, str] | None = None) -> str:
    """Run a write that must be refused with ``usage`` and change nothing; returns the error's message."""
    before = store_fingerprint(store)
    result = run_mnem("--json", *args, cwd=store, input=input, env=env)
    assert result.code == 2 and result.err == "", (args, result.out[:500], result.err[:500])
    error = json.loads(result.out)["error"]
    assert error["code"] == "usage", error
    assert store_fingerprint(store) == before
    return str(error["message"])


def payload(*puts: dict[str, Any], delete: tuple[str, ...] = ()) -> bytes:
    return orjson.dumps({"put": list(puts), "delete": list(delete)})


def test_the_default_limits_hold_at_their_bounds_and_count_utf8_bytes(store: Path) -> None:
    """1024 bytes of id and 1 MiB of value are taken; one byte more is refused, naming the limit and the size."""
    at_value = "x" * (MiB - 2)  # a JSON string: its quotes make it 1 MiB exactly
    ok("write", "-m", "at the limits", cwd=store, input=payload({"id": "é" * 512, "content": at_value}))
    assert memory(store, "HEAD") == {"é" * 512: at_value}
    message = refused(store, "write", "-m", "w", input=payload({"id": "é" * 512 + "x", "content": 1}))
    assert message == (
        f'put[0].id "{"é" * 77}..." is 1025 bytes long, more than the limit of 1024 bytes a node id may have '
        "(MNEM_MAX_ID_BYTES); choose a shorter id, or raise MNEM_MAX_ID_BYTES (0 lifts the limit)")
    message = refused(store, "write", "-m", "w", input=payload({"id": "ok", "content": 1},
                                                              {"id": "big", "content": at_value + "x"}))
    assert message == (
        'put[1] (node "big") holds 1048577 bytes (its content as compact JSON, and its provenance), more than the '
        "limit of 1048576 bytes one node may hold (MNEM_MAX_VALUE_BYTES); split it over several nodes, or raise "
        "MNEM_MAX_VALUE_BYTES (0 lifts the limit)")
    # provenance counts: a small content with a large source is as large a node
    message = refused(store, "write", "-m", "w", input=payload({"id": "p", "content": 1, "source": "s" * MiB}))
    assert "holds 1048577 bytes" in message
    nodes = [{"id": f"n{i}", "content": i} for i in range(10_000)]
    message = refused(store, "write", "-m", "w", input=payload(*nodes, delete=("gone",)))
    assert message == ("the write holds 10001 puts and deletes, more than the limit of 10000 one write may hold "
                       "(MNEM_MAX_WRITE_NODES); split it into several writes, or raise MNEM_MAX_WRITE_NODES "
                       "(0 lifts the limit)")
    big = orjson.dumps({"put": [{"id": f"n{i}", "content": "y" * (MiB // 2)} for i in range(33)]})
    message = refused(store, "write", "-m", "w", input=big)
    assert message.startswith("the payload on stdin is more than 16777216 bytes, more than the limit of 16777216 "
                              "bytes one write may send (MNEM_MAX_WRITE_BYTES, checked before it is parsed)")


@pytest.mark.parametrize("args, stdin, found", [
    pytest.param(["add", "k" * 11, "v"], None, 'ID "kkkkkkkkkkk" is 11 bytes long', id="add-id"),
    pytest.param(["add", "k", "v" * 99], None, "the node holds 101 bytes", id="add-content"),
    pytest.param(["add", "k", "--content-json", '{"v": "' + "v" * 93 + '"}'], None, "the node holds 101 bytes",
                 id="add-content-json"),
    pytest.param(["add", "k", "--step", "s" * 97], "v", "the node holds 100 bytes", id="add-provenance"),
    pytest.param(["add", "k"], "v" * 99, "the node holds 101 bytes", id="add-stdin"),
    pytest.param(["add", "k", "--content-json", " " * 200 + "1"], None,
                 "--content-json is 201 bytes, more than the limit of 200 bytes one write may send",
                 id="add-json-text"),
    pytest.param(["write", "-m", "w"], payload({"id": "k" * 11, "content": 1}), 'put[0].id "kkkkkkkkkkk" is 11 bytes',
                 id="write-id"),
    pytest.param(["write", "-m", "w"], payload({"id": "k", "content": "v" * 99}),
                 'put[0] (node "k") holds 101 bytes', id="write-content"),
    pytest.param(["write", "-m", "w"], payload({"id": "k", "content": 1, "note": "n" * 99}),
                 'put[0] (node "k") holds 100 bytes', id="write-provenance"),
    pytest.param(["write", "-m", "w"], payload(*({"id": str(i), "content": i} for i in range(3)), delete=("0",)),
                 "the write holds 4 puts and deletes, more than the limit of 3", id="write-nodes"),
    pytest.param(["write", "-m", "w"], b" " * 201, "the payload on stdin is more than 200 bytes", id="write-bytes"),
])
def test_every_write_verb_refuses_what_passes_a_limit_and_the_option_lifts_it(
        store: Path, args: list[str], stdin: str | bytes | None, found: str) -> None:
    """With small limits set, each verb's way in is refused, naming what it found; ``0`` (or more) lets it in."""
    small = {"MNEM_MAX_ID_BYTES": "10", "MNEM_MAX_VALUE_BYTES": "99", "MNEM_MAX_WRITE_NODES": "3",
             "MNEM_MAX_WRITE_BYTES": "200"}
    message = refused(store, *args, input=stdin, env=small)
    assert message.startswith(found) and "(0 lifts the limit)" in message, message
    option = next(name for name in small if name in message)
    if stdin != b" " * 201:  # that one is not JSON: past the limit it is refused for its size, within it as not JSON
        ok(*args, cwd=store, input=stdin, env={**small, option: "0"})
        ok(*args, cwd=store, input=stdin, env={**small, option: "1000"})


def test_a_value_given_in_a_file_is_refused_by_the_files_size_before_it_is_read(store: Path, tmp_path: Path) -> None:
    small = {"MNEM_MAX_WRITE_BYTES": "100"}
    (tmp_path / "value.json").write_text("[" + " " * 200 + "]")
    (tmp_path / "payload.json").write_bytes(data := payload({"id": "k", "content": " " * 200}))
    message = refused(store, "add", "k", "--content-file", str(tmp_path / "value.json"), env=small)
    assert message.startswith(f"{tmp_path / 'value.json'} is 202 bytes, more than the limit of 100 bytes")
    message = refused(store, "write", "-m", "w", "--file", str(tmp_path / "payload.json"), env=small)
    assert message.startswith(f"the payload in {tmp_path / 'payload.json'} is {len(data)} bytes, more than the "
                              "limit of 100")


def test_a_merge_resolution_is_a_new_value_and_is_held_to_the_value_limit(store: Path) -> None:
    ok("write", "-m", "base", cwd=store, input=payload({"id": "plan", "content": "free"}))
    ok("checkout", "-b", "side", cwd=store)
    ok("write", "-m", "theirs", cwd=store, input=payload({"id": "plan", "content": "pro"}))
    ok("checkout", "main", cwd=store)
    ok("write", "-m", "ours", cwd=store, input=payload({"id": "plan", "content": "enterprise"}))
    message = refused(store, "merge", "side", "--resolve-json", 'plan="' + "x" * 100 + '"',
                      env={"MNEM_MAX_VALUE_BYTES": "50"})
    assert message.startswith('--resolve-json "plan" holds 102 bytes (its content as compact JSON, and its '
                              "provenance), more than the limit of 50 bytes")
    ok("merge", "side", "--resolve-json", 'plan="' + "x" * 100 + '"', cwd=store, env={"MNEM_MAX_VALUE_BYTES": "0"})
    assert memory(store, "HEAD")["plan"] == "x" * 100


def test_a_malformed_limit_is_usage_naming_the_variable_and_writes_nothing(store: Path) -> None:
    message = refused(store, "write", "-m", "w", input=payload({"id": "k", "content": 1}),
                      env={"MNEM_MAX_WRITE_NODES": "10k"})
    assert message == ('MNEM_MAX_WRITE_NODES must be a whole number of nodes (0 lifts the limit), got "10k"; unset it '
                       "for the default, 10000")
    message = refused(store, "add", "k", "v", env={"MNEM_MAX_VALUE_BYTES": "-1"})
    assert message.startswith('MNEM_MAX_VALUE_BYTES must be a whole number of bytes (0 lifts the limit), got "-1"')


def test_hostile_sizes_are_refused_before_the_work_they_would_cost(store: Path) -> None:
    """Past the size limit, a payload is refused for its size before it is parsed (not JSON is not what is said);
    past the value limit, a value is refused for its size before its content is walked (a nesting the walk refuses,
    and an integer it refuses, are not what is said)."""
    message = refused(store, "write", "-m", "w", input=b"{" * 300, env={"MNEM_MAX_WRITE_BYTES": "200"})
    assert message.startswith("the payload on stdin is more than 200 bytes")
    deep: Any = "x" * 200
    for _ in range(200):  # deeper than the 127 levels content may have
        deep = [deep]
    message = refused(store, "write", "-m", "w", input=payload({"id": "k", "content": deep}),
                      env={"MNEM_MAX_VALUE_BYTES": "100"})
    assert message.startswith('put[0] (node "k") holds 602 bytes')
    # within the limit, the walk still says what is wrong with it
    message = refused(store, "write", "-m", "w", input=payload({"id": "k", "content": deep}))
    assert "nested deeper than 127 levels" in message


def test_an_endless_stdin_is_refused_once_past_the_limit(store: Path) -> None:
    """A payload that never ends (``yes``) is read only until it passes the limit, then refused: nothing waits for
    its end, and nothing past the limit and one read is held."""
    before = store_fingerprint(store)
    endless = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        url = pg_stores.url_of(store)
        env = {"MNEM_MAX_WRITE_BYTES": "100000", **({"MNEM_STORE": url} if url else {})}
        result = subprocess.run([MNEM, "--json", "write", "-m", "w"], stdin=endless.stdout, cwd=store,
                                capture_output=True, timeout=60, env={**os.environ, **env})
    finally:
        endless.kill()
        endless.wait()
    assert result.returncode == 2
    assert json.loads(result.stdout)["error"]["message"].startswith("the payload on stdin is more than 100000 bytes")
    assert store_fingerprint(store) == before


def test_old_data_over_the_limits_still_reads_merges_exports_imports_and_verifies(store: Path,
                                                                                   tmp_path: Path) -> None:
    """A store written elsewhere (upstream has no limits) holds an id and a value past them: a new write of the same
    is refused, while every read, a merge, an export and its import, a clone, verify and the removal still work."""
    long_id, big = "k" * 2000, "v" * (2 * MiB)
    ok("write", "-m", "base", cwd=store, input=payload({"id": "plan", "content": "free"}))
    ok("checkout", "-b", "side", cwd=store)
    ok("write", "-m", "written elsewhere", cwd=store, env=LIFTED,
       input=payload({"id": long_id, "content": 1}, {"id": "doc", "content": big}))
    ok("checkout", "main", cwd=store)
    ok("write", "-m", "ours", cwd=store, input=payload({"id": "plan", "content": "pro"}))
    again = refused(store, "write", "-m", "w", input=payload({"id": "doc2", "content": big}))
    assert "MNEM_MAX_VALUE_BYTES" in again
    assert "MNEM_MAX_ID_BYTES" in refused(store, "add", long_id, "1")

    merged = ok("--json", "merge", "side", cwd=store).json  # carries both in, as old data
    assert merged["status"] == "merged"
    assert memory(store, "HEAD") == {"plan": "pro", long_id: 1, "doc": big}
    assert ok("--json", "show", "--node", "doc", cwd=store).json["content"] == big
    assert long_id in ok("--json", "ls", cwd=store).json
    assert ok("--json", "blame", long_id, cwd=store).json["node"]["content"] == 1
    assert ok("--json", "verify", cwd=store).json["ok"] is True

    exported = tmp_path / "export.json"
    ok("export", "-o", str(exported), cwd=store)
    target: Path | str = tmp_path / "imported"
    if pg_stores.url_of(store):
        target = pg_stores.new_url()
    ok("--json", "import", str(exported), str(target), cwd=tmp_path)
    copy = pg_stores.register(tmp_path / "imported", str(target)) if isinstance(target, str) else target
    assert memory(copy, "HEAD") == {"plan": "pro", long_id: 1, "doc": big}
    assert ok("--json", "verify", cwd=copy).json["ok"] is True
    assert ok("export", cwd=copy).out == exported.read_text() + "\n"  # -o writes no final newline

    cloned = ok("--json", "clone", pg_stores.address(store), str(tmp_path / "cloned"), cwd=tmp_path).json
    assert cloned["commits"] == 4 and memory(tmp_path / "cloned", "HEAD")["doc"] == big

    ok("write", "-m", "forget the old ones", cwd=store, input=payload(delete=(long_id, "doc")))
    assert memory(store, "HEAD") == {"plan": "pro"}


def test_a_saver_write_is_held_only_where_it_puts_ordinary_ids(store: Path) -> None:
    """``--allow-reserved`` (MnemosyneSaver's): a checkpoint's node may pass the id and value limits and the write the
    batch limits, as a graph's state does; an ordinary id in it is held as any."""
    small = {"MNEM_MAX_ID_BYTES": "40", "MNEM_MAX_VALUE_BYTES": "100", "MNEM_MAX_WRITE_NODES": "2",
             "MNEM_MAX_WRITE_BYTES": "300"}
    checkpoint = ".checkpoint:" + "t" * 50 + "::b:messages:1"
    puts = [{"id": checkpoint, "content": {"data": "m" * 500}}, {"id": ".checkpoint:t::c:1", "content": 1},
            {"id": ".checkpoint:t::c:2", "content": 2}]
    ok("write", "-m", "checkpoint", "--allow-reserved", cwd=store, env=small, input=payload(*puts))
    assert memory(store, "HEAD")[checkpoint] == {"data": "m" * 500}
    message = refused(store, "write", "-m", "w", "--allow-reserved", env=small,
                      input=payload(*puts, {"id": "fact", "content": "f" * 200}))
    assert message.startswith('put[3] (node "fact") holds 202 bytes')
    assert "MNEM_MAX_WRITE_NODES" in refused(store, "write", "-m", "w", env=small, input=payload(
        *({"id": f"n{i}", "content": i} for i in range(3))))


def test_generated_messages_cut_a_long_id(store: Path) -> None:
    """``expire``'s message names the nodes it removes; a long id (old data) is cut so the log stays one short line."""
    long_id = "e" * 5000
    write = payload({"id": long_id, "content": 1, "ttl": HOUR}, {"id": "short", "content": 2, "ttl": HOUR})
    ok("--json", f"--now={NOW}", "write", "-m", "w", cwd=store, env=LIFTED, input=write)
    expired = ok("--json", f"--now={NOW + 2 * HOUR}", "expire", cwd=store).json
    assert expired["commit"]["message"] == f"expire {'e' * 77}..., short (TTL ran out)"
    line = ok("log", "--oneline", "-n", "1", cwd=store).out
    assert len(line) < 150 and line.endswith("expire " + "e" * 77 + "..., short (TTL ran out)\n")
