"""The one-way rule: ``mnem_langgraph`` builds on the bridge and never imports the engine."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import mnem_langgraph

PACKAGE = Path(mnem_langgraph.__file__).parent


def imported_roots(source: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_module_imports_the_engine_or_another_adapter():
    offenders = {path.name: sorted(imported_roots(path) & {"mnem_store", "mnem_mcp"}) for path in PACKAGE.glob("*.py")}
    assert {name: roots for name, roots in offenders.items() if roots} == {}


def test_importing_it_loads_no_engine():
    code = "import sys, mnem_langgraph; print('mnem_store' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_every_module_says_what_it_is_for_and_declares_all():
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), path.name
        assert any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
                   for n in tree.body), path.name
