"""Every code block in README.md and docs/*.md runs, and every ```text block is checked against the product.

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
  its output (``…`` stands for any text within a line).  A command shown
  without output must print nothing.  One that follows a ``server`` block
  (``AFTER_SERVER``: "in another terminal") runs while that block's command
  serves, started first in the same folder and waited for until it prints
  what its ``# prints:`` comment promises.
* ``bash``: the block is one bash script in a temporary folder that links
  this checkout's ``.venv``, ``.cache`` and ``bin``; it must succeed.
* ``json`` / ``jsonl``: parsed; an MCP server entry's ``command`` must be an
  absolute path (clients do not start servers from your shell).
* ``commands``: the commands run in a temporary folder that links this
  checkout's ``.venv`` and ``examples``, except the installs: those are
  checked to be .ci/run's install (which CI runs from a clean clone) without
  its test extras and ``-e``, since a fresh install takes ~40 s here.  With
  ``ci``, one of the commands must be exactly .ci/run's command, the CI
  itself, which cannot run inside the suite.
* ``server``: each command (after a setup script) starts a server that runs
  until stopped, in the background in a temporary folder, with its own port
  (the doc's, so these hold a lock that serializes the blocks with fixed
  ports).  It must answer on that port, print what a ``# prints:`` comment
  promises, answer one real request, and leave no process after SIGTERM.
  ``BROWSER`` is a stand-in that records what ``--open`` would open.
* ``claude``: the Claude Code CLI, which cannot be installed here, is a
  stand-in first on PATH that records its argv; the server entry each
  ``claude mcp add`` would add must be the one the docs' JSON shows.
* ``text``: documentation text, not code (a synopsis, URL forms, sample
  output, a protocol exchange, a proxy's config); ``TEXT_CHECKS`` names what
  is checked about each against the product.
"""

from __future__ import annotations

import ast
import fcntl
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import pytest
from manual_clock import eventually

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

INIT = "mnem init agent-memory >/dev/null"
STORE_AND_NS = (
    'from mnem_langgraph import MnemosyneStore\nstore = MnemosyneStore("agent-memory")\nns = ("customers", "acme")\n'
)

#: A console block's setup: the server block above it in its file serves while it runs (``served_by``).
AFTER_SERVER = "the server block above, in another terminal"

