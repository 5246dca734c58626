"""The process layer: exit status, output, stdin and environment, and nothing modified in the parent."""

from __future__ import annotations

import os
from pathlib import Path

from mnem_bridge import SubprocessRunner

from .support import fake_mnem


def test_the_runner_reports_exit_status_and_output(tmp_path: Path) -> None:
    script = fake_mnem(tmp_path, "sys.stdout.write(sys.stdin.read().upper()); sys.stderr.write('e'); sys.exit(3)",
                       describe=False, name="echoer")
    result = SubprocessRunner().run([str(script)], stdin=b"abc", timeout=30)
    assert (result.exit_status, result.stdout, result.stderr, result.timed_out) == (3, b"ABC", b"e", False)
    assert os.environ.get("NO_COLOR") is None  # the parent's environment is not modified


def test_the_child_gets_utf8_no_colour_and_its_own_session(tmp_path: Path) -> None:
    script = fake_mnem(tmp_path, "print(os.environ['LC_ALL'], os.environ['NO_COLOR'], os.getsid(0) == os.getpid())",
                       describe=False, name="env")
    result = SubprocessRunner().run([str(script)], stdin=None, timeout=30)
    assert result.stdout == b"C.UTF-8 1 True\n"
