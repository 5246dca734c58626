"""Error codes map to typed exceptions that keep the raw facts."""

from __future__ import annotations

import pytest

import mnem_bridge
from mnem_bridge.errors import error_class

CODES = {
    "not_found": "NotFoundError", "invalid_ref": "InvalidRefError", "conflict": "ConflictError",
    "corrupt_store": "CorruptStoreError", "format_version": "FormatVersionError", "store_exists": "StoreExistsError",
    "no_store": "NoStoreError", "store_io": "StoreIoError", "busy": "BusyError", "usage": "UsageError",
}


@pytest.mark.parametrize(("code", "name"), CODES.items())
def test_each_contract_code_has_its_class(code: str, name: str) -> None:
    cls = error_class(code)
    assert cls is getattr(mnem_bridge, name) and cls.code == code
    error = cls("it failed", command="mnem -C /s --json x", stderr=b"raw\xff", exit_status=1)
    assert (str(error), error.command, error.stderr, error.exit_status) == ("it failed", "mnem -C /s --json x", b"raw\xff", 1)


def test_an_unknown_code_keeps_its_code() -> None:
    assert error_class("teapot") is mnem_bridge.MnemError
    assert mnem_bridge.MnemError("short and stout", code="teapot").code == "teapot"


def test_the_hierarchy_matches_upstream_and_the_taxonomy() -> None:
    assert issubclass(mnem_bridge.BusyError, mnem_bridge.StoreIoError)
    assert issubclass(mnem_bridge.UsageError, ValueError)
    for name in ("ProtocolError", "SignalError", "CommandTimeoutError", "BinaryNotFoundError", "ContractError"):
        cls = getattr(mnem_bridge, name)
        assert issubclass(cls, mnem_bridge.StoreIoError) and cls.code == "store_io"