#: (file, first line) -> (how, detail): a prelude for python, a setup script for console and server, the
#: check for text; see the module's docstring.
HOW: dict[tuple[str, str], tuple[str, str]] = {
    ("README.md", "# Install, then run the main job: an MCP client drives mnem-mcp over stdio, remembers two"): (
        "commands", "ci"),
    ("README.md", "$ mnem init ./agent-memory && cd agent-memory"): ("console", ""),
    ("docs/remotes.md", '$ mnem init shared >/dev/null && mnem -C shared add plan "pro" >/dev/null && '
                        "mnem -C shared commit -m start >/dev/null"): ("console", ""),
    ("docs/remotes.md", '$ mnem init team >/dev/null && mnem -C team add plan "pro" >/dev/null && mnem -C team add '
                        'seats 10 >/dev/null && mnem -C team commit -m start --author ann >/dev/null'): ("console", ""),
    ("docs/remotes.md", '$ mnem init laptop >/dev/null && mnem -C laptop add plan "pro" >/dev/null && '
                        "mnem -C laptop commit -m start >/dev/null"): ("console", AFTER_SERVER),
    ("docs/remotes.md", "mnem-mcp --store ./hub --transport streamable-http --auth none --port 8731   # prints: "
                        "mnem-mcp: INFO mnem_mcp.http: listening on http://127.0.0.1:8731/mcp (no authentication)"): (
        "server", ""),
    ("README.md", '{"mcpServers": {"mnem": {"command": "/absolute/path/to/.venv/bin/mnem-mcp", "args": '
                  '["--store", "/absolute/path/to/agent-memory"]}}}'): ("json", "Claude Desktop config"),
    ("README.md", "from langmem import create_manage_memory_tool, create_search_memory_tool"): ("python", ""),
    ("README.md", "from mnem_langgraph.embeddings import WordLlamaEmbeddings"): ("python", ""),
    ("docs/langgraph.md", "from mnem_langgraph.embeddings import WordLlamaEmbeddings"): ("python", ""),
    ("docs/bridge.md", "import mnem_bridge"): ("python", ""),
    ("docs/bridge.md", "import shutil"): ("python", ""),
    ("docs/bridge.md", "from mnem_bridge import init as init_store"): ("python", ""),
    ("docs/bridge.md", "from mnem_bridge import open as open_store"): ("python", ""),
    ("docs/bridge.md", "from mnem_bridge import agents"): ("python", ""),
    ("docs/bridge.md", "$ MNEM_ECHO=1 python -c 'import mnem_bridge as m; m.agents.remember(m.open(\"agent-memory\"), "
                       "\"plan\", \"pro\")'"): ("console", "mnem init agent-memory >/dev/null"),
    ("docs/cli-json.md", "mnem write -m MESSAGE [--author A] [--time MS] [--skip-missing] [--branch NAME] "
                         "[--allow-reserved] [--file F | < stdin]"): (
        "text", "synopsis"),
    ("docs/cli-json.md", '{"put": [{"id": "plan", "content": "pro", "content_kind": "note",'): ("json", "payload"),
    ("docs/cli-json.md", "mnem stamps [REV] [--node ID]... [--prefix TEXT]..."): ("text", "synopsis"),
    ("docs/cli-json.md", "mnem redact (--node ID | --prefix P | --object HEX | --source S | --step S | --observation O "
                         "| --author A)... --reason TEXT [--by NAME] [--dry-run]"): ("text", "synopsis"),
    ("docs/cli-json.md", "mnem revert (--source S | --step S | --observation O | --author A | --commit C)... "
                         "[--dry-run] [--by NAME] [--time MS]"): ("text", "synopsis"),
    ("docs/cli-json.md", "mnem search [REV] [--namespace JSON] [--query TEXT] [--mode substring|bm25|vector|hybrid] "
                         "[--filter JSON] [--model NAME] [--vector BASE64] [--distance cosine|l2|inner_product] "
                         "[--field PATH]... [--limit N] [--offset N] [--live] [--valid-at TIME]"): ("text", "synopsis"),
    ("docs/cli-json.md", "mnem namespaces [REV] [--prefix JSON]... [--suffix JSON]... [--max-depth N] [--limit N] "
                         "[--offset N] [--live] [--valid-at TIME]"): ("text", "synopsis"),
    ("docs/cli-json.md", '{"argv": ["-C", "/path/to/store", "--json", "show", "--node", "plan"], "stdin": null}'): (
        "jsonl", "a worker request and answer"),
    ("docs/cli-json.md", '{"argv": ["-C", "/path/to/store", "--json", "write", "-m", "x"], "stdin_bytes": 42, '
                         '"framed": true}'): ("text", "framed"),
    ("docs/langgraph.md", "from langgraph.graph import StateGraph"): ("python", ""),
    ("docs/langgraph.md", "from typing import Annotated, TypedDict"): ("python", ""),
    ("docs/langgraph.md", "import operator"): ("python", ""),
    ("docs/langgraph.md", "from dataclasses import dataclass"): ("python", ""),
    ("docs/langgraph.md", "from datetime import timedelta"): ("python", ""),
    ("docs/langgraph.md", "from mnem_langgraph import MnemosyneSaver as Saver"): ("python", ""),
    ("docs/time.md", "$ mnem init crm >/dev/null && cd crm"): ("console", ""),
    ("docs/time.md", "from datetime import datetime"): ("python", ""),
    ("docs/postgres.md", "postgresql://USER@HOST:PORT/DATABASE?store=NAME"): ("text", "urls"),
    ("docs/postgres.md", "import subprocess, sys"): ("python", ""),
    ("docs/postgres.md", "no_store: no mnemosyne store named 'agent-memroy' at postgresql://agent@db.internal/memory"
                         "?store=agent-memroy; that database holds the stores agent-memory, team: if you meant one of "
                         "them, fix store= in the URL; to create this one, run `mnem init …` (or use the create "
                         "option: …)"): ("text", "no_store"),
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
        "commands", ""),
    ("docs/mcp.md", "{"): ("json", "Claude Desktop / .mcp.json config"),
    ("docs/mcp.md", "claude mcp add mnem -- /absolute/path/to/.venv/bin/mnem-mcp --store "
                    "/absolute/path/to/agent-memory"): ("claude", ""),
    ("docs/mcp.md", 'invalid_ref: blame: "ghost" is not in memory at 3fb1a6e2…'): ("text", "mcp_error"),
    ("docs/mcp.md", "bin/install-inspector     # the official Inspector CLI and a Node 22, into .cache/npm/"): (
        "bash", "agent-memory/.mnem"),
    ("docs/mcp-http.md", "# on loopback, no authentication (a trusted local process, or behind a proxy that "
                         "authenticates):"): ("server", INIT),
    ("docs/mcp-http.md", "memory.example.com {"): ("text", "caddy"),
    ("docs/mcp-http.md", "mnem-mcp --store ./agent-memory --transport streamable-http --port 8765 \\"): (
        "server", INIT),
    ("docs/mcp-http.md", 'claude mcp add --transport http mnem https://memory.example.com/mcp --header '
                         '"Authorization: Bearer $TOKEN"'): ("claude", ""),
    ("docs/mcp-http.md", "import httpx2"): ("python", ""),
    ("docs/mcp-http.md", "# 1. the development issuer, on http://127.0.0.1:9000, minting tokens for the server's "
                         "URL"): ("bash", "agent-memory/.mnem"),
    ("docs/mcp-http.md", "# the development issuer, and one mnem-mcp serving a store per token subject under "
                         "./memories"): ("bash", "memories/billing-agent/.mnem"),
    ("README.md", ".venv/bin/python examples/mcp_client.py ./support-memory && .venv/bin/mnem ui --store "
                  "./support-memory --open"): ("server", ""),
    ("docs/ui.md", "mnem ui --store ./agent-memory            # prints: mnem ui: … at http://127.0.0.1:8470/ "
                   "(read-only; Ctrl-C stops it)"): ("server", INIT),
}


