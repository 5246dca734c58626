"""The first hour (issue #13): one-liners that work on a new folder, and the loose ends around them.

* ``MnemosyneStore("agent-memory")`` creates a store that does not exist yet,
  with a log line, but refuses a file, a folder that already holds other
  files, and a path inside another store, each with a message naming the fix
  (``mnem-mcp --store`` is tested in tests/mcp/test_mcp_cli.py);
* ``mnem branch -d`` answers a result with ``--json``, and the bridge reads it;
* the MCP Inspector launcher leaves HOME alone;
* no CLI command module imports its parent package, and the bridge's
  docstrings name every module that starts a process.
"""

from __future__ import annotations

import ast
import logging
import os
import subprocess
from pathlib import Path

import pytest
from conftest import MNEM, run_mnem

import mnem_bridge
from mnem_bridge.store import creation_refused
from mnem_langgraph import MnemosyneStore

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------ a store is created on first use
def test_the_readme_one_liner_creates_the_store_with_a_log_line(tmp_path, monkeypatch, caplog) -> None:
    monkeypatch.chdir(tmp_path)
    with caplog.at_level(logging.INFO, logger="mnem_bridge.store"), MnemosyneStore("agent-memory", mnem=MNEM) as store:
        store.put(("memories", "u1"), "plan", {"tier": "pro"})
        assert store.root == tmp_path / "agent-memory"
    assert (tmp_path / "agent-memory" / ".mnem").is_dir()
    assert f"created a new store at {tmp_path / 'agent-memory'}" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mnem_bridge.store"), MnemosyneStore("agent-memory", mnem=MNEM) as again:
        assert again.get(("memories", "u1"), "plan").value == {"tier": "pro"}
    assert "created" not in caplog.text


def test_an_empty_folder_and_mnem_store_are_created_too(tmp_path, monkeypatch) -> None:
    (tmp_path / "empty").mkdir()
    with MnemosyneStore(tmp_path / "empty", mnem=MNEM) as store:
        assert store.history() == []
    assert (tmp_path / "empty" / ".mnem").is_dir()
    monkeypatch.setenv("MNEM_STORE", str(tmp_path / "from-env"))
    with MnemosyneStore(mnem=MNEM) as store:
        assert store.root == tmp_path / "from-env"


def refused(path: Path, *fragments: str) -> str:
    with pytest.raises(mnem_bridge.NoStoreError) as caught:
        MnemosyneStore(path, mnem=MNEM)
    message = str(caught.value)
    assert all(fragment in message for fragment in fragments), message
    assert caught.value.code == "no_store"
    return message


def test_a_path_that_holds_something_else_is_refused_with_the_fix(tmp_path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "setup.py").write_text("")
    refused(project, "holds files (setup.py) but no store", f"`mnem init {project}`")
    assert not (project / ".mnem").exists()

    (tmp_path / "notes.txt").write_text("x")
    refused(tmp_path / "notes.txt", "is a file, not a store")

    refused(tmp_path / "no" / "such" / "parent", f"{tmp_path / 'no' / 'such'} does not exist")
    assert not (tmp_path / "no").exists()

    refused(tmp_path / "nothing" / ".mnem", "names a .mnem folder that does not exist")


def test_a_typo_inside_another_store_is_refused_and_the_store_is_named(tmp_path) -> None:
    outer = tmp_path / "agent-memory"
    assert run_mnem("init", str(outer)).code == 0
    (outer / "sub").mkdir()
    for inside in (outer / "sub", outer / "sub" / "new", outer / "agent-memory"):
        refused(inside, f"is inside the store at {outer}", f"pass {outer}")
        assert not (inside / ".mnem").exists()
    assert creation_refused(tmp_path / "elsewhere") is None


def test_open_without_create_still_refuses_a_new_folder(tmp_path) -> None:
    with pytest.raises(mnem_bridge.NoStoreError, match="mnem init"):
        mnem_bridge.open(tmp_path / "new", client=mnem_bridge.Mnem(MNEM, mode="oneshot"))
    assert not (tmp_path / "new").exists()


