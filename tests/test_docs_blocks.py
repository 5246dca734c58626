"""Every code block in README.md and docs/*.md runs (or, where it cannot, is checked another way).

Each block is looked up in ``HOW`` by its file and first line; a block that is
not there fails ``test_every_block_is_classified``, so a new block cannot go
untested silently, and an entry that matches no block fails too.

* ``python``: run in a new temporary folder by this interpreter (with an
  optional prelude that makes a fragment whole).  A line ``EXPR  # LITERAL``
  becomes ``assert EXPR == LITERAL``, and ``print(...)  # TEXT`` lines are
  what standard output must be.
* ``console``: the ``$ `` lines run in one bash in a temporary folder, with
  this virtualenv's ``bin`` first on PATH (as after ``source
  .venv/bin/activate``); each must succeed, and the lines shown after it are
  its output (``…`` stands for any text within a line).
* ``bash``: the block is one bash script in a temporary folder that links
  this checkout's ``.venv``, ``.cache`` and ``bin``; it must succeed.
* ``json`` / ``jsonl``: parsed; an MCP server entry's ``command`` must be an
  absolute path (clients do not start servers from your shell).
* ``skip``: cannot run as-is; the reason says what covers it instead.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
FILES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
ELLIPSIS = "…"


@dataclass(frozen=True)
class Block:
    """One fenced code block."""

    file: str
    line: int
    lang: str
    text: str

    @property
    def key(self) -> tuple[str, str]:
        return self.file, self.text.splitlines()[0].strip() if self.text.strip() else ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def find_blocks() -> list[Block]:
    found = []
    for name in FILES:
        text = (ROOT / name).read_text(encoding="utf-8")
        for match in re.finditer(r"^( *)```(\w*)\n(.*?)^\1```", text, re.S | re.M):
            indent = len(match.group(1))
            body = "".join(line[indent:] for line in match.group(3).splitlines(keepends=True))
            found.append(Block(name, text[: match.start()].count("\n") + 1, match.group(2), body))
    return found


BLOCKS = find_blocks()

STORE_AND_NS = (
    'from mnem_langgraph import MnemosyneStore\nstore = MnemosyneStore("agent-memory")\nns = ("customers", "acme")\n'
)

#: (file, first line) -> (how, detail): a prelude for python, a setup script for console, a reason for skip.
HOW: dict[tuple[str, str], tuple[str, str]] = {
    ("README.md", "# Install, then run the main job: an MCP client drives mnem-mcp over stdio, remembers two"): (
        "skip", "the README's two top-level commands: CI runs the second from a clean clone (.ci/run), and its "
        "tests run the first's example (tests/examples); installing here would take minutes"),
    ("README.md", "$ mnem init ./agent-memory && cd agent-memory"): ("console", ""),
    ("README.md", '{"mcpServers": {"mnem": {"command": "/absolute/path/to/.venv/bin/mnem-mcp", "args": '
                  '["--store", "/absolute/path/to/agent-memory"]}}}'): ("json", "Claude Desktop config"),
    ("README.md", "from langmem import create_manage_memory_tool, create_search_memory_tool"): ("python", ""),
    ("docs/bridge.md", "import mnem_bridge"): ("python", ""),
    ("docs/bridge.md", "import shutil"): ("python", ""),
    ("docs/bridge.md", "$ MNEM_ECHO=1 python -c 'import mnem_bridge as m; m.agents.remember(m.open(\"agent-memory\"), "
                       "\"plan\", \"pro\")'"): ("console", "mnem init agent-memory >/dev/null"),
    ("docs/cli-json.md", "mnem write -m MESSAGE [--author A] [--time MS] [--skip-missing] [--file F | < stdin]"): (
        "skip", "a synopsis, not a command; tests/store/test_cli_json.py runs mnem write"),
    ("docs/cli-json.md", '{"put": [{"id": "plan", "content": "pro", "content_kind": "note",'): ("json", "payload"),
    ("docs/cli-json.md", "mnem stamps [REV] [--node ID]... [--prefix TEXT]..."): (
        "skip", "a synopsis, not a command; tests/store/test_stamps.py runs mnem stamps"),
    ("docs/cli-json.md", '{"argv": ["-C", "/path/to/store", "--json", "show", "--node", "plan"], "stdin": null}'): (
        "jsonl", "a worker request and answer"),
    ("docs/cli-json.md", '{"argv": ["-C", "/path/to/store", "--json", "write", "-m", "x"], "stdin_bytes": 42, '
                         '"framed": true}'): (
        "skip", "a framed exchange with placeholders for its raw bytes; tests/store/test_serve.py runs framed "
        "requests"),
    ("docs/langgraph.md", "from langgraph.graph import StateGraph"): ("python", ""),
    ("docs/postgres.md", "postgresql://USER@HOST:PORT/DATABASE?store=NAME"): (
        "skip", "URL forms, not a command; tests/store/test_postgres.py and the postgresql fixtures use them"),
    ("docs/postgres.md", "import subprocess, sys"): ("python", ""),
    ("docs/postgres.md", "no_store: no mnemosyne store named 'agent-memroy' at postgresql://agent@db.internal/memory"
                         "?store=agent-memroy; that database holds the stores agent-memory, team: if you meant one of "
                         "them, fix store= in the URL; to create this one, run `mnem init …` (or use the create "
                         "option: …)"): (
        "skip", "sample output for a server that is not here; tests/store/test_postgres.py and "
        "tests/test_store_location.py check that message on the suite's server"),
    ("docs/postgres.md", '{"mcpServers": {"mnem": {"command": "/absolute/path/to/.venv/bin/mnem-mcp", "args": '
                         '["--store", "postgresql://agent@db.internal/memory?store=team"], "env": {"PGPASSWORD": '
                         '"the role\'s password"}}}}'): (
        "json", "an MCP client config; tests/store/test_postgres.py runs mnem-mcp with PGPASSWORD in its env"),
    ("docs/postgres.md", "# Start a server that keeps running after this command ends, with its data (and socket) "
                         "in ./pgdata,"): ("bash", "pg-url"),
    ("docs/langgraph.md", 'store.put(ns, "plan", {"tier": "pro",'): ("python", STORE_AND_NS),
    ("docs/langgraph.md", 'name = store.branch("hypothesis/seats")'): (
        "python", STORE_AND_NS + 'store.put(("customers", "acme"), "seats", {"count": 35})\n'
        'def confirmed(item):\n    return item is not None and item.value == {"count": 40}\n'),
    ("docs/mcp.md", "pip install .                          # from this repository: installs mnem and mnem-mcp"): (
        "skip", "installs the package (the README's commands do); tests/mcp/test_mcp_cli.py runs mnem-mcp --help "
        "and tests/examples runs examples/mcp_client.py"),
    ("docs/mcp.md", "{"): ("json", "Claude Desktop / .mcp.json config"),
    ("docs/mcp.md", "claude mcp add mnem -- /absolute/path/to/.venv/bin/mnem-mcp --store "
                    "/absolute/path/to/agent-memory"): (
        "skip", "needs the Claude Code CLI and real absolute paths; test_claude_code_commands_use_absolute_paths "
        "checks the mnem-mcp path"),
    ("docs/mcp.md", 'invalid_ref: blame: "ghost" is not in memory at 3fb1a6e2…'): (
        "skip", "sample output of a failed tool call; tests/mcp/test_mcp_errors.py checks that format"),
    ("docs/mcp.md", "bin/install-inspector     # the official Inspector CLI and a Node 22, into .cache/npm/"): (
        "bash", "agent-memory/.mnem"),
    ("docs/mcp-http.md", "# on loopback, no authentication (a trusted local process, or behind a proxy that "
                         "authenticates):"): (
        "skip", "starts servers that run until stopped; tests/mcp/test_http_transport.py and test_http_auth.py start "
        "mnem-mcp --transport streamable-http with these options as processes and drive them"),
    ("docs/mcp-http.md", "memory.example.com {"): (
        "skip", "a Caddyfile for a public host name, not a command; the proxy only forwards to the server above"),
    ("docs/mcp-http.md", "mnem-mcp --store ./agent-memory --transport streamable-http --port 8765 \\"): (
        "skip", "starts a server that runs until stopped, for a real issuer; tests/mcp/test_http_auth.py runs the "
        "same options against a local test issuer"),
    ("docs/mcp-http.md", 'claude mcp add --transport http mnem https://memory.example.com/mcp --header '
                         '"Authorization: Bearer $TOKEN"'): (
        "skip", "needs the Claude Code CLI, a deployed server and a token"),
    ("docs/mcp-http.md", "import httpx2"): ("python", ""),
    ("docs/mcp-http.md", "# 1. the development issuer, on http://127.0.0.1:9000, minting tokens for the server's "
                         "URL"): ("bash", "agent-memory/.mnem"),
    ("README.md", ".venv/bin/python examples/mcp_client.py ./support-memory && .venv/bin/mnem ui --store "
                  "./support-memory --open"): (
        "skip", "starts a server that runs until interrupted (and a browser); tests/examples runs the example with a "
        "kept store and tests/ui starts `mnem ui --store ... --port 0` as a process and drives it in Chromium"),
    ("docs/ui.md", "mnem ui --store ./agent-memory            # prints: mnem ui: … at http://127.0.0.1:8470/ "
                   "(read-only; Ctrl-C stops it)"): (
        "skip", "starts a server that runs until interrupted; tests/ui/ui_support.py starts it with --port 0 and "
        "reads that line"),
}


def test_every_block_is_classified() -> None:
    keys = [block.key for block in BLOCKS]
    unknown = [f"{block} {block.key[1]!r}" for block in BLOCKS if block.key not in HOW]
    assert unknown == [], "add these blocks to HOW in tests/test_docs_blocks.py"
    assert [key for key in HOW if key not in keys] == [], "HOW lists blocks that no longer exist"
    assert all(detail for how, detail in HOW.values() if how == "skip"), "every skipped block needs a reason"


def env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}


def by(how: str) -> list[Block]:
    return [block for block in BLOCKS if HOW.get(block.key, ("", ""))[0] == how]


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line by line, ``…`` standing for any text within a line."""
    if len(expected) != len(actual):
        return False
    patterns = [".*?".join(map(re.escape, want.split(ELLIPSIS))) for want in expected]
    return all(re.fullmatch(pattern, got) for pattern, got in zip(patterns, actual, strict=True))