def test_every_block_is_classified() -> None:
    keys = [block.key for block in BLOCKS]
    unknown = [f"{block} {block.key[1]!r}" for block in BLOCKS if block.key not in HOW]
    assert unknown == [], "add these blocks to HOW in tests/test_docs_blocks.py"
    assert [key for key in HOW if key not in keys] == [], "HOW lists blocks that no longer exist"
    assert {how for how, _ in HOW.values()} <= set(KINDS), "no block is skipped: each runs or is checked"
    for block in BLOCKS:
        how, detail = HOW[block.key]
        assert (block.lang == "text") == (how == "text"), f"{block}: only ```text blocks are text, and they are"
        assert how != "text" or detail in TEXT_CHECKS, f"{block}: no check named {detail!r}"


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
    with own_server(block, tmp_path) as cwd:
        done = subprocess.run([sys.executable, "-c", prelude + code], cwd=cwd, env=env(), capture_output=True,
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


def served_by(block: Block) -> str:
    """A setup script that starts the command of the server block above ``block`` and waits until it serves.

    It serves until the block's bash exits; "serves" is what the server
    block's ``# prints:`` promises appearing in the server's log, so the wait
    ends on the server's own word.
    """
    server = [found for found in by("server") if found.file == block.file and found.line < block.line][-1]
    command, promised = commands(server.text)[0], re.findall(r"#\s*prints:\s*(.+)", server.text)
    assert len(promised) == 1, f"{server}: the block {block} runs after needs one `# prints:` to wait for"
    said = max(promised[0].split(ELLIPSIS), key=len)
    return (f"{command} 2>.server.log & server=$!\ntrap 'kill $server; wait $server' EXIT\n"
            f"until grep -qF {shlex.quote(said)} .server.log; do kill -0 $server || exit 1; sleep 0.05; done")


@pytest.mark.parametrize("block", by("console"), ids=str)
def test_console_blocks_run_and_print_what_they_show(block: Block, tmp_path: Path) -> None:
    steps = console_steps(block.text)
    setup = served_by(block) if HOW[block.key][1] == AFTER_SERVER else HOW[block.key][1]
    script = [setup, "exec 2>&1"]
    for command, _ in steps:
        script += [command, r"printf '\036%s\036\n' $?"]
    with fixed_ports() if re.search(r"--port \d", setup) else nullcontext():
        done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp_path, env=env(), capture_output=True,
                              text=True, timeout=120)
    chunks = re.split(r"\x1e(\d+)\x1e\n", done.stdout)
    outputs, statuses = chunks[0:-1:2], [int(code) for code in chunks[1::2]]
    assert len(statuses) == len(steps), f"{block}: the script stopped early:\n{done.stdout}{done.stderr}"
    for (command, expected), output, status in zip(steps, outputs, statuses, strict=True):
        assert status == 0, f"{block}: `{command}` exited {status}:\n{output}"
        assert matches(expected, output.splitlines()), f"{block}: `{command}` printed:\n{output}"


