"""Which store the server binds: ``--store``, then ``$MNEM_STORE``, then the per-user default."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnem_mcp import default_store_path, locate_store


def test_store_argument_wins_over_the_environment(tmp_path: Path) -> None:
    location = locate_store(tmp_path / "a", {"MNEM_STORE": str(tmp_path / "b")})
    assert (location.path, location.origin) == (tmp_path / "a", "--store")


def test_mnem_store_is_used_without_a_store_argument(tmp_path: Path) -> None:
    location = locate_store(None, {"MNEM_STORE": str(tmp_path / "b")})
    assert (location.path, location.origin) == (tmp_path / "b", "MNEM_STORE")


@pytest.mark.parametrize("environ", [{}, {"MNEM_STORE": ""}])
def test_otherwise_the_per_user_default_store(environ: dict[str, str], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    location = locate_store(None, environ)
    assert (location.path, location.origin) == (tmp_path / "data" / "mnemosyne" / "default", "default")
    assert default_store_path() == location.path


def test_a_relative_store_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert locate_store("mem", {}).path == tmp_path / "mem"
