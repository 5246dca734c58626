"""Every import is declared, the base install is what mnem-mcp over stdio needs, and each extra names its fix.

pyproject.toml declares a small base (the engine, the bridge, mnem-mcp over
stdio: the README's first command) and one extra per optional part
(``postgres``, ``langgraph``, ``http``, ``ui``).  Four things keep that true:

* every third-party import of the four packages is declared, in the base or
  in the extra that owns the importing module (``OWNERS``), so no part works
  here only because something else happened to install its library;
* the base paths (``mnem``, the bridge, ``mnem-mcp`` over stdio) load no
  module of a distribution that only an extra brings;
* a fresh virtualenv with ``pip install .`` alone runs the README's first
  command, and there each missing part is a typed error naming its install;
* with an extra's modules hidden, each optional part fails with a typed
  error that names the install that brings the extra, never a bare
  ImportError: ``pip install -e '.[EXTRA]'`` from a checkout (this one,
  installed editable as the README says), ``pip install '.[EXTRA]'`` from a
  copy installed from a checkout, ``pip install 'mnemosyne-toolkit[EXTRA]'``
  from one installed by name from an index (``mnem_store.install`` and
  ``mnem_bridge.install``, which must answer alike).

tests/mcp/test_mcp_imports.py checks the same for mnem-mcp's HTTP modules, by name.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from importlib.metadata import PackageNotFoundError, distribution, packages_distributions, requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import mnem_bridge.install
import mnem_store.install

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = canonicalize_name(PYPROJECT["project"]["name"])
PACKAGES = ("mnem_ids", "mnem_store", "mnem_bridge", "mnem_mcp", "mnem_langgraph")

#: Which extra owns a module (first match by path prefix); every other module is the base install's.
OWNERS: tuple[tuple[str, str], ...] = (
    ("mnem_store/postgres/", "postgres"),
    ("mnem_store/similarity.py", "langgraph"),  # numpy: `mnem similar`, which only an IndexConfig's search runs
    ("mnem_store/lexical.py", "langgraph"),  # snowballstemmer: `mnem search --mode hybrid`, MnemosyneStore's hybrid
    ("mnem_store/search.py", "langgraph"),  # numpy: `mnem search --mode hybrid`'s fusion, which ranks by vectors
    ("mnem_store/ui/", "ui"),
    ("mnem_mcp/http.py", "http"),
    ("mnem_mcp/remote_sync.py", "http"),
    ("mnem_mcp/bodies.py", "http"),
    ("mnem_mcp/auth.py", "http"),
    ("mnem_mcp/dev_issuer.py", "http"),
    ("mnem_langgraph/embeddings.py", "embed"),  # wordllama: WordLlamaEmbeddings, a local model for index=
    ("mnem_langgraph/", "langgraph"),
)
#: The extras that are parts of the toolkit: what [all] installs, and what the guards name.
PARTS = ("postgres", "langgraph", "http", "ui", "embed")

#: What the base paths import: the `mnem` command, the bridge, and mnem-mcp over stdio.
BASE_PATHS = ("mnem_store.process", "mnem_bridge", "mnem_mcp", "mnem_mcp.cli", "mnem_mcp.server", "mnem_mcp.stdio")


# ------------------------------------------------------------------------------- pyproject
def requirements(extra: str | None) -> list[Requirement]:
    """The requirements pyproject lists for the base install (``None``) or one extra."""
    if extra is None:
        listed: list[str] = PYPROJECT["project"]["dependencies"]
    else:
        listed = PYPROJECT["project"]["optional-dependencies"][extra]
    return [Requirement(text) for text in listed]


@cache
def declared(extra: str | None) -> frozenset[str]:
    """Distributions (canonical names) that an install with ``extra`` declares directly, self-references expanded."""
    names: set[str] = set() if extra is None else set(declared(None))
    for req in requirements(extra):
        if canonicalize_name(req.name) == PROJECT:
            for inner in req.extras:
                names |= declared(inner)
        else:
            names.add(canonicalize_name(req.name))
    return frozenset(names)


def owner(path: str) -> str | None:
    """The extra that owns the module at ``path`` (relative to the checkout), ``None`` for the base install."""
    return next((extra for prefix, extra in OWNERS if path.startswith(prefix)), None)


def modules() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def third_party_imports(path: Path) -> set[str]:
    """Dotted names of the absolute imports in ``path`` outside the standard library and the four packages."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    ours = {*PACKAGES, "__future__"}
    return {name for name in found if name.split(".")[0] not in sys.stdlib_module_names | ours}


