"""Echo: every invocation is a shell line that, pasted into bash, does exactly the same thing."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from mnem_bridge import InvalidRefError, Provenance, Store, agents
from mnem_bridge.echo import echo, heredoc_delimiter, shell_line

from .support import paste

NASTY_ID = "it's \"quoted\" $(touch PWNED) `touch PWNED` \\ \n second line ü 日本 -x"
NASTY_CONTENT = {
    "said": "O'Brien: \"$(touch PWNED)\" `touch PWNED` $HOME \\n ${IFS}",
    "lines": "first\nMNEM_EOF\nlast",
    "unicode": "ünïcödé 🦀 日本語",
    "values": [1, None, True, -2.5],
}


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


def test_pasted_lines_give_the_same_json(bstore: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEM_ECHO", "1")
    shutil.copytree(bstore.root / ".mnem", tmp_path / "before")
    with caplog.at_level(logging.DEBUG, logger="mnem_bridge"):
        commit, changes = bstore.write(
            [{"id": NASTY_ID, "content": NASTY_CONTENT, "source": "$(touch PWNED)", "step": "`touch PWNED`"}], [],
            message="it's a \"message\"\nwith $(touch PWNED)", author="O'Brien", time_ms=1_757_000_000_000,
        )
    printed = capsys.readouterr().err
    assert printed == bstore.last_command + "\n"
    assert caplog.records[-1].getMessage() == bstore.last_command
    assert "<<'MNEM_EOF_1'\n" in printed  # the content holds a MNEM_EOF line
    assert commit is not None
    shutil.rmtree(bstore.root / ".mnem")  # replay the write from the same starting state
    shutil.copytree(tmp_path / "before", bstore.root / ".mnem")
    assert paste(printed, tmp_path) == {"commit": commit.to_dict(), "changes": changes}

    node = bstore.working_node(NASTY_ID)
    assert node is not None and node.content == NASTY_CONTENT
    assert paste(capsys.readouterr().err, tmp_path) == node.to_dict()

    staged = bstore.add(NASTY_ID, NASTY_CONTENT, provenance=Provenance(note="$(touch PWNED)"))
    assert paste(capsys.readouterr().err, tmp_path)["object"] == staged
    assert not list(tmp_path.glob("**/PWNED")), "the shell expanded something"


@pytest.mark.parametrize("hostile", ["$(touch pwned)", "`touch pwned2`", "'; touch pwned3 #", "a\nb"])
def test_every_printed_line_with_a_hostile_id_replays_exactly_and_runs_nothing_else(
    hostile: str, bstore: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The echoed write, the echoed read-back and an error's ``command``: each is the same call, pasted."""
    monkeypatch.setenv("MNEM_ECHO", "1")
    shutil.copytree(bstore.root / ".mnem", tmp_path / "before")
    commit, changes = bstore.write([{"id": hostile, "content": {"said": hostile}, "note": hostile}], [],
                                   message=hostile, author=hostile, time_ms=1_757_000_000_000)
    written = capsys.readouterr().err
    assert written == bstore.last_command + "\n" and commit is not None
    shutil.rmtree(bstore.root / ".mnem")  # replay the write from the same starting state: the same commit id
    shutil.copytree(tmp_path / "before", bstore.root / ".mnem")
    assert paste(written, tmp_path) == {"commit": commit.to_dict(), "changes": changes}

    node = bstore.working_node(hostile)
    assert node is not None and node.content == {"said": hostile} and node.provenance.note == hostile
    assert paste(capsys.readouterr().err, tmp_path) == node.to_dict()  # reads back the same node

    with pytest.raises(InvalidRefError) as caught:
        bstore.blame(f"{hostile} (absent)")
    assert caught.value.command == bstore.last_command
    assert paste(caught.value.command, tmp_path, status=1) == {
        "error": {"code": "invalid_ref", "message": caught.value.message, "detail": caught.value.detail}}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["before", "store"], "the shell ran something"


def test_echo_is_quiet_by_default(bstore: Store, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEM_ECHO", "0")
    agents.remember(bstore, "a", 1)
    assert capsys.readouterr().err == ""
    assert bstore.last_command is not None and bstore.last_command.startswith(f"{bstore.client.path} -C ")


def test_a_write_without_a_time_echoes_a_line_the_binary_times(bstore: Store, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``time_ms``, no ``--time``: pasted, the line makes the same commit but for the binary's own time."""
    monkeypatch.setenv("MNEM_ECHO", "1")
    agents.remember(bstore, "seed", 0)
    shutil.copytree(bstore.root / ".mnem", tmp_path / "before")
    capsys.readouterr()
    commit, changes = bstore.write([{"id": "plan", "content": "pro"}], [], message="no time", author="a")
    written = capsys.readouterr().err
    assert commit is not None and written == bstore.last_command + "\n"
    assert "--time" not in written and "--author=a" in written
    shutil.rmtree(bstore.root / ".mnem")
    shutil.copytree(tmp_path / "before", bstore.root / ".mnem")
    replayed = paste(written, tmp_path)
    assert replayed["changes"] == changes == {"plan": "added"}
    expected = {key: value for key, value in commit.to_dict().items() if key not in ("id", "time")}
    assert {key: value for key, value in replayed["commit"].items() if key not in ("id", "time")} == expected
