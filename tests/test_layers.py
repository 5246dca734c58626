"""The house's import rules, for all four packages and for the engine's layers.

Data flows one way: ``mnem_mcp`` / ``mnem_langgraph`` -> ``mnem_bridge`` ->
(a process boundary) -> ``mnem_store``.  Inside the engine, each layer uses
only the ones below it, read from docs/engine.md's table: the storage seam
and the backends know nothing of the repo, the porcelain or the CLI.  Beyond
that order, the two engines know nothing of each other, and the CLI and the
UI reach the store only through the porcelain (and ``Repo``, which a worker
keeps open), never through a backend module.

``mnem_ids`` is the one leaf every package may import: the node-id layout
both sides of the process boundary must spell alike (a checkpoint's nodes),
spelled nowhere else, and importing nothing of the project itself.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: package -> the other project packages it must never import.
FORBIDDEN = {
    "mnem_ids": {"mnem_store", "mnem_bridge", "mnem_mcp", "mnem_langgraph"},
    "mnem_store": {"mnem_bridge", "mnem_mcp", "mnem_langgraph"},
    "mnem_bridge": {"mnem_store", "mnem_mcp", "mnem_langgraph"},
    "mnem_mcp": {"mnem_store", "mnem_langgraph"},
    "mnem_langgraph": {"mnem_store", "mnem_mcp"},
}

#: engine module (prefix) -> lower layers (prefixes) it must still never import: what the table's order allows.
BYPASSES = {
    "mnem_store.postgres": {"mnem_store.sqlite"},
    "mnem_store.porcelain": {"mnem_store.sqlite", "mnem_store.postgres", "mnem_store.sql"},
    "mnem_store.cli": {"mnem_store.sqlite", "mnem_store.backend", "mnem_store.postgres", "mnem_store.sql"},
    "mnem_store.ui": {"mnem_store.sqlite", "mnem_store.backend", "mnem_store.postgres", "mnem_store.sql"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports, relative imports resolved to absolute names."""
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def sources(package: str) -> list[Path]:
    found = sorted((ROOT / package).rglob("*.py"))
    assert found, package
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_each_package_imports_only_what_the_one_way_rule_allows(package: str) -> None:
    offenders = {
        module_name(path): sorted(name for name in imports(path) if name.split(".")[0] in FORBIDDEN[package])
        for path in sources(package)
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def engine_layers() -> list[set[str]]:
    """docs/engine.md's layer table, bottom row first: the modules each row names (``sql/`` and its modules)."""
    lines = (ROOT / "docs" / "engine.md").read_text(encoding="utf-8").splitlines()
    rows = itertools.takewhile(lambda line: line.startswith("| "), lines[lines.index("| --- | --- | --- |") + 1:])
    layers = []
    for row in rows:
        modules, named = row.split("|")[2], set()
        for folder, inside in re.findall(r"`(\w+)/`(?: \(([^)]*)\))?", modules):  # `sql/` (`a`, `b`): its modules
            named.add(f"mnem_store.{folder}")
            named.update(f"mnem_store.{folder}.{name}" for name in re.findall(r"`(\w+)`", inside))
        top_level = re.sub(r"`\w+/`(?: \([^)]*\))?", "", modules)
        named.update(f"mnem_store.{name}" for name in re.findall(r"`(\w+)`", top_level))
        layers.append(named)
    return layers


def layer_of(name: str, layers: list[set[str]]) -> int | None:
    """The row of the module ``name`` (or of the nearest package of it the table names); None if none does."""
    parts = name.split(".")
    for length in range(len(parts), 1, -1):
        prefix = ".".join(parts[:length])
        for row, named in enumerate(layers):
            if prefix in named:
                return row
    return None


def test_each_engine_module_imports_only_its_own_layer_and_those_below() -> None:
    """The floors of docs/engine.md's table: a backend that imports ``location`` (a row above it) fails here."""
    layers = engine_layers()
    offenders = {}
    for path in sources("mnem_store"):
        mine = layer_of(module_name(path), layers)
        if mine is None:
            continue  # not in the table: test_docs_engine_names_the_modules_that_exist names it
        above = sorted({name for name in imports(path) if (theirs := layer_of(name, layers)) is not None
                        and theirs > mine})
        if above:
            offenders[module_name(path)] = above
    assert offenders == {}


def test_no_layer_takes_a_bypass_the_order_allows() -> None:
    offenders = {}
    for path in sources("mnem_store"):
        name = module_name(path)
        banned = set().union(*(rule for prefix, rule in BYPASSES.items()
                               if name == prefix or name.startswith(prefix + ".")))
        found = sorted(i for i in imports(path) if any(i == b or i.startswith(b + ".") for b in banned))
        if found:
            offenders[name] = found
    assert offenders == {}


def test_the_rules_see_relative_imports() -> None:
    """A rule that cannot see ``from ..sqlite import x`` would pass for the wrong reason."""
    names = imports(ROOT / "mnem_store" / "cli" / "commands" / "init.py")
    assert "mnem_store.porcelain" in names or "mnem_store" in names
    assert "mnem_store.sqlite" in imports(ROOT / "mnem_store" / "repo.py")


def test_command_modules_do_not_import_their_parent_package() -> None:
    """``cli/__init__`` loads the command modules; a command importing it back would be a cycle."""
    offenders = {
        module_name(path): "mnem_store.cli"
        for path in sources("mnem_store/cli/commands")
        if "mnem_store.cli" in imports(path)
    }
    assert offenders == {}


def runtime_imports(path: Path, modules: set[str]) -> set[str]:
    """The project modules ``path`` imports when it runs (imports under ``if TYPE_CHECKING:`` are for types only)."""
    here = module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    typing_only = {id(inner) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                   for inner in ast.walk(node)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                target = f"{module}.{alias.name}"
                found.add(target if target in modules else module)
    return (found & modules) - {module_name(path)}


def test_no_module_imports_itself_back_through_others() -> None:
    """No import cycles: a cycle means two modules that cannot be understood (or loaded) one without the other."""
    paths = {module_name(path): path for package in FORBIDDEN for path in sources(package)}
    graph = {name: runtime_imports(path, set(paths)) for name, path in paths.items()}
    cycles = []
    for start in graph:  # a module is on a cycle when it can reach itself
        seen, todo = set(), list(graph[start])
        while todo:
            name = todo.pop()
            if name == start:
                cycles.append(start)
                break
            if name not in seen:
                seen.add(name)
                todo.extend(graph[name])
    assert cycles == [], f"modules on an import cycle: {sorted(cycles)}"


def test_docs_engine_names_the_modules_that_exist() -> None:
    """docs/engine.md's layer table names every engine module, and only modules that exist."""
    named = set().union(*engine_layers())
    existing = {module_name(path) for path in sources("mnem_store")}
    assert named - existing == set(), "docs/engine.md names modules that do not exist"
    top = {name for name in existing if name.count(".") == 1} | {
        name for name in existing if name.count(".") == 2 and name.split(".")[1] in ("sql", "sqlite", "postgres")}
    unnamed = top - named - {"mnem_store.__main__"}
    assert unnamed == set(), "engine modules docs/engine.md's layer table does not name"


#: Where a ``Repo`` is only a handle: these modules open it, close it, name it and hand it to the porcelain.
HANDLE_ONLY = ("mnem_store/cli", "mnem_store/ui")
#: What they may read of a store (anything named ``repo``, ``_repo``, ``self.repo``...): where it is, closing it,
#: and its backend for the two questions below.
REPO_HANDLE = {"location", "close", "backend"}
#: What they may ask a backend: whether its files were replaced (the worker's ``StoreCache`` reopens the store),
#: and the shelves its one generation rule keeps true (``cli/documents``).  ``read``/``write`` (the transactions)
#: and every query are the porcelain's.
BACKEND_HANDLE = {"replaced", "kept"}


def handle_misuses(path: Path) -> list[str]:
    """Each place ``path`` reads more of a store than a handle: ``line: expression``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        owner_name = owner.id if isinstance(owner, ast.Name) else owner.attr if isinstance(owner, ast.Attribute) else ""
        if owner_name.endswith("repo") and node.attr not in REPO_HANDLE:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        if node.attr == "backend":
            above = parents.get(id(node))
            if not (isinstance(above, ast.Attribute) and above.value is node and above.attr in BACKEND_HANDLE):
                found.append(f"{node.lineno}: {ast.unparse(above if isinstance(above, ast.Attribute) else node)}")
    return found


def test_the_cli_and_the_ui_never_open_a_transaction_nor_query_a_repo() -> None:
    """docs/engine.md: the porcelain owns every transaction; the CLI and the UI parse, call one verb, and render.

    A transaction is opened by ``backend.read()`` / ``backend.write()``; a
    ``Repo``'s own queries must run inside one.  So in ``cli/`` and ``ui/`` a
    store is a handle (``REPO_HANDLE``, ``BACKEND_HANDLE``), whatever a
    variable holding it is called when it reaches the backend.
    """
    offenders = {module_name(path): found for folder in HANDLE_ONLY for path in sorted((ROOT / folder).rglob("*.py"))
                 if (found := handle_misuses(path))}
    assert offenders == {}


def test_the_rule_sees_a_transaction_however_it_is_reached(tmp_path: Path) -> None:
    """The rule above would pass for the wrong reason if it missed one of these spellings."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f(repo, ctx, store):\n    with repo.backend.read():\n        repo.commit_nodes(None)\n"
                   "    b = store.backend\n    ctx.repo.changes_of(b'')\n    ctx.repo().backend.write()\n",
                   encoding="utf-8")
    assert len(handle_misuses(bad)) == 5


#: The literals of the checkpoint node-id layout: the prefix of every node the saver writes, and the escape of a part.
LAYOUT_SPELLINGS = re.compile(r"\.checkpoint:|%3A|%25")


def test_the_checkpoint_node_id_layout_is_spelled_only_in_mnem_ids() -> None:
    """One owner for the layout (#46): the engine, the bridge and the saver all take it from ``mnem_ids``."""
    spelled = {str(path.relative_to(ROOT)): sorted({match.group() for match in LAYOUT_SPELLINGS.finditer(text)})
               for package in FORBIDDEN if package != "mnem_ids" for path in sources(package)
               if LAYOUT_SPELLINGS.search(text := path.read_text(encoding="utf-8"))}
    assert spelled == {}
    owner = "".join(path.read_text(encoding="utf-8") for path in sources("mnem_ids"))
    assert {match.group() for match in LAYOUT_SPELLINGS.finditer(owner)} == {".checkpoint:", "%3A", "%25"}


def test_docs_engine_lists_every_shelf_the_engine_keeps() -> None:
    """Every shelf (``kept.shelf(NAME, ...)``) is a row of docs/engine.md's shelf table, its one rule stated there.

    A cache kept anywhere else (a module-level dict, as ``graph``'s decoded
    commits were) is not caught here; it is read in review against the table.
    """
    lines = (ROOT / "docs" / "engine.md").read_text(encoding="utf-8").splitlines()
    rows = itertools.takewhile(lambda line: line.startswith("| "),
                               lines[lines.index("| shelf | what it keeps, by content id | at most | kept by |") + 2:])
    listed = {row.split("|")[1].strip().strip("`") for row in rows}
    taken = {match for path in sources("mnem_store")
             for match in re.findall(r"""kept\.shelf\(\s*["']([^"']+)["']""", path.read_text(encoding="utf-8"))}
    assert taken and taken - listed == set()
