"""Echo: every invocation as a copy-pasteable shell line."""

from __future__ import annotations

import logging

import pytest

from mnem_bridge.echo import echo, heredoc_delimiter, shell_line

def test_delimiter_never_occurs_in_the_payload() -> None:
    assert heredoc_delimiter('{"a": 1}') == "MNEM_EOF"
    assert heredoc_delimiter("MNEM_EOF and MNEM_EOF_1") == "MNEM_EOF_2"


def test_shell_line_quotes_every_word() -> None:
    assert shell_line(["mnem", "a b", "it's", "-x"]) == "mnem 'a b' 'it'\"'\"'s' -x"
    assert shell_line(["mnem", "write"], '{"a":1}') == "mnem write <<'MNEM_EOF'\n{\"a\":1}\nMNEM_EOF"


def test_echo_logs_and_prints_only_when_asked(capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with caplog.at_level(logging.DEBUG, logger="mnem_bridge"):
        echo("mnem -C /s --json log")
        monkeypatch.setenv("MNEM_ECHO", "1")
        echo("mnem -C /s --json status")
    assert [r.getMessage() for r in caplog.records] == ["mnem -C /s --json log", "mnem -C /s --json status"]
    assert capsys.readouterr().err == "mnem -C /s --json status\n"
