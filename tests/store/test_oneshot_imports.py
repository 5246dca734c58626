"""What a one-shot read imports: only what reading needs (benchmarks/oneshot_imports.py shows the cost of the rest).

Each test runs the real ``mnem`` binary once with ``PYTHONPROFILEIMPORTTIME``
(``python -X importtime``), which lists every module the process imported,
start-up included, and checks the list.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from conftest import run_mnem

from mnem_store import porcelain

#: The parts a read of one node has no use for, by the engine's modules (docs/engine.md): remotes (fetch, push,
#: clone and the packs they carry), time (``main@{TIME}``, ``--valid-at``, history questions) and the UI.
REMOTES = ("remotes", "remotehttp", "httppeer", "peers", "sync", "transfer", "redaction_travel", "pushed")
TIME = ("times", "timeline", "validtime", "bisect", "stamps")


def one_shot_read(store: Path) -> set[str]:
    """Every module ``mnem --json show --node plan`` imports, run as its own process on ``store``."""
    run_mnem("write", "-m", "one", input='{"put": [{"id": "plan", "content": {"tier": 1.5}}]}', cwd=store)
    done = run_mnem("--json", "show", "--node", "plan", cwd=store, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert done.code == 0, done.err
    assert json.loads(done.out)["content"] == {"tier": 1.5}
    lines = [line.removeprefix("import time:").split("|") for line in done.err.splitlines()
             if line.startswith("import time:") and "self [us]" not in line]
    assert lines, done.err  # the listing is there to check
    return {name.strip() for _, _, name in lines}


def test_a_one_shot_read_loads_neither_orjson_nor_logging_nor_dataclasses(sqlite_store: Path) -> None:
    """The standard library and third-party imports a one-shot read is spared (docs/engine.md says where each goes)."""
    spared = {"orjson", "logging", "dataclasses", "shutil", "psycopg", "secrets", "hashlib", "threading", "blake3",
              "unicodedata"}
    assert sorted(spared & one_shot_read(sqlite_store)) == []


def test_a_one_shot_read_imports_nothing_of_remotes_time_or_the_ui(store: Path) -> None:
    """On either backend: those parts load with the verbs that use them (``fetch``, ``--valid-at``, ``ui``)."""
    spared = {f"mnem_store.{name}" for name in REMOTES + TIME}
    assert all(importlib.util.find_spec(name) is not None for name in spared)  # each name is a module of the engine
    loaded = one_shot_read(store)
    assert "mnem_store.porcelain" in loaded
    assert sorted(spared & loaded) == []
    assert sorted(name for name in loaded if name.startswith("mnem_store.ui")) == []


def test_a_one_shot_read_loads_the_reading_verbs_alone(sqlite_store: Path) -> None:
    """Of the porcelain's families (docs/engine.md), ``show --node`` loads the one it runs: not the others' records.

    Nor what only other reads and writes use: ``limits`` (the bounds a write's payload is read against),
    ``expiry`` (TTL leases: a ``--live`` read's), ``cli.documents`` (a page of nodes as JSON) and ``scratch``
    (the folder a new store is built in).
    """
    families = {f"mnem_store.porcelain.{family}" for family in porcelain.FAMILIES}
    loaded = one_shot_read(sqlite_store)
    assert sorted(families & loaded) == ["mnem_store.porcelain.reading"]
    spared = {"mnem_store.limits", "mnem_store.expiry", "mnem_store.cli.documents", "mnem_store.scratch"}
    assert sorted(spared & loaded) == []
