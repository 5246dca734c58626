"""Security properties of the whole toolkit: no shell, inert echo lines, owner-only files, no path from input.

1. No shell anywhere: the four packages never spell a shell-running call, and
   every process the bridge starts gets a list argv headed by the resolved
   binary, with caller values after ``--`` or inside ``--option=value``.
2. A printed command (the MCP server's ``rerun:`` line) stays inert when a
   hostile id is pasted back into a shell; the bridge's own lines are in
   tests/bridge/test_echo.py.
3. Everything created under ``.mnem/``, and every folder ``init`` makes on the
   way to a store, is owner-only even under ``umask 000``: by ``init``, by
   writes (SQLite's WAL and shared-memory files included), by a branch
   switch (HEAD is rewritten through a temporary file), by the MCP
   server's default store and by ``MnemosyneStore``; ``mnem export -o`` too.
4. No tool argument and no LangGraph key or namespace reaches a path on disk.
   The store's own path is the one path by design: ``build_server(store)``,
   ``mnem-mcp --store`` or ``$MNEM_STORE`` is chosen by whoever starts the
   server (or constructs ``MnemosyneStore``), never by the model, and no tool
   parameter names a path.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from bridge.support import paste
from conftest import MNEM, run_mnem, store_meta
from mcp_support import connect

import mnem_bridge
from mnem_bridge import agents
from mnem_bridge.worker import WorkerRunner
from mnem_langgraph import MnemosyneStore

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("mnem_ids", "mnem_store", "mnem_bridge", "mnem_mcp", "mnem_langgraph")

#: Calls that run a command line through a shell.
SHELL_CALLS = frozenset({
    "os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput", "asyncio.create_subprocess_shell",
})

#: Values a caller (or a model) might send, each one dangerous if it reached a shell or an option parser.
HOSTILE = ("-rf", "--help", "--json", "-C/etc", "--", "-", "$(touch pwned)", "`touch pwned2`",
           "'; touch pwned3 #", "a\nb", "--delete=main")


# ---------------------------------------------------------------------------------------------- 1. no shell
def shell_uses(source: str, filename: str) -> list[str]:
    """Every place ``source`` runs a shell: a ``SHELL_CALLS`` name (however imported) or ``shell=`` not ``False``.

    Args:
        source: Python source.
        filename: For the report.

    Returns:
        ``file:line: what`` for each finding.
    """
    tree = ast.parse(source, filename)
    names: dict[str, str] = {}  # local name -> the dotted name it stands for
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.partition(".")[0]] = alias.name if alias.asname else \
                    alias.name.partition(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                if f"{node.module}.{alias.name}" in SHELL_CALLS:
                    found.append(f"{filename}:{node.lineno}: imports {node.module}.{alias.name}")

    def dotted(node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return names.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = dotted(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Name | ast.Attribute) and dotted(node) in SHELL_CALLS:
            found.append(f"{filename}:{node.lineno}: {dotted(node)}")
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                literal_false = isinstance(keyword.value, ast.Constant) and keyword.value.value is False
                if keyword.arg == "shell" and not literal_false:
                    found.append(f"{filename}:{node.lineno}: shell={ast.unparse(keyword.value)}")
    return found


def test_the_shell_finder_finds_every_spelling() -> None:
    """The static check below can fail: each forbidden spelling is reported."""
    source = textwrap.dedent("""
        import os, subprocess as sp, asyncio
        from os import popen as p
        from subprocess import getoutput
        os.system("x"); p("x"); sp.getstatusoutput("x"); getoutput("x")
        asyncio.create_subprocess_shell("x")
        sp.run("x", shell=True); sp.Popen(["x"], shell=flag); sp.run(["x"], shell=False)
    """)
    assert sorted(finding.split(": ", 1)[1] for finding in shell_uses(source, "t.py")) == sorted([
        "imports os.popen", "imports subprocess.getoutput", "os.system", "os.popen", "subprocess.getstatusoutput",
        "subprocess.getoutput", "asyncio.create_subprocess_shell", "shell=True", "shell=flag",
    ])


def test_no_package_runs_a_shell() -> None:
    files = sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))
    assert len(files) > 40  # the walk really covered the packages
    findings = [f for path in files for f in shell_uses(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert findings == []


#: The argvs the bridge sends whole: the contract check and the worker's start.
FIXED = (["--version", "--json"], ["serve", "--stdio"])


def _misplaced(argv: list[str]) -> list[str]:
    """The elements of ``argv`` where a hostile value sits where an option parser would read it.

    After the bridge's fixed head (``-C ROOT --json SUBCOMMAND``) and before
    the ``--`` that ends options, a hostile value may only appear after the
    first ``=`` of a ``--option=value`` element; after ``--``, anywhere.
    """
    if argv[1:] in FIXED:
        return []
    head, rest = argv[1:5], argv[5:]
    wrong = [] if head[0] == "-C" and head[2] == "--json" and head[3].isalpha() else head
    end = rest.index("--") if "--" in rest else len(rest)
    for arg in rest[:end]:
        for value in HOSTILE:
            if value in ("--", "-"):
                continue  # too short to tell apart from the flags themselves; their placement shows in the others
            if value in arg and not (arg.startswith("--") and value in arg.partition("=")[2]):
                wrong.append(arg)
    return wrong


@pytest.mark.parametrize("mode", ["oneshot", "worker"])
def test_every_spawn_is_an_argv_headed_by_the_resolved_binary(mode: str, tmp_path: Path, mocker: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    popen = mocker.spy(subprocess, "Popen")
    requests = mocker.spy(WorkerRunner, "run")
    client = mnem_bridge.Mnem(MNEM, mode=mode)
    with client, mnem_bridge.init(tmp_path / "store", client=client) as store:
        for value in HOSTILE:
            store.add(value, {"v": value}, provenance=mnem_bridge.Provenance(source=value, note=value))
        store.commit(HOSTILE[0], author=HOSTILE[1])
        agents.remember_many(store, [{"id": value, "content": value, "step": value} for value in HOSTILE])
        for value in HOSTILE:
            assert store.working_node(value).content == value  # the binary read each value as a value
            assert store.blame(value).node.provenance.agent_step == value
            for attempt in (partial(store.new_branch, value), partial(store.merge, value),
                            partial(store.resolve, value), partial(store.state_at, value)):
                # Most are not valid names or revisions; the point is the argv.
                with contextlib.suppress(mnem_bridge.MnemError):
                    attempt()
        assert "-rf" in dict(store.branches())  # a branch literally named -rf, not a flag
        store.checkout("-rf")
        store.checkout("main")
        assert set(store.node_times(HOSTILE)) == set(HOSTILE)  # as --node=VALUE options
    assert popen.call_count >= (1 if mode == "worker" else 6 * len(HOSTILE))
    for call in popen.call_args_list:
        argv = call.args[0]
        assert isinstance(argv, list) and all(isinstance(arg, str) for arg in argv), argv
        assert argv[0] == client.path and os.path.isabs(argv[0]), argv
        assert call.kwargs.get("shell", False) is False
        assert _misplaced(argv) == [], argv
    if mode == "worker":
        assert {tuple(call.args[0][1:]) for call in popen.call_args_list} >= {("serve", "--stdio")}
        assert requests.call_count > 6 * len(HOSTILE)
        for call in requests.call_args_list:  # each request's argv is what a one-shot spawn would get
            argv = call.args[1]
            assert argv[0] == client.path and _misplaced(list(argv)) == [], argv
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]  # no shell ever ran `touch pwned`


# ---------------------------------------------------------------------------------------------- 2. inert rerun lines
@pytest.mark.anyio
@pytest.mark.parametrize("hostile", ["$(touch pwned)", "`touch pwned2`", "'; touch pwned3 #", "a\nb"])
async def test_the_mcp_rerun_line_with_a_hostile_id_is_inert(hostile: str, store: Path, tmp_path: Path) -> None:
    """What a client is told to rerun does, pasted into bash, exactly what failed: nothing more."""
    async with connect("in-process", pg_stores.address(store)) as client:
        result = await client.call_tool("why", {"id": hostile})
    text = result.content[0].text
    message, _, rerun = text.partition("\nrerun: ")
    assert result.is_error and message.startswith("invalid_ref: ") and rerun
    doc = paste(rerun, tmp_path, status=1)
    # the server shows the contract's detail: the message without its Display prefix, which repeats the code
    assert doc["error"]["code"] == "invalid_ref" and doc["error"]["message"] == f"invalid ref: {message[13:]}"
    assert doc["error"]["detail"] == message[13:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]


# ---------------------------------------------------------------------------------------------- 3. owner-only files
#: Run with umask 000: make stores every way a user can, and list every entry under each .mnem while
#: mnem processes still hold them open (the WAL and shared-memory files exist only then) and afterwards.
UMASK_DRIVER = """
import asyncio, json, os, stat, subprocess, sys
from pathlib import Path
import mnem_bridge
from mnem_bridge import agents
from mnem_langgraph import MnemosyneStore
from mcp_support import call, connect

