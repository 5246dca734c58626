"""Checkpoint nodes an attacker plants: LangGraph's msgpack extensions that name a callable to run on load.

LangGraph's serializer stores an object as a msgpack extension naming its
module, its name and its arguments, and calls ``module.name(args)`` to read
it back.  A node whose value names ``os.mkdir`` (as harmless as it is
observable: a folder appears) shows whether loading it runs code, exactly
as one naming ``os.system`` would.  ``pickle`` is the other way a stored
value could run code, so it is planted too.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import ormsgpack

__all__ = ["calls", "checkpoint_node", "latin1", "pickled"]

#: LangGraph's extension code for ``module.name(arg)`` (``jsonplus.EXT_CONSTRUCTOR_SINGLE_ARG``).
SINGLE_ARG = 0


def calls(module: str, name: str, arg: Any) -> ormsgpack.Ext:
    """The extension LangGraph's serializer reads back by calling ``module.name(arg)``."""
    return ormsgpack.Ext(SINGLE_ARG, ormsgpack.packb([module, name, arg]))


def latin1(value: Any) -> dict[str, str]:
    """A value as ``MnemosyneSaver`` stores it: the msgpack bytes as one character per byte (``latin1``)."""
    return {"type": "msgpack", "latin1": ormsgpack.packb(value).decode("latin-1")}


def pickled(marker: Path) -> dict[str, str]:
    """A ``pickle`` value that makes ``marker`` (a folder) when unpickled, stored as the saver stores bytes."""

    class Plant:
        def __reduce__(self) -> tuple[Any, ...]:
            import os

            return os.mkdir, (str(marker),)

    return {"type": "pickle", "latin1": pickle.dumps(Plant()).decode("latin-1")}


def checkpoint_node(marker: Path, checkpoint_id: str = "x") -> dict[str, Any]:
    """A checkpoint node (``c:ID``) whose metadata, read first on load, names ``os.mkdir(marker)``."""
    checkpoint = {"v": 4, "id": checkpoint_id, "ts": "2026-01-01T00:00:00+00:00", "channel_versions": {},
                  "versions_seen": {}, "updated_channels": None}
    return {"checkpoint": latin1(checkpoint), "metadata": latin1({"step": calls("os", "mkdir", str(marker))}),
            "parent": None}
