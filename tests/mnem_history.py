"""Helpers for tests that build histories through the real ``mnem`` binary."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
from conftest import Run, copy_store, run_mnem, set_store_meta


def ok(*args: str, cwd: Path, input: bytes | str | None = None, env: dict[str, str] | None = None) -> Run:
    """Run ``mnem`` and insist that it succeeded."""
    result = run_mnem(*args, cwd=cwd, input=input, env=env)
    assert result.code == 0, (args, result.out, result.err)
    return result


def write(store: Path, message: str, time: int, put: dict[str, Any] | None = None,
          delete: Iterable[str] = (), author: str = "tester", *, allow_reserved: bool = False) -> str:
    """One commit of plain string/JSON contents via ``mnem write``; returns its hex id.

    ``allow_reserved`` passes ``--allow-reserved``, for a history holding LangGraph checkpoints' nodes.
    """
    payload = {"put": [{"id": key, "content": value} for key, value in (put or {}).items()], "delete": list(delete)}
    result = ok("--json", "write", "-m", message, "--time", str(time), "--author", author,
                *(["--allow-reserved"] if allow_reserved else []), cwd=store, input=orjson.dumps(payload))
    return result.json["commit"]["id"]


def export(store: Path) -> str:
    """The whole store as upstream's export text: equal exports mean nothing was written."""
    return ok("export", cwd=store).out


def set_head(store: Path, text: str) -> None:
    """Point HEAD somewhere the CLI cannot (an unborn branch), as upstream's HEAD file allows.

    HEAD is the ``head`` row of the store's ``meta`` table, as the engine writes it: ``ref: <branch>`` or a
    64-hex commit id, with no trailing newline.
    """
    set_store_meta(store, "head", text)


def memory(store: Path, rev: str) -> dict[str, Any]:
    """``{node_id: content}`` at a revision."""
    return {node_id: node["content"] for node_id, node in ok("--json", "show", rev, cwd=store).json.items()}


def clone(template: Path, tmp_path: Path) -> Path:
    """A private copy of a store built once per module, so each test may write to it."""
    return copy_store(template, tmp_path / "store")