@cache
def distributions_of() -> dict[str, list[str]]:
    """Top-level module name -> the installed distributions that ship it (a scan of every installed one: once)."""
    return packages_distributions()


@cache
def files_of(name: str) -> frozenset[str]:
    """The files an installed distribution ships, as paths relative to site-packages."""
    return frozenset(str(file) for file in distribution(name).files or ())


def providers(module: str) -> set[str]:
    """The installed distributions (canonical names) that ship ``module``.

    A namespace package (``langgraph``) is shipped by several: the one whose
    files hold the module itself is its provider (``langgraph.store.base``
    is langgraph-checkpoint's, ``langgraph.config`` langgraph's).
    """
    top = module.split(".")[0]
    candidates = {canonicalize_name(name) for name in distributions_of().get(top, [])}
    if len(candidates) <= 1:
        return candidates
    stem = module.replace(".", "/")
    wanted = {f"{stem}.py", f"{stem}/__init__.py"}
    return {name for name in candidates
            if wanted & files_of(name)} or candidates


# ------------------------------------------------------------------------------- declared
def test_every_import_is_declared_by_the_install_that_owns_its_module() -> None:
    undeclared = []
    for path in modules():
        relative = path.relative_to(ROOT).as_posix()
        extra = owner(relative)
        allowed = declared(extra)
        for module in sorted(third_party_imports(path)):
            shipped_by = providers(module)
            if not shipped_by:
                undeclared.append(f"{relative}: {module} is not installed here, so no distribution can be checked")
            elif not shipped_by & allowed:
                undeclared.append(f"{relative}: {module} ({' or '.join(sorted(shipped_by))}) is not declared in "
                                  f"{'the base dependencies' if extra is None else f'[{extra}]'}")
    assert undeclared == [], "\n".join(undeclared)


def test_every_owner_names_real_modules_and_an_extra_that_all_and_test_install() -> None:
    paths = [path.relative_to(ROOT).as_posix() for path in modules()]
    for prefix, extra in OWNERS:
        assert any(path.startswith(prefix) for path in paths), f"OWNERS: {prefix} matches no module"
        assert extra in PARTS, f"OWNERS: {extra} is not one of the parts {PARTS}"
    assert declared("all") == frozenset().union(*(declared(part) for part in PARTS)), "[all] is every part"
    assert declared("all") | declared("langmem") <= declared("test"), "[test] installs every part and langmem"


#: The two modules that know how this copy was installed: the engine's and the adapters' (mnem_bridge's).
INSTALL_RULES = ("mnem_store/install.py", "mnem_bridge/install.py")


def test_each_guard_names_a_part_through_the_install_rule() -> None:
    """Every missing part's message asks ``pip_install(EXTRA)``: no guard spells an install of its own.

    A message naming another distribution, an unknown extra, or an index
    install to a copy that came from a checkout would send a user to the
    wrong install.
    """
    named, spelled = [], []
    for path in modules():
        relative, text = path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")
        named += [(relative, extra) for extra in re.findall(r"pip_install\(['\"](\w+)['\"]\)", text)]
        if relative not in INSTALL_RULES and re.search(r"pip install (-e )?['\"]?(\.|mnemosyne)", text):
            spelled.append(relative)
    assert {extra for _, extra in named} == set(PARTS), named
    assert spelled == [], "name the install with pip_install(EXTRA) from mnem_store.install or mnem_bridge.install"
    for rule in (mnem_store.install, mnem_bridge.install):
        assert canonicalize_name(rule.DISTRIBUTION) == PROJECT


