"""Finding the ``mnem`` binary and checking that it speaks our JSON contract.

Lookup order: an explicit path, else ``$MNEM_BIN``, else ``mnem`` on PATH,
else the console script beside ``sys.executable`` (where installing this
project puts it, even in a virtualenv that is not activated).

The first use of each binary path in a process asks it for its
self-description (``mnem --version --json``).  A binary that cannot answer
with our contract, such as upstream's Rust ``mnem`` (``--version`` prints
``mnem 0.0.8`` and ``--json`` does not exist), is refused with a
``ContractError`` that names the binary and the fix, instead of failing
later with confusing parse errors.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .echo import shell_line
from .errors import BinaryNotFoundError, ContractError
from .install import pip_install
from .process import Runner

__all__ = ["SUPPORTED_CONTRACTS", "Binary", "describe", "find_binary"]

logger = logging.getLogger(__name__)

#: ``contract`` values of ``mnem --version --json`` this bridge speaks (docs/cli-json.md).
SUPPORTED_CONTRACTS = frozenset({1})

#: How to get a binary the bridge can use, as this copy was installed; appended to every binary error.
FIX = f"install this project so its `mnem` is used: {pip_install()}; or set MNEM_BIN to that `mnem`"

#: Seconds the self-description may take (a Python start-up, normally well under one).
DESCRIBE_TIMEOUT = 30.0

_described: dict[str, Binary] = {}
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Binary:
    """A ``mnem`` that passed the contract check: its path and self-description."""

    path: str
    version: str
    format_version: int
    contract: int
    implementation: str
    features: tuple[str, ...]


def find_binary(explicit: str | os.PathLike[str] | None = None) -> str:
    """Locate ``mnem`` without running it.

    Args:
        explicit: A path (or a bare name looked up on PATH) that wins over everything.

    Returns:
        The absolute path of the binary to use.

    Raises:
        BinaryNotFoundError: Nothing executable where the lookup order points.
    """
    if explicit is not None:
        return _existing(os.fspath(explicit), "the binary argument")
    from_env = os.environ.get("MNEM_BIN")
    if from_env:
        return _existing(from_env, "MNEM_BIN")
    on_path = shutil.which("mnem")
    if on_path is not None:
        return os.path.abspath(on_path)
    beside = Path(sys.executable).with_name("mnem")
    if os.access(beside, os.X_OK):
        return str(beside)
    raise BinaryNotFoundError(f"no `mnem` binary: not on PATH and not beside {sys.executable}; {FIX}")


def _existing(value: str, origin: str) -> str:
    found = shutil.which(value) if os.sep not in value else (value if os.access(value, os.X_OK) else None)
    if found is None:
        raise BinaryNotFoundError(f"`mnem` binary {value!r} (from {origin}) is missing or not executable; {FIX}")
    return os.path.abspath(found)


def describe(path: str, runner: Runner) -> Binary:
    """The binary's self-description, checked once per path per process.

    Args:
        path: An absolute path from ``find_binary``.
        runner: How to run it.

    Returns:
        The checked self-description (cached for the life of the process).

    Raises:
        BinaryNotFoundError: The binary could not be started.
        ContractError: It did not describe itself with a supported contract.
    """
    with _lock:
        known = _described.get(path)
    if known is not None:
        return known
    argv = [path, "--version", "--json"]
    try:
        result = runner.run(argv, stdin=None, timeout=DESCRIBE_TIMEOUT)
    except OSError as exc:
        raise BinaryNotFoundError(f"cannot run `mnem` binary {path!r}: {exc.strerror or exc}; {FIX}",
                                  command=shell_line(argv)) from exc
    doc = _parse(result.stdout) if result.exit_status == 0 else None
    if not isinstance(doc, dict):
        answer = (result.stdout or result.stderr).decode("utf-8", "replace").strip()[:200] or "(nothing)"
        what = (f"speaks JSON contract {doc}, and this bridge speaks {_listing(SUPPORTED_CONTRACTS)}"
                if isinstance(doc, int) else "has no JSON contract")
        raise ContractError(
            f"the `mnem` at {path} {what} (`mnem --version --json` answered {answer!r}, "
            f"exit status {result.exit_status}); {FIX}",
            command=shell_line(argv), stderr=result.stderr, exit_status=result.exit_status,
        )
    binary = Binary(path, doc["version"], doc["format_version"], doc["contract"], doc["implementation"],
                    tuple(doc["features"]))
    logger.debug("using %s: %s %s (contract %d)", path, binary.implementation, binary.version, binary.contract)
    with _lock:
        _described[path] = binary
    return binary


def _parse(stdout: bytes) -> dict[str, Any] | int | None:
    """The self-description if it is one with a supported contract; else the contract it names, or ``None``.

    A binary from a newer (or older) release describes itself with another
    ``contract``; saying which one tells the user to match the two releases,
    where "no JSON contract" would send them looking for the wrong binary.
    """
    try:
        doc = orjson.loads(stdout)
    except orjson.JSONDecodeError:
        return None
    keys = ("name", "version", "format_version", "contract", "implementation", "features")
    if not isinstance(doc, dict) or any(k not in doc for k in keys):
        return None
    contract = doc["contract"]
    if contract not in SUPPORTED_CONTRACTS:
        return contract if isinstance(contract, int) and not isinstance(contract, bool) else None
    return doc


def _listing(contracts: frozenset[int]) -> str:
    """``contract 1`` or ``contracts 1, 2``."""
    numbers = ", ".join(map(str, sorted(contracts)))
    return f"contract {numbers}" if len(contracts) == 1 else f"contracts {numbers}"
