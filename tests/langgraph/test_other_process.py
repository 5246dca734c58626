"""A long-lived ``MnemosyneStore`` sees what another process did to the store, in every query mode.

The store keeps one ``mnem`` worker for its life, and the engine keeps
candidates, values and vectors between its searches.  Between two searches
of the same ``MnemosyneStore`` object, a separate ``mnem`` process (run as
a user would run it) writes an item, deletes one, checks out another branch
and rebuilds the change index; each next search must answer from the store
as it now is, on both backends.
"""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pg_stores
import pytest
from conftest import BACKENDS, MNEM, new_store, run_mnem

from mnem_langgraph import MnemosyneStore
from mnem_langgraph.index import model_name

pytest_plugins = ["langgraph_fixtures"]

NS = ("memories", "u1")
WORDS = ("pizza", "tea", "cheese")


def embed(texts: list[str]) -> list[list[float]]:
    """A deterministic embedder: how often each word occurs, plus a little so no vector is zero."""
    return [[float(text.lower().count(word)) + 0.01 * n for n, word in enumerate(WORDS)] for text in texts]


INDEX = {"dims": len(WORDS), "embed": embed, "fields": ["text"]}
#: The name MnemosyneStore stores this index's vectors under (``index`` module docstring).
MODEL = f"{model_name(embed)}/{len(WORDS)}"


def mnem(folder: Path, *args: str, stdin: str | None = None) -> None:
    """One ``mnem`` invocation of its own, on the store in ``folder``."""
    result = run_mnem(*args, cwd=folder, input=stdin)
    assert result.code == 0, result.out + result.err


def write_elsewhere(folder: Path, key: str, text: str) -> None:
    """Put an item as another process would, with its vector under the store's model (so every mode ranks it)."""
    packed = base64.b64encode(struct.pack(f"<{len(WORDS)}f", *embed([text])[0])).decode()
    put = {"id": f"memories:u1:{key}", "content": {"text": text},
           "vectors": {"model": MODEL, "fields": {"text": packed}}}
    mnem(folder, "write", "-m", f"put {key}", stdin=json.dumps({"put": [put]}))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["substring", "bm25", "vector", "hybrid"])
def test_a_long_lived_store_sees_another_process_write_delete_checkout_and_reindex(tmp_path, backend, mode):
    folder = new_store(tmp_path / "memory", backend)
    with MnemosyneStore(pg_stores.address(folder), mnem=MNEM, index=INDEX, query_mode=mode) as store:

        def found() -> list[tuple[str, str]]:
            """Every key a "pizza" query finds (every item holds the word, so every mode returns them all)."""
            return sorted((item.key, item.value["text"]) for item in store.search(NS, query="pizza", limit=100))

        store.put(NS, "k1", {"text": "pizza night"})
        store.put(NS, "k2", {"text": "pizza and tea"})
        assert found() == [("k1", "pizza night"), ("k2", "pizza and tea")]
        write_elsewhere(folder, "k3", "cheese pizza")
        assert found() == [("k1", "pizza night"), ("k2", "pizza and tea"), ("k3", "cheese pizza")]
        write_elsewhere(folder, "k1", "cold pizza")  # a new value for a key the store has searched
        mnem(folder, "write", "-m", "delete k2", stdin=json.dumps({"delete": ["memories:u1:k2"]}))
        assert found() == [("k1", "cold pizza"), ("k3", "cheese pizza")]
        mnem(folder, "branch", "before", "main~3")  # the commit of k1 and k2 alone
        mnem(folder, "checkout", "before")
        assert found() == [("k1", "pizza night"), ("k2", "pizza and tea")]
        mnem(folder, "reindex")
        write_elsewhere(folder, "k4", "pizza pizza")
        assert found() == [("k1", "pizza night"), ("k2", "pizza and tea"), ("k4", "pizza pizza")]