def installed_like(folder: Path, how: str) -> Path:
    """A folder of packages as ``how`` leaves it: a checkout, or site-packages after pip installed the project."""
    folder.mkdir()
    if how == "checkout":
        shutil.copy2(ROOT / "pyproject.toml", folder / "pyproject.toml")
        return folder
    info = folder / "mnemosyne_toolkit-0.1.0.dist-info"
    info.mkdir()
    recorded = {"from a checkout": {"url": "file:///src/toolkit", "dir_info": {}},
                "from a checkout, editable": {"url": "file:///src/toolkit", "dir_info": {"editable": True}},
                "from a wheel file": {"url": "file:///w/mnemosyne_toolkit-0.1.0-py3-none-any.whl",
                                      "archive_info": {}},
                "from git": {"url": "https://example.com/toolkit.git", "vcs_info": {"vcs": "git", "commit_id": "0"}},
                "damaged": "{not json"}
    if how in recorded:
        value = recorded[how]
        (info / "direct_url.json").write_text(value if isinstance(value, str) else json.dumps(value))
    return folder


@pytest.mark.parametrize(("how", "extra", "base"), [
    ("checkout", "pip install -e '.[ui]' (in the mnemosyne-toolkit checkout)",
     "pip install -e . (in the mnemosyne-toolkit checkout)"),
    ("from a checkout", "pip install '.[ui]' (in the mnemosyne-toolkit checkout)",
     "pip install . (in the mnemosyne-toolkit checkout)"),
    ("from a checkout, editable", "pip install -e '.[ui]' (in the mnemosyne-toolkit checkout)",
     "pip install -e . (in the mnemosyne-toolkit checkout)"),
    ("from an index", "pip install 'mnemosyne-toolkit[ui]'", "pip install mnemosyne-toolkit"),
    ("from a wheel file", "pip install 'mnemosyne-toolkit[ui]'", "pip install mnemosyne-toolkit"),
    ("from git", "pip install 'mnemosyne-toolkit[ui]'", "pip install mnemosyne-toolkit"),
    ("damaged", "pip install 'mnemosyne-toolkit[ui]'", "pip install mnemosyne-toolkit"),
])
def test_the_engine_and_the_adapters_name_the_same_install(tmp_path: Path, how: str, extra: str, base: str) -> None:
    """The two rules answer alike for every way pip leaves a copy (PEP 610's ``direct_url.json``), extra or not."""
    folder = installed_like(tmp_path / "packages", how)
    for rule in (mnem_store.install, mnem_bridge.install):
        assert (rule.pip_install_for("ui", folder), rule.pip_install_for(None, folder)) == (extra, base)


#: What a missing part names in this checkout, which the suite runs from (the README's `pip install -e ".[test]"`).
FROM_THIS_CHECKOUT = "pip install -e '.[{}]' (in the mnemosyne-toolkit checkout)"


# ------------------------------------------------------------------------------- base paths
def install_closure(extra: str | None) -> frozenset[str]:
    """Every distribution an install of the project with ``extra`` brings (markers evaluated for this platform)."""
    expanded: set[str] = set()
    for req in [*requirements(None), *(requirements(extra) if extra else [])]:
        if canonicalize_name(req.name) == PROJECT:
            for inner in req.extras:
                expanded |= install_closure(inner)
            continue
        expanded |= closure_with_extras(canonicalize_name(req.name), frozenset(req.extras))
    return frozenset(expanded)


