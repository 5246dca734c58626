"""``mnem export --seal``: an export whose branch names (and everything else) import refuses when damaged.

Upstream's export format checks only its objects (each must hash to its key).
A branch other than HEAD's, renamed to another legal name, is exactly the
export of a store with that name, so no importer can refuse it: these tests
pin that limit for the default export (which stays upstream's, byte for byte)
and show that a sealed export closes it.  The seal is one key after the six
upstream's importer reads, which it ignores.  The byte-by-byte sweeps of a
sealed export are in ``test_import_sweep.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import run_mnem

from mnem_store import portable

#: The fix a refused sealed export names.
FIX = "export the source store again with `mnem export --seal`"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A store with two branches (HEAD on main) and an uncommitted node; its default and sealed exports."""
    root = tmp_path_factory.mktemp("seal") / "origin"
    assert run_mnem("init", str(root)).code == 0
    for args in (("add", "plan", "pro", "--source", "ticket-1"), ("commit", "-m", "one", "--time", "1000"),
                 ("branch", "side"), ("checkout", "side"), ("add", "plan", "enterprise"),
                 ("commit", "-m", "two", "--time", "2000"), ("checkout", "main"), ("add", "orphan", "staged")):
        result = run_mnem(*args, cwd=root)
        assert result.code == 0, result.err
    default = run_mnem("export", cwd=root)
    sealed = run_mnem("export", "--seal", cwd=root)
    assert default.code == 0 and sealed.code == 0, default.err + sealed.err
    count = len(orjson.loads(default.out)["objects"])
    assert count == 7  # two commits, two states, two values of plan, the orphan
    return {"root": root, "default": default.out, "sealed": sealed.out, "count": count}


def import_file(tmp_path: Path, text: str, name: str = "copy") -> tuple[Path, Any]:
    """Import ``text`` through ``mnem --json import``; returns the target folder and the JSON answer."""
    path = tmp_path / f"{name}.json"
    path.write_text(text)
    target = tmp_path / name
    return target, run_mnem("--json", "import", str(path), str(target)).json


def test_a_seal_is_one_key_after_upstreams_six_which_stay_byte_identical(
    exported: dict[str, Any], tmp_path: Path,
) -> None:
    default, sealed = exported["default"], exported["sealed"]
    document = orjson.loads(sealed)
    assert list(document) == ["format_version", "hash_algo", "default_branch", "head", "refs", "objects", "seal"]
    assert document["seal"] == portable.seal_of(document)
    assert default.endswith("\n}\n")
    assert sealed == default[: -len("\n}\n")] + f',\n  "seal": "{document["seal"]}"\n}}\n'
    assert run_mnem("--json", "export", "--seal", cwd=exported["root"]).json == document
    written = tmp_path / "sealed.json"
    result = run_mnem("export", "--seal", "-o", str(written), cwd=exported["root"])
    assert result.code == 0 and result.err == f"Exported {exported['count']} object(s) to {written}\n"
    assert written.read_text() == sealed[:-1]  # upstream's -o writes no trailing newline


def test_a_sealed_export_round_trips_and_a_default_one_still_imports(exported: dict[str, Any], tmp_path: Path) -> None:
    for name in ("default", "sealed"):
        target, answer = import_file(tmp_path, exported[name], name)
        assert answer["objects"] == exported["count"], answer
        assert run_mnem("export", cwd=target).out == exported["default"]
        assert run_mnem("export", "--seal", cwd=target).out == exported["sealed"]
        assert run_mnem("--json", "verify", cwd=target).code == 0


def test_a_renamed_branch_in_a_sealed_export_is_refused_naming_the_fix(
    exported: dict[str, Any], tmp_path: Path,
) -> None:
    damaged = exported["sealed"].replace('"side"', '"sidf"')
    assert damaged != exported["sealed"]
    target, answer = import_file(tmp_path, damaged)
    assert answer["error"]["code"] == "corrupt_store", answer
    assert FIX in answer["error"]["message"]
    assert not target.exists()
    text = run_mnem("import", str(tmp_path / "copy.json"), str(target))
    assert text.code == 1 and text.err.startswith("Error: corrupt store: the export's seal does not match")
    assert not target.exists()


def test_without_a_seal_a_renamed_branch_imports_as_upstreams_importer_does(
    exported: dict[str, Any], tmp_path: Path,
) -> None:
    """The limit of upstream's format, which the default export keeps: this is why ``--seal`` exists."""
    target, answer = import_file(tmp_path, exported["default"].replace('"side"', '"sidf"'))
    assert answer["objects"] == exported["count"], answer
    assert [b["name"] for b in run_mnem("--json", "branch", cwd=target).json] == ["main", "sidf"]


@pytest.mark.parametrize("seal", [None, "", 7, "0" * 64], ids=["null", "empty", "number", "zeros"])
def test_a_seal_that_is_not_the_exports_is_refused(exported: dict[str, Any], tmp_path: Path, seal: Any) -> None:
    document = orjson.loads(exported["sealed"])
    document["seal"] = seal
    target, answer = import_file(tmp_path, portable.dump_export(document))
    assert answer["error"]["code"] == "corrupt_store" and FIX in answer["error"]["message"], answer
    assert not target.exists()


@pytest.mark.parametrize("field", ["format_version", "hash_algo", "default_branch", "head", "refs", "objects"])
def test_a_sealed_export_missing_a_field_is_refused_by_its_seal(
    exported: dict[str, Any], tmp_path: Path, field: str,
) -> None:
    document = orjson.loads(exported["sealed"])
    del document[field]
    target, answer = import_file(tmp_path, portable.dump_export(document))
    assert answer["error"]["code"] == "corrupt_store" and FIX in answer["error"]["message"], answer
    assert not target.exists()


def test_export_seal_is_listed_in_features() -> None:
    assert "export-seal" in run_mnem("--version", "--json").json["features"]
