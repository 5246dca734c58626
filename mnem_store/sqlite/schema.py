"""The SQLite store's tables: what a new store is made with, and what upgrades add.

Kept apart from ``database`` (which runs them) so that ``migrate``, which
``database`` calls to upgrade an old store, needs nothing from it at import.
"""

from __future__ import annotations

__all__ = ["PUSH_TABLES", "REDACTION_TABLES", "SCHEMA", "SIDE_TABLES"]

#: Schema 4's tables, also what ``migrate.upgrade_from_3`` adds.
SIDE_TABLES = """
CREATE TABLE IF NOT EXISTS leases (
    branch TEXT NOT NULL, node_id TEXT NOT NULL, expires INTEGER NOT NULL, ttl INTEGER NOT NULL,
    PRIMARY KEY (branch, node_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS leases_by_expiry ON leases (branch, expires);
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL, object BLOB NOT NULL, field TEXT NOT NULL, vector BLOB NOT NULL,
    UNIQUE (model, object, field)
);
"""

#: Schema 5's tables, also what ``migrate.upgrade_from_4`` adds: who pushed each branch move, and its commits.
PUSH_TABLES = """
CREATE TABLE IF NOT EXISTS pushes (
    push INTEGER PRIMARY KEY, pusher BLOB NOT NULL, at INTEGER NOT NULL, branch TEXT NOT NULL, old BLOB,
    new BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS pushed_commits (commit_id BLOB PRIMARY KEY, push INTEGER NOT NULL) WITHOUT ROWID;
"""

#: Schema 6's table, also what ``migrate.upgrade_from_5`` adds: the node versions whose bytes were removed.
REDACTION_TABLES = """
CREATE TABLE IF NOT EXISTS redactions (
    object BLOB PRIMARY KEY, node_id TEXT NOT NULL, at INTEGER NOT NULL, author BLOB NOT NULL, reason BLOB NOT NULL
) WITHOUT ROWID;
"""

#: Every table of the current schema.
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS objects (key INTEGER PRIMARY KEY, id BLOB NOT NULL UNIQUE, kind INTEGER NOT NULL, data BLOB);
CREATE TABLE IF NOT EXISTS refs (name TEXT PRIMARY KEY, target BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS staging (node_id TEXT PRIMARY KEY, object BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tombstones (node_id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS names (key INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS commits (
    key INTEGER PRIMARY KEY, parent INTEGER, state INTEGER NOT NULL, lane INTEGER NOT NULL, since INTEGER NOT NULL,
    corrected BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS commits_by_state ON commits (state);
CREATE TABLE IF NOT EXISTS lanes (lane INTEGER PRIMARY KEY, head INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS changes (
    commit_key INTEGER NOT NULL, name INTEGER NOT NULL, kind INTEGER NOT NULL, object INTEGER,
    PRIMARY KEY (commit_key, name)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS changes_by_name ON changes (name, commit_key, object);
{SIDE_TABLES}{PUSH_TABLES}{REDACTION_TABLES}"""
