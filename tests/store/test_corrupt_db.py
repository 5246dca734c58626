"""A damaged database file: every command answers a typed error or right data, and a failed command makes nothing worse.

A store with some history (branches, a merge, deletions, contents of many
sizes, so the file spans many pages) is copied, and hypothesis damages the
copy's ``.mnem/store.sqlite3``: truncation, random bytes over random ranges
(the header included), a zeroed page, deletion, replacement with garbage;
for a copy taken while its last commits were still in the write-ahead log
(as after a crash), also removing, truncating or scribbling on the WAL.  Then
a few commands run through ``invoke`` (the one code path of a one-shot
``mnem`` and of every worker request; a few cases also run the real binary).
Each must:

* exit 0, or 1/2 with one JSON error document whose code is in the
  taxonomy and whose message is not an "internal error" (a bug's
  fallback), with nothing on stderr;
* if it failed, leave the damaged files' bytes as they were: a failed
  command never makes the damage worse;
* if it succeeded, return what the undamaged store would have returned in
  one of the states the files can legitimately stand for (losing the WAL
  loses the commits only it held, so an older state is right), or else
  ``verify`` must report the damage.  A user who sees ``verify`` pass
  relies on every answer being right: silent wrong data is the failure.
"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import run_mnem
from damaged_exports import damaged_export
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mnem_store.cli import Streams, invoke

CODES = {"not_found", "invalid_ref", "conflict", "corrupt_store", "format_version", "store_exists", "no_store",
         "store_io", "busy", "usage"}
DB = "store.sqlite3"
WAL = "store.sqlite3-wal"
READS = ("status", "log", "show", "export", "verify")


def run(root: Path, *argv: str, stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    out, err = io.BytesIO(), io.BytesIO()
    code = invoke(["-C", str(root), "--json", *argv], Streams(io.BytesIO(stdin), out, err))
    return code, out.getvalue(), err.getvalue()


def ok(root: Path, *argv: str, stdin: bytes = b"") -> bytes:
    code, out, err = run(root, *argv, stdin=stdin)
    assert code == 0 and err == b"", out
    return out


@dataclass(frozen=True)
class Template:
    """A store's files to damage, and the read outputs of every state those files may legitimately show."""

    files: dict[str, bytes]
    states: list[dict[str, Any]]


def reads(root: Path) -> dict[str, Any]:
    return {command: orjson.loads(ok(root, command)) for command in READS}


def build_history(root: Path, writes: int) -> Iterator[None]:
    """Commits with contents from a few bytes to a few pages, a branch merged back, deletions.

    Yields after each write and each checkout.
    """
    ok(root.parent, "init", str(root))
    for n in range(writes):
        if n == writes // 2:
            ok(root, "branch", "side")
        puts = [{"id": f"node-{n % 9}", "content": {"n": n, "text": "x" * (n * 97 % 3000)}}]
        deletes = [f"node-{(n + 4) % 9}"] if n % 5 == 4 else []
        ok(root, "write", "-m", f"write {n}", "--time", str(1000 + n), "--skip-missing",
           stdin=orjson.dumps({"put": puts, "delete": deletes}))
        yield
    # A checkout is a committed state of its own (HEAD is a row of the database), so a WAL cut short
    # can end right after it: each one is a stage the damaged store may stand for.
    ok(root, "checkout", "side")
    yield
    ok(root, "write", "-m", "on side", "--time", "5000", stdin=b'{"put": [{"id": "side-only", "content": [1, 2]}]}')
    yield
    ok(root, "checkout", "main")
    yield
    ok(root, "merge", "side", "--time", "6000")
    yield


def store_files(root: Path) -> dict[str, bytes]:
    mnem = root / ".mnem"
    return {p.name: p.read_bytes() for p in mnem.iterdir() if p.name in (DB, WAL)}


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """A store at rest: every commit checkpointed into the database file, no WAL."""
    root = tmp_path_factory.mktemp("clean") / "store"
    for _ in build_history(root, 40):
        pass
    assert not (root / ".mnem" / WAL).exists()
    return Template(store_files(root), [reads(root)])