top, mnem = Path(sys.argv[1]), sys.argv[2]
here, data = top / "stores", top / "data"
seen = []

def look():
    for mnem_dir in top.rglob(".mnem"):
        for entry in [mnem_dir, *mnem_dir.rglob("*")]:
            seen.append((str(entry.relative_to(top)), stat.S_IMODE(entry.lstat().st_mode)))

for mode in ("worker", "oneshot"):
    with mnem_bridge.Mnem(mnem, mode=mode) as client:
        with mnem_bridge.init(here / f"bridge-{mode}", client=client) as store:
            agents.remember(store, "plan", "pro")
            store.new_branch("other")
            store.checkout("other")  # HEAD moves (a row of the database: no file of its own to leave behind)
            agents.remember(store, "plan", "enterprise")
            look()

mnem_bridge.init(here / "langgraph", client=mnem_bridge.Mnem(mnem, mode="oneshot")).close()
with MnemosyneStore(here / "langgraph", mnem=mnem) as lg:
    lg.put(("facts",), "plan", {"tier": "pro"})
    lg.branch("other"); lg.switch("other")
    lg.put(("facts",), "plan", {"tier": "enterprise"})
    look()

async def default_store():
    async with connect("stdio", None, env={"XDG_DATA_HOME": str(data)}) as client:
        await call(client, "remember", id="plan", content="pro")
        look()