# ------------------------------------------------------------------ branch --delete answers a result
def test_deleting_a_missing_branch_is_a_result_with_json_and_upstreams_error_in_text(store_with_commit) -> None:
    store = store_with_commit
    missing = run_mnem("--json", "branch", "-d", "ghost", cwd=store)
    assert (missing.code, missing.json, missing.err) == (0, {"name": "ghost", "deleted": False}, "")
    text = run_mnem("branch", "-d", "ghost", cwd=store)
    assert (text.code, text.out, text.err) == (1, "", "Error: no branch 'ghost'\n")
    assert run_mnem("branch", "side", cwd=store).code == 0
    assert run_mnem("--json", "branch", "-d", "side", cwd=store).json == {"name": "side", "deleted": True}
    current = run_mnem("--json", "branch", "-d", "main", cwd=store)
    assert current.code == 1 and current.json["error"]["code"] == "invalid_ref"


def test_the_bridge_reads_the_result_not_the_error_text(store_with_commit, tmp_path) -> None:
    """A binary whose error text differs still answers ``delete_branch`` correctly: the bridge reads ``deleted``."""
    fake = tmp_path / "mnem"
    fake.write_text(
        "#!/bin/sh\n"
        'case " $* " in *" --delete=ghost "*) echo \'{"name": "ghost", "deleted": false}\'; exit 0;; esac\n'
        f'exec {MNEM} "$@"\n'
    )
    fake.chmod(0o755)
    with mnem_bridge.open(store_with_commit, client=mnem_bridge.Mnem(str(fake), mode="oneshot")) as store:
        assert store.delete_branch("ghost") is False
        store.new_branch("side")
        assert store.delete_branch("side") is True
        with pytest.raises(mnem_bridge.InvalidRefError):
            store.delete_branch("main")


def test_no_bridge_module_matches_error_text() -> None:
    """The bridge decides on codes and results, never on an error's message (``.message ==`` / ``in .message``)."""
    offenders = []
    for path in sorted((ROOT / "mnem_bridge").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                names = [n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)]
                if "message" in names:
                    offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


@pytest.fixture
def store_with_commit(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    assert run_mnem("init", str(root)).code == 0
    assert run_mnem("add", "plan", "pro", cwd=root).code == 0
    assert run_mnem("commit", "-m", "first", cwd=root).code == 0
    return root


# ------------------------------------------------------------------ the Inspector launcher leaves HOME alone
INSPECTOR = ROOT / ".cache" / "npm" / "bin" / "mcp-inspector"


def test_the_inspector_launcher_does_not_set_home() -> None:
    script = (ROOT / "bin" / "install-inspector").read_text()
    launcher = script[script.index("<<LAUNCHER") : script.index("\nLAUNCHER\n")]
    assert "HOME=" not in launcher
    if INSPECTOR.exists():
        assert "HOME=" not in INSPECTOR.read_text()


def test_mnem_mcp_under_the_inspector_keeps_its_default_store_in_the_users_home(tmp_path) -> None:
    if not INSPECTOR.exists():
        pytest.fail(f"the MCP Inspector CLI is not installed at {INSPECTOR}: run bin/install-inspector")
    home = tmp_path / "home"
    home.mkdir()
    mnem_mcp = str(Path(MNEM).with_name("mnem-mcp"))
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    done = subprocess.run([str(INSPECTOR), "--cli", "-q", "--format", "json", "--method", "tools/list", "--", mnem_mcp],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (home / ".local" / "share" / "mnemosyne" / "default" / ".mnem").is_dir()
    assert not list((ROOT / ".cache" / "npm").glob("home/.local/share/mnemosyne"))


# ------------------------------------------------------------------ loose ends
def test_no_cli_command_imports_its_parent_package() -> None:
    """A command imports the package's modules (``..context``, ``..dispatch``), never ``mnem_store.cli`` itself."""
    offenders = []
    for path in sorted((ROOT / "mnem_store" / "cli" / "commands").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 2 and node.module is None:
                offenders.append(path.name)
            if isinstance(node, ast.ImportFrom) and node.module == "mnem_store.cli":
                offenders.append(path.name)
    assert "serve.py" not in offenders, offenders


def test_the_bridge_docstrings_name_every_module_that_starts_a_process() -> None:
    spawning = sorted(path.stem for path in (ROOT / "mnem_bridge").glob("*.py") if "Popen(" in path.read_text())
    assert spawning == ["process", "worker"]
    import mnem_bridge.process

    doc = mnem_bridge.process.__doc__ or ""
    assert "the only place" not in doc and all(f"``{name}``" in doc or name in doc for name in spawning)
    assert "the only place that spawns" not in (mnem_bridge.__doc__ or "")
