"""What `mnem` says when a command line is wrong, or waits for input (issue #45, point 9).

* a mistyped verb names the verb it resembles (git's and pip's "did you
  mean"), and the list of verbs an unknown word gets leaves the plumbing out;
* a bad flag is answered with that verb's own usage (and the flag it
  resembles), not the top-level one;
* ``--help`` describes ``-C PATH`` as the exact store it is, not git's
  "as if started in PATH";
* ``mnem write`` reading a terminal says on stderr what it waits for and how
  to end it; read from a pipe, it says nothing.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
from pathlib import Path

import pytest
from conftest import MNEM, run_mnem

from mnem_store.cli.dispatch import COMMANDS, PLUMBING


def usage_error(*argv: str, cwd: Path) -> tuple[str, str]:
    """The text error (stderr) and the ``--json`` one's message of a command line refused as ``usage`` (exit 2)."""
    text, as_json = run_mnem(*argv, cwd=cwd), run_mnem("--json", *argv, cwd=cwd)
    assert (text.code, text.out) == (2, ""), text
    assert as_json.code == 2 and as_json.json["error"]["code"] == "usage", as_json
    assert text.err == f"error: {as_json.json['error']['message']}\n"
    return text.err, as_json.json["error"]["message"]


# ------------------------------------------------------------------------------- verbs
@pytest.mark.parametrize(("typed", "meant"), [("comit", "commit"), ("stauts", "status"), ("chekout", "checkout"),
                                              ("recieve-pack", "receive-pack")])
def test_a_mistyped_verb_names_the_verb_it_resembles(tmp_path: Path, typed: str, meant: str) -> None:
    err, _ = usage_error(typed, cwd=tmp_path)
    assert err.splitlines()[0] == f"error: argument COMMAND: invalid choice: '{typed}'; did you mean '{meant}'?", err
    assert "choose from" not in err, "a suggestion replaces the list of every verb"
    assert "usage: mnem [-h]" in err and "For more information, try '--help'." in err


def test_an_unknown_word_lists_the_verbs_without_the_plumbing(tmp_path: Path) -> None:
    err, _ = usage_error("frobnicate", cwd=tmp_path)
    first = err.splitlines()[0]
    assert first.startswith("error: argument COMMAND: invalid choice: 'frobnicate' (choose from 'init', 'add',"), err
    listed = {name for name in COMMANDS if f"'{name}'" in first}
    assert listed == set(COMMANDS) - PLUMBING, first
    assert {"upload-pack", "receive-pack", "serve"} == PLUMBING
    assert "`mnem --help`" in first


# ------------------------------------------------------------------------------- flags
@pytest.mark.parametrize(("argv", "usage", "meant"), [
    (["show", "--nodes"], "usage: mnem show ", "--node"),
    (["commit", "-m", "x", "--autor", "a"], "usage: mnem commit ", "--author"),
    (["log", "--all-branches"], "usage: mnem log ", None),
])
def test_a_bad_flag_gets_the_verbs_own_usage(tmp_path: Path, argv: list[str], usage: str, meant: str | None) -> None:
    assert run_mnem("init", "store", cwd=tmp_path).code == 0
    err, message = usage_error("-C", "store", *argv, cwd=tmp_path)
    first, unknown = err.splitlines()[0], " ".join(argv[-2:] if meant == "--author" else argv[1:])
    assert first == f"error: unrecognized arguments: {unknown}" + (f"; did you mean {meant}?" if meant else ""), err
    assert usage in err and "usage: mnem [-h]" not in err, err
    assert message.splitlines()[0] == first.removeprefix("error: ")


def test_a_bad_flag_before_the_verb_keeps_the_top_level_usage(tmp_path: Path) -> None:
    err, _ = usage_error("--jsn", "log", cwd=tmp_path)
    assert err.splitlines()[0] == "error: unrecognized arguments: --jsn; did you mean --json?", err
    assert "usage: mnem [-h]" in err


# ------------------------------------------------------------------------------- -C
@pytest.mark.parametrize("argv", [["--help"], ["show", "--help"]])
def test_help_describes_the_store_option_as_the_exact_store(tmp_path: Path, argv: list[str]) -> None:
    shown = run_mnem(*argv, cwd=tmp_path)
    assert shown.code == 0, shown
    words = " ".join(shown.out.split())
    assert "as if started in" not in words
    assert ("-C PATH, --store PATH the store whose root is exactly PATH (or its .mnem folder, or a postgresql:// "
            "URL); nothing walks up from it, unlike git's -C") in words, shown.out


# ------------------------------------------------------------------------------- a terminal on stdin
def read_until(fd: int, wanted: bytes, limit: float = 30) -> bytes:
    """What ``fd`` gives until ``wanted`` appears (the program's own output decides; ``limit`` only bounds a hang)."""
    seen = b""
    while wanted not in seen:
        ready, _, _ = select.select([fd], [], [], limit)
        assert ready, f"nothing more after {seen!r}"
        chunk = os.read(fd, 4096)
        assert chunk, f"closed after {seen!r}"
        seen += chunk
    return seen


def test_write_at_a_terminal_says_what_it_waits_for_and_takes_the_payload(tmp_path: Path) -> None:
    assert run_mnem("init", "store", cwd=tmp_path).code == 0
    leader, follower = pty.openpty()
    errors_read, errors_write = os.pipe()
    proc = subprocess.Popen([MNEM, "-C", "store", "write", "-m", "typed at a terminal"], cwd=tmp_path,
                            stdin=follower, stdout=subprocess.PIPE, stderr=errors_write)
    os.close(follower)
    os.close(errors_write)
    try:
        hint = read_until(errors_read, b"\n").decode()
        assert hint == ('mnem write: reading the JSON payload ({"put": [...], "delete": [...]}) from the terminal; '
                        "end it with Ctrl-D on a line of its own, or pass --file FILE\n"), hint
        os.write(leader, b'{"put": [{"id": "plan", "content": "pro"}]}\n')
        os.write(leader, b"\x04")  # Ctrl-D at the start of a line: end of input
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
        os.close(errors_read)
    assert proc.returncode == 0 and out.decode().endswith("typed at a terminal\n"), out
    assert run_mnem("-C", "store", "show", "--node", "plan", cwd=tmp_path).out.strip().endswith('"pro"')


def test_write_from_a_pipe_says_nothing_on_stderr(tmp_path: Path) -> None:
    assert run_mnem("init", "store", cwd=tmp_path).code == 0
    done = run_mnem("-C", "store", "write", "-m", "piped", input='{"put": [{"id": "plan", "content": "pro"}]}',
                    cwd=tmp_path)
    assert (done.code, done.err) == (0, ""), done