asyncio.run(default_store())
subprocess.run([mnem, "-C", str(here / "langgraph"), "export", "-o", str(here / "export.json")], check=True,
               capture_output=True)
umask = os.umask(0)
folders = {str(d.relative_to(top)): stat.S_IMODE(d.stat().st_mode)
           for d in top.rglob("*") if d.is_dir() and ".mnem" not in d.parts}
print(json.dumps({"seen": seen, "folders": folders, "export": stat.S_IMODE((here / "export.json").stat().st_mode),
                  "umask": umask}))
"""


def test_everything_under_mnem_is_owner_only_even_with_umask_000(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "mcp"), str(ROOT / "tests")])}
    done = subprocess.run([sys.executable, "-c", UMASK_DRIVER, str(tmp_path), MNEM], umask=0o000, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [(path, oct(mode)) for path, mode in result["seen"] if mode & 0o077] == []
    by_store: dict[str, set[str]] = {}
    for path, _ in result["seen"]:
        store, _, rest = path.partition("/.mnem")
        by_store.setdefault(store, set()).add(rest.lstrip("/") or ".mnem")
    at_rest = {".mnem", "store.sqlite3"}  # HEAD and config are rows of the database
    held_open = at_rest | {"store.sqlite3-wal", "store.sqlite3-shm"}  # seen while a worker has the store open
    assert by_store == {"stores/bridge-worker": held_open, "stores/bridge-oneshot": at_rest,
                        "stores/langgraph": held_open, "data/mnemosyne/default": held_open}
    assert oct(result["export"]) == oct(0o600)  # the whole memory, as a file
    # the folders init made on the way to a store (the MCP default store's under XDG_DATA_HOME among them)
    assert {path: oct(mode) for path, mode in result["folders"].items()} == {
        path: oct(0o700) for path in ("stores", "stores/bridge-worker", "stores/bridge-oneshot", "stores/langgraph",
                                      "data", "data/mnemosyne", "data/mnemosyne/default")}
    assert result["umask"] == 0  # so every mode above is the code's choice, not the umask's


# ---------------------------------------------------------------------------------------------- 4. no path from input
PATHLIKE = ("../../escape", "..", ".mnem/store.sqlite3", "~/x", "./x/../../y", "/tmp/abs")


@pytest.fixture
def jail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """A store two levels down in ``tmp_path``, the working directory and ``HOME`` inside ``tmp_path`` too.

    So a relative value resolved anywhere (``../../escape``, ``~/x``)
    would land inside the tree the test lists.  Yields ``(tmp_path, store root)``.
    """
    root = tmp_path / "a" / "b" / "store"
    assert run_mnem("init", str(root)).code == 0
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(root)
    yield tmp_path, root


#: What SQLite creates and removes beside the database as connections come and go.
TRANSIENT = frozenset({"store.sqlite3-wal", "store.sqlite3-shm", "store.sqlite3-journal"})


def _listing(top: Path, store: Path) -> dict[str, str | None]:
    """Every path under ``top`` (but SQLite's transient files), with HEAD's and config's text.

    A value that became a path would show as a new entry, or, aimed at the
    store's own HEAD or config (rows of its database's ``meta`` table), as
    changed text there.
    """
    listing: dict[str, str | None] = {}
    for path in top.rglob("*"):
        if path.parent == store / ".mnem" and path.name in TRANSIENT:
            continue
        listing[str(path.relative_to(top))] = None
    for key in ("head", "config"):
        listing[f"<meta row {key}>"] = store_meta(store, key)
    return listing


def _pathlike(top: Path) -> tuple[str, ...]:
    return (*PATHLIKE, str(top / "abs"), str(top / "a" / "b" / "store" / ".mnem" / "HEAD"))


#: One call per tool with every string argument set to ``h``.
TOOL_ARGUMENTS: dict[str, Callable[[str], dict[str, Any]]] = {
    "forget": lambda h: {"id": h, "summary": h},  # first, so the node the others write stays
    "remember": lambda h: {"id": h, "content": h, "source": h, "step": h, "observation": h, "tool_call": h,
                           "note": h, "summary": h},
    "revise": lambda h: {"id": h, "content": {h: h}, "source": h, "note": h, "summary": h},
    "remember_many": lambda h: {"items": [{"id": h, "content": h, "source": h, "step": h, "observation": h,
                                           "tool_call": h, "note": h}], "summary": h},
    "recall": lambda h: {"id": h},
    "recall_at": lambda h: {"commit": h, "id": h},
    "history": lambda h: {},
    "why": lambda h: {"id": h, "at": h},
    "when_did": lambda h: {"id": h, "equals": h, "good": h},
    "whats_new": lambda h: {"commit": h},
    "branch": lambda h: {"name": h, "start": h},
    "switch": lambda h: {"target": h},
    "merge": lambda h: {"theirs": h, "resolutions": {h: "ours"}, "summary": h},
    "revert": lambda h: {"source": h, "step": h, "observation": h, "author": h, "commit": h, "dry_run": True},
}

CODES = ("not_found", "invalid_ref", "conflict", "corrupt_store", "format_version", "store_exists", "no_store",
         "store_io", "busy", "usage")


@pytest.mark.anyio
async def test_no_tool_argument_reaches_a_path(jail: tuple[Path, Path]) -> None:
    top, store = jail
    before, outside = _listing(top, store), os.path.lexists("/tmp/abs")
    async with connect("in-process", store, tools="all") as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == set(TOOL_ARGUMENTS)
        for value in _pathlike(top):
            for tool, arguments in TOOL_ARGUMENTS.items():
                result = await client.call_tool(tool, arguments(value))
                if result.is_error:  # refused with a code, never a crash
                    assert result.content[0].text.split(":", 1)[0] in CODES, (tool, value, result.content[0].text)
        memory = (await client.call_tool("recall", {})).structured_content
    assert set(memory) == set(_pathlike(top))  # each value was stored as a node id, and nothing else
    assert _listing(top, store) == before
    assert os.path.lexists("/tmp/abs") == outside


def test_no_langgraph_key_or_namespace_reaches_a_path(jail: tuple[Path, Path]) -> None:
    top, store = jail
    before, outside = _listing(top, store), os.path.lexists("/tmp/abs")
    with MnemosyneStore(store, mnem=MNEM) as lg:
        for value in _pathlike(top):
            lg.put(("facts",), value, {"v": value})
            assert lg.get(("facts",), value).value == {"v": value}
            calls: list[Callable[[], Any]] = [
                partial(lg.put, (value,), value, {"v": value}),
                partial(lg.put, ("facts", value), "k", {"v": value}),
                partial(lg.get, (value,), value),
                partial(lg.search, (value,)),
                partial(lg.list_namespaces, prefix=(value,)),
                partial(lg.why, ("facts",), value),
                partial(lg.branch, value),
                partial(lg.switch, value),
                partial(lg.merge, value),
                partial(lg.at, value),
                partial(lg.delete, (value,), value),
            ]
            for step in calls:
                # Refused (InvalidNamespaceError is a ValueError).
                with contextlib.suppress(mnem_bridge.MnemError, ValueError):
                    step()
            lg.delete(("facts",), value)
            assert lg.get(("facts",), value) is None
    assert _listing(top, store) == before
    assert os.path.lexists("/tmp/abs") == outside