# ------------------------------------------------------------------------------- bash
@pytest.mark.parametrize("block", by("bash"), ids=str)
def test_bash_blocks_run(block: Block, tmp_path: Path) -> None:
    with fixed_ports() if re.search(r"--port \d", block.text) else nullcontext(), own_server(block, tmp_path) as cwd:
        (cwd / ".venv").symlink_to(VENV_BIN.parent)
        (cwd / ".cache").symlink_to(ROOT / ".cache")
        (cwd / "bin").symlink_to(ROOT / "bin")
        done = subprocess.run(["bash", "-e", "-c", block.text], cwd=cwd, env=env(), capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, f"{block} failed:\n{done.stdout}\n{done.stderr}"
        assert (cwd / HOW[block.key][1]).exists(), f"{block} did not make {HOW[block.key][1]}"


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


# ------------------------------------------------------------------------------- shared
def commands(text: str) -> list[str]:
    """The commands of a shell block: continuation lines joined, comments and blank lines left out."""
    joined = re.sub(r"\\\n\s*", "", text)
    found = [re.sub(r"\s+#\s.*$", "", line).strip() for line in joined.splitlines()]
    return [line for line in found if line and not line.startswith("#")]


def checkout_like(folder: Path) -> None:
    """Let ``folder`` stand for the repository's folder: this checkout's ``.venv``, ``examples`` and ``bin``."""
    for name in (".venv", "examples", "bin"):
        (folder / name).symlink_to(VENV_BIN.parent if name == ".venv" else ROOT / name)


def doc_block(file: str, first_line: str, after: str = "") -> Block:
    """The block of ``file`` that starts with ``first_line`` (the first one after the text ``after``)."""
    text = (ROOT / file).read_text(encoding="utf-8")
    line = text[: text.index(after)].count("\n") + 1
    return next(block for block in BLOCKS if block.key == (file, first_line) and block.line > line)


def mnem(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / "mnem"), *args], cwd=cwd, env=env(), input=stdin, capture_output=True,
                          text=True, timeout=60)


# ------------------------------------------------------------------------------- commands
CI_RUN = ROOT / ".ci" / "run"


def ci_command() -> str:
    """The command .ci/run runs (its last line)."""
    return CI_RUN.read_text(encoding="utf-8").strip().splitlines()[-1]


def pip_target(part: str) -> list[str]:
    """What a ``pip install`` installs, without ``-q``, ``-e`` and extras: ``["."]`` for this checkout."""
    words = shlex.split(part)
    return [re.sub(r"\[.*\]$", "", word) for word in words[2:] if word not in ("-q", "-e")]


def is_install(part: str) -> bool:
    return part == "python3 -m venv .venv" or bool(re.fullmatch(r"(\.venv/bin/)?pip install .*", part))


