"""Finding ``mnem``: argument, then ``MNEM_BIN``, then PATH, then beside ``sys.executable``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import MNEM

from mnem_bridge import BinaryNotFoundError, find_binary
from mnem_bridge.binary import describe
from mnem_bridge.process import SubprocessRunner


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A binary in each place the lookup visits, with PATH and sys.executable pointed at them."""
    found = {name: _executable(tmp_path / name / "mnem") for name in ("arg", "env", "path", "venv")}
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "python"))
    return found


def test_lookup_order(places: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEM_BIN", str(places["env"]))
    assert find_binary(places["arg"]) == str(places["arg"])
    assert find_binary() == str(places["env"])
    monkeypatch.delenv("MNEM_BIN")
    assert find_binary() == str(places["path"])
    places["path"].unlink()
    assert find_binary() == str(places["venv"])
    places["venv"].unlink()
    with pytest.raises(BinaryNotFoundError, match="not on PATH"):
        find_binary()


def test_a_bare_name_is_looked_up_on_path(places: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEM_BIN", "mnem")
    assert find_binary() == str(places["path"])


def test_a_non_executable_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "mnem"
    plain.write_text("")
    monkeypatch.setenv("MNEM_BIN", str(plain))
    with pytest.raises(BinaryNotFoundError, match="from MNEM_BIN"):
        find_binary()


def test_our_mnem_describes_itself() -> None:
    binary = describe(MNEM, SubprocessRunner())
    assert (binary.path, binary.contract, binary.implementation) == (MNEM, 1, "mnem_store")
    assert "write" in binary.features
