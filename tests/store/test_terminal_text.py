"""What the text output quotes from others reaches a terminal as text, never as commands to the terminal.

An agent chooses its commit's message (MCP ``summary``), a pusher its
commits' author, any writer its node ids and provenance.  Each below holds
an escape sequence that clears the screen, a bell, a carriage return that
would overwrite a line, an 8-bit CSI and a right-to-left override.  Every
text command that prints them writes each as ``\\u{hex}``; tab and
newline stay, and so do the colour codes ``mnem`` paints a terminal with.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pg_stores
import pytest
from conftest import run_mnem

from mnem_store.cli.dispatch import Streams, invoke

#: What a hostile writer puts in every text field it controls.
HOSTILE = "x\x1b[2J\x07\r\u009b1m\u202eevil"
#: A character a terminal acts on, in output (tab and newline are layout).
ACTING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
NODE = f"fact-{HOSTILE}"


@pytest.fixture
def planted(store: Path) -> Path:
    """A store whose one commit an agent wrote with hostile text in its message, author, node id and source."""
    payload = {"put": [{"id": NODE, "content": {"said": HOSTILE}, "source": HOSTILE, "step": HOSTILE}]}
    assert run_mnem("write", "-m", f"subject {HOSTILE}\n\nbody {HOSTILE}", "--author", f"agent {HOSTILE}",
                    input=json.dumps(payload), cwd=store).code == 0
    return store


@pytest.mark.parametrize("args", [
    ["log"], ["log", "--oneline"], ["show"], ["show", "--node", NODE], ["blame", NODE], ["diff", "HEAD"],
    ["branch"], ["status"], ["bisect", "--node", NODE, "--present"], ["rm", "no-such-node", HOSTILE],
], ids=lambda args: "-".join(arg for arg in args if arg not in (NODE, HOSTILE)))
def test_text_output_escapes_what_a_terminal_would_act_on(planted: Path, args: list[str]) -> None:
    result = run_mnem(*args, cwd=planted)
    shown = result.out + result.err
    assert not ACTING.search(shown), repr(shown)
    assert "Traceback" not in shown
    if result.code == 0 and args[0] in ("log", "blame", "show"):
        assert "\\u{1b}[2J\\u{7}\\u{d}\\u{9b}1m\\u{202e}evil" in shown, shown


def test_json_output_keeps_the_text_exactly(planted: Path) -> None:
    log = run_mnem("--json", "log", cwd=planted).json
    assert log[0]["author"] == f"agent {HOSTILE}"
    assert log[0]["message"] == f"subject {HOSTILE}\n\nbody {HOSTILE}"


def test_a_terminal_keeps_its_colours_and_gets_the_rest_escaped(planted: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    out, err = io.BytesIO(), io.BytesIO()
    terminal = Streams(io.BytesIO(), out, err, tty=True)
    assert invoke(["-C", pg_stores.address(planted), "log", "--oneline"], terminal) == 0
    text = out.getvalue().decode()
    assert "\x1b[38;5;75m" in text and "\x1b[0m" in text  # the painter's own codes
    assert "\x1b[2J" not in text and "\\u{1b}[2J" in text
    assert not ACTING.search(text.replace("\x1b[38;5;75m", "").replace("\x1b[0m", "")), repr(text)