@pytest.mark.parametrize("block", by("commands"), ids=str)
def test_command_blocks_run_and_install_as_ci_does(block: Block, tmp_path: Path) -> None:
    ci = ci_command()
    ci_installs = [part for part in ci.split(" && ") if is_install(part)]
    assert ci_installs[0] == "python3 -m venv .venv" and pip_target(ci_installs[1]) == ["."], ci
    shown = commands(block.text)
    if HOW[block.key][1] == "ci":
        assert ci in shown, f"{block}: .ci/run runs {ci!r}, which the block does not show"
    to_run = []
    for command in shown:
        if command == ci:
            continue  # the CI itself: .ci/run runs exactly this from a clean clone
        for part in command.split(" && "):
            if not is_install(part):
                to_run.append(part)
            elif part.startswith("python3 -m venv"):
                assert part in ci_installs, f"{block}: {part!r} is not how .ci/run makes the virtualenv"
            else:
                words = shlex.split(part)
                assert words[0] in ("pip", ".venv/bin/pip") and pip_target(part) == ["."], f"{block}: {part!r}"
    assert to_run, f"{block}: nothing to run"
    checkout_like(tmp_path)
    for part in to_run:
        done = subprocess.run(["bash", "-c", part], cwd=tmp_path, env=env(), capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, f"{block}: `{part}` exited {done.returncode}:\n{done.stdout}\n{done.stderr}"


# ------------------------------------------------------------------------------- server
FIXED_PORTS = Path(tempfile.gettempdir()) / "mnem-docs-fixed-ports.lock"
DEFAULT_PORTS = {"ui": 8470, "mnem-mcp": 8765}
#: Seconds a server block's check waits for what it waits for (an answer, the page ``--open`` opened, the
#: server's exit): each wait ends when it happens, so only a hang reaches the bound.
HANG = 60


#: Held while a block starts its own PostgreSQL (pgserver): pg_ctl gives a server 10 s to start, which two
#: initdb-and-starts at once on a loaded 2-core machine can miss.
PG_STARTS = Path(tempfile.gettempdir()) / "mnem-docs-pgserver.lock"


@contextmanager
def one_at_a_time(path: Path) -> Iterator[None]:
    """An exclusive lock across this file's workers (the blocks run on two)."""
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def fixed_ports() -> AbstractContextManager[None]:
    """Held while a block listens on a port of the doc's."""
    return one_at_a_time(FIXED_PORTS)


@contextmanager
def own_server(block: Block, tmp_path: Path) -> Iterator[Path]:
    """The folder a block runs in: ``tmp_path``, or for a block that starts its own PostgreSQL one outside it.

    pgserver, run as root, runs the server as a user of its own, which must
    traverse every folder above its data.  pytest makes its temporary root
    private again (mode 0700) whenever a pytest session starts on the
    machine, so a server started under ``tmp_path`` fails to start when
    another session (a developer's, a second checkout's) starts meanwhile.
    Such a block runs instead in a folder of its own in ``/tmp``, the shared
    fixture's choice (``pg_stores``), holding ``PG_STARTS``.
    """
    if "pgserver" not in block.text:
        yield tmp_path
        return
    with one_at_a_time(PG_STARTS), tempfile.TemporaryDirectory(prefix="mnem-docs-pg-", dir="/tmp") as folder:
        yield Path(folder)


def answers(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def port_of(command: str) -> int:
    given = re.search(r"--port (\d+)", command)
    program = "ui" if " ui " in f" {command} " else "mnem-mcp"
    return int(given[1]) if given else DEFAULT_PORTS[program]


def http(url: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Status, the ``WWW-Authenticate`` header and body of one request (no proxy: the server is local)."""
    request = urllib.request.Request(url, data=data, headers=headers or {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=HANG) as response:
            return response.status, "", response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("WWW-Authenticate", ""), exc.read().decode()


INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "docs", "version": "0"}}}).encode()


def one_request(command: str, port: int, opened: Path) -> None:
    """A real request to the server ``command`` started, and what ``--open`` opened."""
    base = f"http://127.0.0.1:{port}"
    if " ui " in f" {command} ":
        status, _, body = http(f"{base}/")
        assert status == 200 and "<html" in body.lower(), (status, body[:200])
        if "--open" in command.split():
            eventually(opened.exists, "--open ran the browser", within=HANG)
            assert opened.read_text().split() == [f"{base}/"], "--open opens the page's address"
    elif "--auth none" in command:
        status, _, body = http(f"{base}/mcp", INITIALIZE, {"Content-Type": "application/json",
                                                          "Accept": "application/json, text/event-stream"})
        assert status == 200 and '"serverInfo"' in body, (status, body[:300])
    else:  # --auth jwt: a request without a token is refused, pointing to the issuer's metadata
        status, challenge, body = http(f"{base}/mcp", INITIALIZE, {"Content-Type": "application/json",
                                                                  "Accept": "application/json, text/event-stream"})
        assert status == 401 and challenge.startswith("Bearer") and "resource_metadata=" in challenge, (
            status, challenge, body[:300])


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the command's whole process group, then make sure none of it is left."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=HANG)
    finally:
        deadline = time.monotonic() + 10
        while True:
            try:
                os.killpg(process.pid, signal.SIGKILL if time.monotonic() > deadline else 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        process.wait()


@pytest.mark.parametrize("block", by("server"), ids=str)
def test_server_blocks_serve_until_stopped(block: Block, tmp_path: Path) -> None:
    checkout_like(tmp_path)
    subprocess.run(["bash", "-e", "-c", HOW[block.key][1]], cwd=tmp_path, env=env(), check=True, timeout=60)
    browser, opened = tmp_path / "browser", tmp_path / "opened"
    browser.write_text(f'#!/bin/sh\necho "$@" > {shlex.quote(str(opened))}\n')
    browser.chmod(0o755)
    promised = re.findall(r"#\s*prints:\s*(.+)", block.text)
    with fixed_ports():
        for command in commands(block.text):
            port = port_of(command)
            assert not answers(port), f"{block}: port {port} is busy, so `{command}` cannot listen on it"
            log = tmp_path / "stderr"
            with log.open("wb") as stderr:
                process = subprocess.Popen(["bash", "-c", command], cwd=tmp_path, stdout=subprocess.DEVNULL,
                                           stderr=stderr, env={**env(), "BROWSER": str(browser)},
                                           start_new_session=True)
            try:
                deadline = time.monotonic() + HANG
                while not answers(port):
                    assert process.poll() is None, f"{block}: `{command}` ended:\n{log.read_text()}"
                    assert time.monotonic() < deadline, f"{block}: `{command}` never answered on {port}"
                    time.sleep(0.1)
                one_request(command, port, opened)
            finally:
                stop(process)
            lines = log.read_text().splitlines()
            for line in promised:
                assert any(matches([line], [got]) for got in lines), f"{block}: no line {line!r} in:\n{lines}"
            assert not answers(port), f"{block}: port {port} still answers after `{command}` was stopped"


# ------------------------------------------------------------------------------- claude
def stdio_entry(file: str, first_line: str, after: str = "") -> dict[str, object]:
    """The ``mnem`` server entry of a doc's JSON block (only what ``claude mcp add`` sets)."""
    entry = json.loads(doc_block(file, first_line, after).text)["mcpServers"]["mnem"]
    return {"command": entry["command"], "args": entry["args"]}


def audience() -> str:
    """The public URL the HTTP server blocks of docs/mcp-http.md accept tokens for."""
    found = set(re.findall(r"--audience (\S+)", doc_block(
        "docs/mcp-http.md", "mnem-mcp --store ./agent-memory --transport streamable-http --port 8765 \\").text))
    assert len(found) == 1, found
    return found.pop()


@pytest.mark.parametrize("block", by("claude"), ids=str)
def test_claude_code_commands_add_the_documented_server(block: Block, tmp_path: Path) -> None:
    stand_in, record = tmp_path / "stand-in", tmp_path / "argv.jsonl"
    stand_in.mkdir()
    (stand_in / "claude").write_text(f"#!{sys.executable}\nimport json, sys\n"
                                     f"with open({str(record)!r}, 'a') as out:\n"
                                     "    out.write(json.dumps(sys.argv[1:]) + '\\n')\n")
    (stand_in / "claude").chmod(0o755)
    token = "eyJ.token with spaces"
    done = subprocess.run(["bash", "-e", "-c", block.text], cwd=tmp_path, capture_output=True, text=True,
                          env={**env(), "PATH": f"{stand_in}{os.pathsep}{env()['PATH']}", "TOKEN": token},
                          timeout=60)
    assert done.returncode == 0, done.stderr
    calls = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(calls) == len(commands(block.text))
    for argv in calls:
        assert argv[:2] == ["mcp", "add"], argv
        if "--" in argv:  # a stdio server: the entry claude would write, in the config its scope names
            cut = argv.index("--")
            entry = {"command": argv[cut + 1], "args": argv[cut + 2:]}
            assert argv[cut - 1] == "mnem" and str(entry["command"]).startswith("/"), argv
            if argv[2:4] == ["--scope", "project"]:
                assert entry == stdio_entry("docs/mcp.md", "{", "`.mcp.json` looks like this"), argv
            else:
                assert entry == stdio_entry("README.md", '{"mcpServers": {"mnem": {"command": '
                                            '"/absolute/path/to/.venv/bin/mnem-mcp", "args": ["--store", '
                                            '"/absolute/path/to/agent-memory"]}}}'), argv
                assert all(arg.startswith("/") for arg in entry["args"][1:]), argv
        else:  # the remote server: its public URL, and the token as one header
            assert argv == ["mcp", "add", "--transport", "http", "mnem", audience(), "--header",
                            f"Authorization: Bearer {token}"], argv


# ------------------------------------------------------------------------------- text
def check_synopsis(block: Block, tmp_path: Path) -> None:
    """Every option of the synopsis, and its positional argument, are in ``mnem CMD --help``'s usage."""
    for line in block.text.splitlines():
        command = line.split()[1]
        usage = mnem(command, "--help", cwd=tmp_path).stdout.split("\n\n")[0]
        for option in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", line):
            assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", usage), f"{option} is not in:\n{usage}"
        for positional in re.findall(r"\[([A-Z]+)\]", line):
            assert f"[{positional.lower()}]" in usage, f"{positional} is not in:\n{usage}"


def check_framed(block: Block, tmp_path: Path) -> None:
    """The exchange, with a real store and a payload of the shown size, on a real ``mnem serve --stdio``."""
    request_line, stdin_line, answer_line, output_line = block.text.splitlines()
    request = json.loads(request_line)
    size = int(re.fullmatch(r"<(\d+) bytes of stdin>", stdin_line)[1])  # type: ignore[index]
    payload = b'{"put":[{"id": "plan", "content": "pro"}]}'
    assert len(payload) == size == request["stdin_bytes"]
    assert mnem("init", "store", cwd=tmp_path).returncode == 0
    request["argv"][request["argv"].index("/path/to/store")] = str(tmp_path / "store")
    done = subprocess.run([str(VENV_BIN / "mnem"), "serve", "--stdio"], input=json.dumps(request).encode() + b"\n"
                          + payload, capture_output=True, cwd=tmp_path, env=env(), timeout=60)
    header, _, rest = done.stdout.partition(b"\n")
    answer, shown = json.loads(header), json.loads(answer_line)
    assert list(answer) == list(shown) and answer["exit"] == shown["exit"] == 0, (answer, shown)
    assert answer["stderr_bytes"] == shown["stderr_bytes"] == 0 and len(rest) == answer["stdout_bytes"], done.stdout
    assert json.loads(rest)["changes"] == {"plan": "added"}
    assert re.fullmatch(r"<(\d+) bytes of stdout, then (\d+) of stderr>", output_line), output_line


def check_urls(block: Block, tmp_path: Path) -> None:
    """Each URL form is a store address whose store is the ``store=`` shown, and the socket form's host a folder."""
    from mnem_store.layout import StoreUrl
    from mnem_store.location import address

    for line in block.text.splitlines():
        url, _, note = line.partition(" ")
        parsed = address(url)
        assert isinstance(parsed, StoreUrl) and parsed.store == url.rsplit("store=", 1)[1], line
        assert "store=" not in parsed.conninfo
        if "unix socket" in note:
            assert re.search(r"[?&]host=/", parsed.conninfo), line


def check_no_store(block: Block, tmp_path: Path) -> None:
    """The message, word for word, from ``mnem`` on a real PostgreSQL database that holds the doc's two stores."""
    import pg_stores

    pg_stores.server_uri()
    database = f"memory_{os.getpid()}"
    pg_stores._server.psql(f"CREATE DATABASE {database};")
    base = re.sub(r"/postgres\?", f"/{database}?", pg_stores.server_uri(), count=1)
    for store in ("agent-memory", "team"):
        assert mnem("init", f"{base}&store={store}", cwd=tmp_path).returncode == 0
    url = f"{base}&store=agent-memroy"
    done = mnem("--json", "-C", url, "log", cwd=tmp_path)
    error = json.loads(done.stdout or done.stderr)["error"]
    shown = re.search(r"at (postgresql://\S+);", error["message"])[1]  # type: ignore[index]
    expected = block.text.strip().replace("postgresql://agent@db.internal/memory?store=agent-memroy", shown)
    assert matches([expected], [f"{error['code']}: {error['message']}"]), error


MCP_ERROR = """\
import asyncio, json, os, sys
from mcp import Client, StdioServerParameters

async def main() -> None:
    env = {name: os.environ[name] for name in ("PATH", "MNEM_BIN") if name in os.environ}
    server = StdioServerParameters(command=sys.executable, args=["-m", "mnem_mcp", "--store", "store"], env=env)
    async with Client(server) as client:
        await client.call_tool("remember", {"id": "plan", "content": "pro"})
        result = await client.call_tool("why", {"id": "ghost"})
        print(json.dumps([result.is_error, result.content[0].text]))

asyncio.run(main())
"""


def check_mcp_error(block: Block, tmp_path: Path) -> None:
    """A real ``mnem-mcp``'s answer to ``why`` of an id not in memory: the doc's text, paths and commit filled in."""
    done = subprocess.run([sys.executable, "-c", MCP_ERROR], cwd=tmp_path, env=env(), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    is_error, text = json.loads(done.stdout)
    store = str(tmp_path / "store")
    rerun = re.search(r"rerun: (\S+) -C ", text)[1]  # type: ignore[index]
    expected = block.text.strip().replace("/path/to/mnem", rerun).replace("/path/to/store", store)
    pattern = ".*?".join(map(re.escape, re.sub(r"[0-9a-f]+…", "\0", expected).split("\0")))
    assert is_error and re.fullmatch(pattern.replace(".*?", "[0-9a-f]{64}"), text), text


def check_caddy(block: Block, tmp_path: Path) -> None:
    """The proxy serves the server's public host name and forwards to where the command below it listens."""
    site, target = re.fullmatch(r"(\S+) \{\n\s+reverse_proxy (\S+)\n\}\n", block.text).groups()  # type: ignore[union-attr]
    command = commands(doc_block(
        "docs/mcp-http.md", "mnem-mcp --store ./agent-memory --transport streamable-http --port 8765 \\").text)[0]
    assert "--host" not in command and target == f"127.0.0.1:{port_of(command)}", (target, command)
    assert audience().startswith(f"https://{site}/"), site


TEXT_CHECKS: dict[str, Callable[[Block, Path], None]] = {
    "synopsis": check_synopsis, "framed": check_framed, "urls": check_urls, "no_store": check_no_store,
    "mcp_error": check_mcp_error, "caddy": check_caddy,
}
KINDS = ("python", "console", "bash", "json", "jsonl", "commands", "server", "claude", "text")


@pytest.mark.parametrize("block", by("text"), ids=str)
def test_text_blocks_say_what_the_product_does(block: Block, tmp_path: Path) -> None:
    TEXT_CHECKS[HOW[block.key][1]](block, tmp_path)