@cache
def closure_with_extras(name: str, extras: frozenset[str]) -> frozenset[str]:
    """``name`` installed with ``extras``, and everything it requires, as installed here."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(name, extras)]
    while todo:
        current, wanted = todo.pop()
        if (current, wanted) in seen:
            continue
        seen.add((current, wanted))
        try:
            listed = requires(current) or []
        except PackageNotFoundError:
            continue  # a requirement for another platform (pywin32), not installed here
        for text in listed:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": extra}) for extra in {"", *wanted}):
                todo.append((canonicalize_name(req.name), frozenset(req.extras)))
    return frozenset(current for current, _ in seen)


def test_the_base_paths_load_no_module_that_only_an_extra_installs() -> None:
    """Importing `mnem`, the bridge and mnem-mcp's stdio server must not need (nor pay for) any extra."""
    base = install_closure(None)
    extras = PYPROJECT["project"]["optional-dependencies"]
    # What the extras name themselves: their own dependencies may be imported opportunistically by the base's
    # libraries when present (anyio tries sniffio), which the fresh install below shows to be harmless.
    only_optional = frozenset().union(*(declared(extra) for extra in extras)) - base
    assert {"psycopg", "numpy", "langgraph", "langchain-core"} <= only_optional, sorted(only_optional)
    code = f"import sys, {', '.join(BASE_PATHS)}; print('\\n'.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    tops = distributions_of()
    loaded = {f"{top} ({name})" for top in done.stdout.split()
              for name in tops.get(top, []) if canonicalize_name(name) in only_optional}
    assert loaded == set(), f"the base paths import what only an extra installs: {sorted(loaded)}"


