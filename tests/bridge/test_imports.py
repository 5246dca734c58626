"""The one-way rule: ``mnem_bridge`` talks to the ``mnem`` binary and never imports the engine."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import mnem_bridge

PACKAGE = Path(mnem_bridge.__file__).parent


def _imported_modules(source: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"), filename=str(source))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__"):
            names.update(arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str))
    return names


def test_no_module_of_the_bridge_imports_mnem_store() -> None:
    sources = sorted(PACKAGE.rglob("*.py"))
    assert len(sources) >= 9
    offenders = {str(path.relative_to(PACKAGE)): sorted(n for n in _imported_modules(path)
                                                        if n.split(".")[0] == "mnem_store")
                 for path in sources}
    assert {path: names for path, names in offenders.items() if names} == {}


def test_importing_the_bridge_loads_no_engine_and_no_sh() -> None:
    code = "import sys, mnem_bridge, mnem_bridge.agents; print(sorted({'mnem_store', 'sh'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_every_module_declares_all() -> None:
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), f"{path.name} has no module docstring"
        assert any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
                   for n in tree.body), f"{path.name} has no __all__"
