"""The install that brings one of the toolkit's extras, as this copy of it was installed: what a missing part names.

(And the base install itself, which the bridge names when no usable ``mnem`` is found.)

A copy installed from a package index is completed by ``pip install
'mnemosyne-toolkit[EXTRA]'``.  A copy installed from a checkout of the
repository (``pip install .``, the README's command) is on no index, so
that command would send its user looking for a distribution that does not
exist: its install is ``pip install '.[EXTRA]'``, run in the checkout.
Code that runs from the checkout itself (``pip install -e .``, or no
install at all) is completed by ``pip install -e '.[EXTRA]'``, which keeps
it editable (a plain ``.`` would replace it with a copy).

Which one is read from the folder the packages are imported from: a
checkout holds ``pyproject.toml``; an installed copy sits beside its
``.dist-info``, whose ``direct_url.json`` (PEP 610) has ``dir_info`` when
pip installed it from a local folder (``"editable": true`` with ``-e``),
and is absent for an install by name from an index.  A wheel or an archive given by path or URL is named like an
index install: pip takes the installed distribution for the name and adds
the extra's requirements.  The metadata beside the code is the one read,
not the first a search of ``sys.path`` finds (a checkout's own
``.egg-info`` in the current folder would answer for another copy).

This is the rule of the adapters' messages (mnem-mcp's, mnem_langgraph's);
``mnem_store.install`` holds it for the engine's, on the other side of the
process boundary (the engine and the bridge never import each other), and
tests/test_dependencies.py checks that the two answer alike.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

__all__ = ["DISTRIBUTION", "pip_install", "pip_install_for"]

#: The distribution the four packages ship in (pyproject.toml's name).
DISTRIBUTION = "mnemosyne-toolkit"


def pip_install_for(extra: str | None, packages: Path) -> str:
    """The command that installs ``extra`` (None: the base install) for the copy whose packages are in ``packages``."""
    if (packages / "pyproject.toml").is_file():
        editable = True
    else:
        recorded = next(packages.glob(f"{DISTRIBUTION.replace('-', '_')}-*.dist-info/direct_url.json"), None)
        try:
            source = json.loads(recorded.read_text(encoding="utf-8")) if recorded is not None else {}
        except (OSError, ValueError):
            source = {}
        folder = source.get("dir_info") if isinstance(source, dict) else None
        if not isinstance(folder, dict):
            return f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"pip install {DISTRIBUTION}"
        editable = folder.get("editable") is True
    target = f"'.[{extra}]'" if extra else "."
    return f"pip install {'-e ' if editable else ''}{target} (in the {DISTRIBUTION} checkout)"


@cache
def pip_install(extra: str | None = None) -> str:
    """The command that installs ``extra`` (None: the base install) for this copy (see the module's docstring)."""
    return pip_install_for(extra, Path(__file__).resolve().parent.parent)