# ------------------------------------------------------------------------------- guards
MISSING_PART_CASES = {
    "postgres": (("psycopg", "psycopg_pool"),
                 "from mnem_store.process import main; sys.exit(main(['--json', 'init', "
                 "'postgresql://agent@127.0.0.1:1/memory?store=team']))"),
    "similar": (("numpy",),
                "from mnem_store.process import main; sys.exit(main(['-C', sys.argv[1], '--json', 'similar', "
                "'--model', 'm', '--vector', 'AAAAAA==']))"),
    "ui": (("starlette", "uvicorn"),
           "from mnem_store.process import main; sys.exit(main(['--json', 'ui', '--store', sys.argv[1], "
           "'--port', '0']))"),
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("deps") / "agent-memory"
    subprocess.run([sys.executable, "-c", "import sys; from mnem_store.process import main; sys.exit(main())",
                    "init", str(where)], check=True, capture_output=True, timeout=60)
    return where


def hidden(modules: tuple[str, ...], code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a new interpreter where ``modules`` cannot be imported, as if their extra were missing."""
    prelude = f"import sys; sys.modules.update(dict.fromkeys({list(modules)!r})); "
    return subprocess.run([sys.executable, "-c", prelude + code, *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("case", sorted(MISSING_PART_CASES))
def test_mnem_names_the_extra_of_a_missing_part_in_a_usage_error(case: str, store: Path) -> None:
    modules, code = MISSING_PART_CASES[case]
    extra = {"similar": "langgraph"}.get(case, case)
    done = hidden(modules, code, str(store))
    error = json.loads(done.stdout)["error"]
    assert (done.returncode, error["code"]) == (2, "usage"), done
    assert error["message"].endswith(f": {FROM_THIS_CHECKOUT.format(extra)}"), error


def test_mnem_mcp_over_http_names_the_http_extra_before_starting() -> None:
    done = hidden(("uvicorn",), "from mnem_mcp.cli import main; sys.exit(main(sys.argv[1:]))",
                  "--transport", "http", "--auth", "none", "--store", "/nonexistent/agent-memory")
    assert done.returncode == 2, done
    assert done.stderr.strip().splitlines()[-1] == (
        f"mnem-mcp: error: --transport streamable-http needs uvicorn, not installed here: "
        f"{FROM_THIS_CHECKOUT.format('http')}"), done.stderr


def test_the_dev_issuer_names_the_http_extra_as_a_message_not_a_traceback() -> None:
    done = hidden(("jwt",), "import runpy; runpy.run_module('mnem_mcp.dev_issuer', run_name='__main__')")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done
    assert done.stderr.strip().endswith(FROM_THIS_CHECKOUT.format("http")), done.stderr


def test_importing_mnem_langgraph_without_langgraph_names_the_extra() -> None:
    done = hidden(("langgraph",), "import mnem_langgraph")
    assert done.returncode == 1, done
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: mnem_langgraph needs LangGraph"), last
    assert last.endswith(FROM_THIS_CHECKOUT.format("langgraph")), last


# ------------------------------------------------------------------------------- a fresh base install
def test_a_fresh_base_install_runs_the_readme_command_and_names_the_missing_extras(tmp_path: Path) -> None:
    """`pip install .` alone (the README's first command) in a new virtualenv: no extra, and enough for mnem-mcp.

    The checkout is copied first, so that pip's build writes nothing into the working tree.
    """
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source / package, ignore=ignore)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python, mnem = venv / "bin" / "python", venv / "bin" / "mnem"
    installing = subprocess.run([str(python), "-m", "pip", "install", "-q", str(source)], timeout=600,
                                capture_output=True, text=True)
    assert installing.returncode == 0, installing.stderr
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], check=True, timeout=120,
                            capture_output=True, text=True)
    installed = {canonicalize_name(entry["name"]) for entry in json.loads(listed.stdout)}
    assert installed & {"psycopg", "psycopg-pool", "numpy", "langgraph", "langchain-core"} == set(), installed

    env = {key: value for key, value in os.environ.items() if key not in ("MNEM_BIN", "VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([str(python), str(ROOT / "examples" / "mcp_client.py")], cwd=work, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and "All answers checked." in done.stdout, done

    def error_of(*argv: str) -> dict[str, str]:
        ran = subprocess.run([str(mnem), "--json", *argv], cwd=work, env=env, capture_output=True, text=True,
                             timeout=60)
        assert ran.returncode == 2, ran
        answer: dict[str, str] = json.loads(ran.stdout)["error"]
        assert answer["code"] == "usage", answer
        return answer

    def named(install: str, base: str) -> None:
        """The engine and an adapter name ``install`` (a format of the extra), the bridge ``base``."""
        assert error_of("init", "postgresql://agent@127.0.0.1:1/memory?store=team")["message"].endswith(
            f": {install.format('postgres')}")
        assert error_of("-C", "agent-memory", "similar", "--model", "m", "--vector", "AAAAAA==")["message"].endswith(
            f": {install.format('langgraph')}")
        imported = subprocess.run([str(python), "-c", "import mnem_langgraph"], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=60)
        assert imported.stderr.strip().splitlines()[-1].endswith(install.format("langgraph")), imported
        fix = subprocess.run([str(python), "-c", "from mnem_bridge.binary import FIX; print(FIX)"], cwd=work, env=env,
                             capture_output=True, text=True, timeout=60, check=True)
        assert f"install this project so its `mnem` is used: {base}; or set MNEM_BIN" in fix.stdout, fix

    subprocess.run([str(mnem), "init", "agent-memory"], cwd=work, env=env, check=True, capture_output=True, timeout=60)
    # `pip install .` from a checkout: on no index
    named("pip install '.[{}]' (in the mnemosyne-toolkit checkout)",
          "pip install . (in the mnemosyne-toolkit checkout)")
    # The same copy installed by name from an index (a folder of wheels standing for one): the index's name.
    wheels = tmp_path / "wheels"
    subprocess.run([str(python), "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(source)],
                   check=True, timeout=600, capture_output=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(wheels),
                    "--force-reinstall", "--no-deps", "mnemosyne-toolkit"], check=True, timeout=600,
                   capture_output=True)
    named("pip install 'mnemosyne-toolkit[{}]'", "pip install mnemosyne-toolkit")