# ------------------------------------------------------------------------------- python
def checked_python(code: str) -> tuple[str, list[str]]:
    """``code`` with ``EXPR  # LITERAL`` lines turned into asserts, and the output its print comments promise."""
    lines, printed = [], []
    for line in code.splitlines():
        found = re.fullmatch(r"(?P<indent>\s*)(?P<code>\S.*?)\s{2,}#\s(?P<comment>.+)", line)
        if found:
            expr, comment = found["code"], found["comment"].strip()
            try:
                tree = ast.parse(expr, mode="eval")
            except SyntaxError:
                tree = None
            if tree is not None and isinstance(tree.body, ast.Call) and getattr(tree.body.func, "id", "") == "print":
                printed.append(comment)
            elif tree is not None:
                try:
                    ast.literal_eval(comment)
                except (ValueError, SyntaxError):
                    pass
                else:
                    line = f"{found['indent']}assert ({expr}) == ({comment}), {expr!r}"
        lines.append(line)
    return "\n".join(lines) + "\n", printed


@pytest.mark.parametrize("block", by("python"), ids=str)
def test_python_blocks_run(block: Block, tmp_path: Path) -> None:
    prelude = HOW[block.key][1]
    code, printed = checked_python(block.text)
    done = subprocess.run([sys.executable, "-c", prelude + code], cwd=tmp_path, env=env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"{block} failed:\n{done.stderr}"
    assert matches(printed, done.stdout.splitlines()), f"{block} printed:\n{done.stdout}\nexpected:\n{printed}"


# ------------------------------------------------------------------------------- console
def console_steps(text: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"output before any command: {line!r}"
            steps[-1][1].append(line)
    return steps


@pytest.mark.parametrize("block", by("console"), ids=str)
def test_console_blocks_run_and_print_what_they_show(block: Block, tmp_path: Path) -> None:
    steps = console_steps(block.text)
    script = [HOW[block.key][1], "exec 2>&1"]
    for command, _ in steps:
        script += [command, r"printf '\036%s\036\n' $?"]
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp_path, env=env(), capture_output=True,
                          text=True, timeout=120)
    chunks = re.split(r"\x1e(\d+)\x1e\n", done.stdout)
    outputs, statuses = chunks[0:-1:2], [int(code) for code in chunks[1::2]]
    assert len(statuses) == len(steps), f"{block}: the script stopped early:\n{done.stdout}{done.stderr}"
    for (command, expected), output, status in zip(steps, outputs, statuses, strict=True):
        assert status == 0, f"{block}: `{command}` exited {status}:\n{output}"
        if expected:
            assert matches(expected, output.splitlines()), f"{block}: `{command}` printed:\n{output}"


# ------------------------------------------------------------------------------- bash
@pytest.mark.parametrize("block", by("bash"), ids=str)
def test_bash_blocks_run(block: Block, tmp_path: Path) -> None:
    (tmp_path / ".venv").symlink_to(VENV_BIN.parent)
    (tmp_path / ".cache").symlink_to(ROOT / ".cache")
    (tmp_path / "bin").symlink_to(ROOT / "bin")
    done = subprocess.run(["bash", "-e", "-c", block.text], cwd=tmp_path, env=env(), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, f"{block} failed:\n{done.stdout}\n{done.stderr}"
    assert (tmp_path / HOW[block.key][1]).exists(), f"{block} did not make {HOW[block.key][1]}"


# ------------------------------------------------------------------------------- json
def server_commands(doc: object) -> list[str]:
    servers = doc.get("mcpServers", {}) if isinstance(doc, dict) else {}
    return [entry["command"] for entry in servers.values()]


@pytest.mark.parametrize("block", by("json"), ids=str)
def test_json_blocks_parse_and_name_servers_by_absolute_path(block: Block) -> None:
    doc = json.loads(block.text)
    assert all(command.startswith("/") for command in server_commands(doc)), f"{block}: use an absolute path"


@pytest.mark.parametrize("block", by("jsonl"), ids=str)
def test_json_lines_blocks_parse(block: Block) -> None:
    assert all(json.loads(line) is not None for line in block.text.splitlines() if line.strip())


def test_claude_code_commands_use_absolute_paths() -> None:
    """``claude mcp add`` lines (in blocks and in the README's prose) start the server by an absolute path."""
    text = "\n".join((ROOT / name).read_text(encoding="utf-8") for name in FILES)
    commands = re.findall(r"claude mcp add [^`\n]*?-- (\S+)", text)
    assert commands and all(command.startswith("/") for command in commands), commands
