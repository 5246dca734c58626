"""Error codes map to typed exceptions that keep the raw facts."""

from __future__ import annotations

import orjson
import pytest

import mnem_bridge
from mnem_bridge import RunResult
from mnem_bridge.client import interpret
from mnem_bridge.errors import error_class
from mnem_store import errors as engine

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
    assert (str(error), error.command, error.stderr, error.exit_status) == (
        "it failed", "mnem -C /s --json x", b"raw\xff", 1)


def test_the_bridge_mirrors_each_code_the_engine_reports() -> None:
    """One taxonomy on each side of the process boundary: each engine error with a code has its bridge namesake."""
    codes = {cls.__name__: cls.code for cls in vars(engine).values()
             if isinstance(cls, type) and issubclass(cls, engine.MnemError) and "code" in vars(cls)}
    assert {name: getattr(mnem_bridge, name).code for name in codes} == codes
    assert {code: error_class(code).__name__ for code in codes.values()} == {code: name for name, code in codes.items()}


def test_an_unknown_code_keeps_its_code() -> None:
    assert error_class("teapot") is mnem_bridge.MnemError
    assert mnem_bridge.MnemError("short and stout", code="teapot").code == "teapot"


def test_the_hierarchy_matches_upstream_and_the_taxonomy() -> None:
    assert issubclass(mnem_bridge.BusyError, mnem_bridge.StoreIoError)
    assert issubclass(mnem_bridge.UsageError, ValueError)
    for name in ("ProtocolError", "SignalError", "CommandTimeoutError", "BinaryNotFoundError", "ContractError"):
        cls = getattr(mnem_bridge, name)
        assert issubclass(cls, mnem_bridge.StoreIoError) and cls.code == "store_io"


@pytest.mark.parametrize(("code", "name"), CODES.items())
def test_each_error_document_raises_its_class(code: str, name: str) -> None:
    document = f'{{"error": {{"code": "{code}", "message": "it failed"}}}}\n'.encode()
    status = 2 if code == "usage" else 1
    with pytest.raises(getattr(mnem_bridge, name)) as caught:
        interpret(RunResult(status, document, b"raw\xff"), "mnem -C /s --json x", 60)
    error = caught.value
    assert error_class(code) is type(error) and error.code == code and str(error) == "it failed"
    assert (error.command, error.stderr, error.exit_status) == ("mnem -C /s --json x", b"raw\xff", status)


def test_an_error_key_in_a_successful_result_is_data() -> None:
    memory = b'{"error":{"code":"x","message":"a node whose id is error"}}'
    assert interpret(RunResult(0, memory, b""), "mnem", 60) == orjson.loads(memory)
