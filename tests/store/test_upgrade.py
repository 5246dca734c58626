"""A store written by the previous release (schema 2: HEAD and config as files) is upgraded in place, once."""

import sqlite3
from pathlib import Path

from conftest import run_mnem

DB = Path(".mnem") / "store.sqlite3"


def downgrade_to_schema_2(root: Path, head: str) -> None:
    """Rewrite a store into the layout the previous release wrote: HEAD and config as files, no corrected times."""
    conn = sqlite3.connect(root / DB)
    try:
        config = conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0]
        conn.execute("DELETE FROM meta WHERE key IN ('head', 'config')")
        conn.execute("ALTER TABLE commits DROP COLUMN corrected")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
        conn.commit()
    finally:
        conn.close()
    (root / ".mnem" / "HEAD").write_text(head)
    (root / ".mnem" / "config").write_text(config)


def test_a_schema_2_store_opens_upgraded_with_the_same_memory_and_history(sqlite_store):
    store = sqlite_store
    for n, when in enumerate((3000, 2000, 2000)):  # a clock that ran backwards, then the same millisecond
        assert run_mnem("add", f"k{n}", f'"v{n}"', cwd=store).code == 0
        assert run_mnem("commit", "-m", f"c{n}", "--time", str(when), cwd=store).code == 0
    assert run_mnem("branch", "side", cwd=store).code == 0
    before = {what: run_mnem("--json", *what.split(), cwd=store).json for what in ("log", "show", "branch")}
    export = run_mnem("export", cwd=store).out
    downgrade_to_schema_2(store, "ref: main\n")

    status = run_mnem("--json", "status", cwd=store)
    assert status.code == 0, status.out
    assert status.json["branch"] == "main"
    assert not (store / ".mnem" / "HEAD").exists() and not (store / ".mnem" / "config").exists()
    for what, value in before.items():
        assert run_mnem("--json", *what.split(), cwd=store).json == value
    assert run_mnem("export", cwd=store).out == export
    assert run_mnem("verify", cwd=store).code == 0


def test_a_schema_2_store_with_a_damaged_head_file_is_refused_unchanged(sqlite_store):
    store = sqlite_store
    assert run_mnem("add", "k", '"v"', cwd=store).code == 0
    assert run_mnem("commit", "-m", "c", cwd=store).code == 0
    downgrade_to_schema_2(store, "ref: no way\n")
    result = run_mnem("--json", "status", cwd=store)
    assert result.code == 1
    assert result.json["error"]["code"] == "corrupt_store"
    conn = sqlite3.connect(store / DB)
    try:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",)
    finally:
        conn.close()
    assert (store / ".mnem" / "HEAD").read_text() == "ref: no way\n"


def test_a_schema_3_store_gains_the_lease_and_vector_tables_once(sqlite_store):
    store = sqlite_store
    assert run_mnem("add", "k", '"v"', cwd=store).code == 0
    assert run_mnem("commit", "-m", "c", cwd=store).code == 0
    conn = sqlite3.connect(store / DB)
    try:
        conn.execute("DROP TABLE leases")
        conn.execute("DROP TABLE vectors")
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        conn.commit()
    finally:
        conn.close()
    assert run_mnem("--json", "ls", "--live", cwd=store).json == ["k"]
    conn = sqlite3.connect(store / DB)
    try:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("6",)
        assert conn.execute("SELECT count(*) FROM leases").fetchone() == (0,)
    finally:
        conn.close()
    assert run_mnem("verify", cwd=store).code == 0