@pytest.fixture(scope="module")
def live_wal(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """A store whose last ten commits live only in the WAL, copied as a crash would leave it.

    An open reader keeps the WAL from being checkpointed on close; the copy is
    taken while it is open.  Losing or damaging the WAL can only lose a suffix
    of those commits, so the state after each of them is a legitimate answer.
    """
    root = tmp_path_factory.mktemp("wal") / "store"
    history = build_history(root, 40)
    for _ in range(30):
        next(history)
    holder = sqlite3.connect(root / ".mnem" / DB)
    holder.execute("PRAGMA wal_autocheckpoint=0")
    holder.execute("SELECT count(*) FROM objects").fetchone()
    try:
        stages = [store_files(root)]
        for _ in history:
            stages.append(store_files(root))
        files = stages[-1]
    finally:
        holder.close()
    assert len(files[WAL]) > 4096, "the last commits must be in the WAL"
    # HEAD and config are rows of the database like everything else: each earlier state of the files holds its own.
    states = []
    for n, stage in enumerate(stages):
        replay = tmp_path_factory.mktemp(f"stage{n}") / "store"
        (replay / ".mnem").mkdir(parents=True)
        for name, data in stage.items():
            (replay / ".mnem" / name).write_bytes(data)
        states.append(reads(replay))
    return Template(files, states)


def corruption(template: Template) -> st.SearchStrategy[tuple[str, Any]]:
    """One way to damage a copy of ``template``: a name (for statistics) and what to do."""
    size = len(template.files[DB])
    offset = st.one_of(st.integers(0, 100), st.integers(0, size - 1))  # the header is 100 bytes: hit it often
    kinds = [
        st.tuples(st.just("truncate"), st.integers(0, size - 1)),
        st.tuples(st.just("overwrite"), st.lists(st.tuples(offset, st.binary(min_size=1, max_size=64)),
                                                 min_size=1, max_size=4)),
        st.tuples(st.just("zero page"), st.integers(0, size // 2048 - 1)),
        st.tuples(st.just("delete"), st.none()),
        st.tuples(st.just("garbage"), st.binary(max_size=8192) | st.just(b"not a database\n" * 100)),
    ]
    if WAL in template.files:
        wal_size = len(template.files[WAL])
        kinds += [
            st.tuples(st.just("remove wal"), st.none()),
            st.tuples(st.just("truncate wal"), st.integers(0, wal_size - 1)),
            st.tuples(st.just("overwrite wal"), st.lists(st.tuples(st.integers(0, wal_size - 1),
                                                                   st.binary(min_size=1, max_size=64)),
                                                         min_size=1, max_size=3)),
        ]
    return st.one_of(kinds)


def damage(root: Path, template: Template, kind: str, how: Any) -> None:
    """Lay the template's files down at ``root`` and apply one corruption."""
    mnem = root / ".mnem"
    shutil.rmtree(root, ignore_errors=True)
    mnem.mkdir(parents=True)
    for name, data in template.files.items():
        (mnem / name).write_bytes(data)
    target = mnem / (WAL if kind.endswith("wal") else DB)
    data = bytearray(target.read_bytes())
    if kind.startswith("truncate"):
        target.write_bytes(data[:how])
    elif kind.startswith("overwrite"):
        for at, chunk in how:
            data[at : at + len(chunk)] = chunk[: max(0, len(data) - at)]
        target.write_bytes(bytes(data))
    elif kind == "zero page":
        data[how * 2048 : (how + 1) * 2048] = bytes(2048)
        target.write_bytes(bytes(data))
    elif kind in ("delete", "remove wal"):
        target.unlink()
    elif kind == "garbage":
        target.write_bytes(how)


def on_disk(root: Path) -> dict[str, bytes]:
    """The damaged files as they are now (what a failed command must not have touched).

    An empty WAL counts as none: it holds no frames, so SQLite reads the
    database exactly as without it.  Any reader of a WAL-mode database
    creates one and deletes it only if its closing checkpoint succeeds,
    which on a damaged file it may not.
    """
    mnem = root / ".mnem"
    files = {name: (mnem / name).read_bytes() for name in (DB, WAL) if (mnem / name).exists()}
    if files.get(WAL) == b"":
        del files[WAL]
    return files


def after_checkpoint(files: dict[str, bytes], scratch: Path) -> dict[str, bytes]:
    """``files`` as any SQLite reader leaves them: on closing, the last connection checkpoints the WAL.

    That is the one change a failed command may make to the files: it only
    moves frames SQLite has verified as committed into the database file (it
    never writes damage), and every reader, the sqlite3 shell included, does
    the same.  Reproduced here with a plain connection on a copy.
    """
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    for name, data in files.items():
        (scratch / name).write_bytes(data)
    conn = sqlite3.connect(scratch / DB)
    try:
        conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
    except sqlite3.Error:
        pass
    finally:
        conn.close()
    return {name: (scratch / name).read_bytes() for name in (DB, WAL) if (scratch / name).exists()}


def check_document(code: int, out: bytes, err: bytes) -> Any:
    """Exit 0/1/2, nothing on stderr, one JSON document; an error carries a taxonomy code and a real message."""
    assert code in (0, 1, 2), (code, out)
    assert err == b"", err
    doc = orjson.loads(out)
    if code != 0:
        error = doc["error"]
        assert error["code"] in CODES, doc
        assert error["message"].strip() and "internal error" not in error["message"], doc
    return doc


WRITES = {
    "write": (("write", "-m", "after damage", "--time", "9000"), b'{"put": [{"id": "new", "content": "fresh"}]}'),
    "add": (("add", "--", "new", "fresh"), b""),
    "commit": (("commit", "-m", "after damage", "--time", "9001"), b""),
}


def right_answer(template: Template, command: str, doc: Any, written: dict[str, Any]) -> bool:
    """Whether a read's answer is what some legitimate state of the files gives (plus what was written since)."""
    for state in template.states:
        if not written:
            if doc == state[command]:
                return True
        elif command == "show":
            memory = {**state["show"]}
            if set(doc) == set(memory) | set(written) and all(
                    doc[k] == memory[k] for k in memory if k not in written) and all(
                    doc[k]["content"] == v for k, v in written.items()):
                return True
    return False


def damaged_run(root: Path, template: Template, kind: str, how: Any, commands: list[str]) -> None:
    """Damage, run the commands, hold each to the module's property."""
    damage(root, template, kind, how)
    event(kind)
    written: dict[str, Any] = {}
    staged: dict[str, Any] = {}
    for command in commands:
        argv, stdin = WRITES.get(command, ((command,), b""))
        before = on_disk(root)
        code, out, err = run(root, *argv, stdin=stdin)
        doc = check_document(code, out, err)
        event(f"{kind}: {command} -> {'ok' if code == 0 else doc['error']['code']}")
        if code != 0:
            after = on_disk(root)
            if after != before and WAL in before:
                before = after_checkpoint(before, root.parent / "checkpointed")
            assert after == before, f"{command} failed ({doc['error']}) and changed the damaged files"
            continue
        if command == "write":
            written["new"] = "fresh"
        elif command == "add":
            staged["new"] = "fresh"
        elif command == "commit":
            written.update(staged)
        if command in READS and command != "show" and (written or staged):
            continue  # no oracle for these once the history has moved on
        if command in READS and not right_answer(template, command, doc, {**written, **staged}):
            verdict, vout, verr = run(root, "verify")
            check_document(verdict, vout, verr)
            assert verdict != 0, f"{command} on a store that verifies gave a wrong answer after {kind}: {doc!r:.300}"


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return tmp_path / "damaged"


commands = st.lists(st.sampled_from([*READS, "write", "add", "commit"]), min_size=1, max_size=4)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_database_gives_typed_errors_or_right_answers(clean: Template, scratch: Path,
                                                                 data: st.DataObject) -> None:
    kind, how = data.draw(corruption(clean))
    damaged_run(scratch, clean, kind, how, data.draw(commands))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_database_or_wal_after_a_crash(live_wal: Template, scratch: Path, data: st.DataObject) -> None:
    kind, how = data.draw(corruption(live_wal))
    damaged_run(scratch, live_wal, kind, how, data.draw(commands))


@pytest.mark.parametrize(("kind", "how"), [("truncate", 3000), ("zero page", 1),
                                           ("overwrite", [(0, b"SQLite format 4")]),
                                           ("garbage", b"\xff" * 5000), ("delete", None)])
def test_the_real_binary_never_prints_a_traceback(clean: Template, scratch: Path, kind: str, how: Any) -> None:
    """The same through a real ``mnem`` process: stderr holds no traceback, stdout one error document."""
    damage(scratch, clean, kind, how)
    for command in ("status", "log", "verify", "export"):
        result = run_mnem("--json", command, cwd=scratch)
        assert result.err == "", result.err  # the contract: with --json, everything is in the one document
        if result.code != 0:
            assert result.json["error"]["code"] in ("corrupt_store", "store_io"), result.out
            assert "internal error" not in result.json["error"]["message"], result.out
    text = run_mnem("log", cwd=scratch)
    assert "Traceback" not in text.err and (text.code == 0 or text.err.startswith("Error: "))


def test_damaged_snapshots_are_reported_in_the_document_not_on_stderr(tmp_path: Path) -> None:
    """Damaged state snapshots are rebuilt from change rows, or the command fails; either way stderr stays empty.

    The engine logs each snapshot it has to skip.  With no handler those
    warnings went to stderr through logging's last resort, breaking the
    contract (one document on stdout, nothing on stderr) and upstream's text
    output; ``verify`` is where damage is reported.
    """
    root = tmp_path / "store"
    ok(tmp_path, "init", str(root))
    for n in range(40):
        ok(root, "write", "-m", f"w{n}", "--time", str(n),
           stdin=orjson.dumps({"put": [{"id": f"n{n % 5}", "content": n}]}))
    with sqlite3.connect(root / ".mnem" / DB) as conn:
        conn.execute("UPDATE objects SET data = x'a1' WHERE kind = 1 AND data IS NOT NULL")
    conn.close()
    rebuilt = run_mnem("--json", "show", cwd=root)
    assert (rebuilt.code, rebuilt.err) == (0, "") and rebuilt.json["n4"]["content"] == 39
    with sqlite3.connect(root / ".mnem" / DB) as conn:
        conn.execute("DELETE FROM changes WHERE commit_key = (SELECT max(commit_key) FROM changes)")
    conn.close()
    for args in (("--json", "show"), ("--json", "verify"), ("show",)):
        failed = run_mnem(*args, cwd=root)
        assert failed.code == 1, failed.out
        assert failed.err == "" if "--json" in args else failed.err.startswith("Error: corrupt store: "), failed.err


# ----------------------------------------------------------------- damaged exports


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_export_is_refused_whole_or_imported_whole(clean: Template, tmp_path_factory: pytest.TempPathFactory,
                                                             data: st.DataObject) -> None:
    """An import makes a store that verifies and holds exactly the export.

    Or it refuses with a typed error, leaving nothing.
    """
    good = clean.states[0]["export"]
    text = data.draw(damaged_export(good))
    target = tmp_path_factory.mktemp("import") / "nested" / "copy"
    code, out, err = run(target.parent.parent, "import", "-", str(target), stdin=text)
    doc = check_document(code, out, err)
    if code != 0:
        event(f"import -> {doc['error']['code']}")
        assert not target.parent.exists(), f"a refused import left {sorted(target.parent.parent.rglob('*'))}"
        return
    event("import -> ok")
    source = json.loads(text)
    verdict = run(target, "verify")
    assert check_document(*verdict) and verdict[0] == 0, verdict[1]
    copy = orjson.loads(ok(target, "export"))
    assert copy["objects"] == {key.lower(): body for key, body in source["objects"].items()}
    assert copy["refs"] == {name: tip.lower() for name, tip in source["refs"].items()}
    assert copy["head"] == (source["head"] if source["head"].startswith("ref:") else source["head"].strip().lower())
