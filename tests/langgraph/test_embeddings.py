"""``WordLlamaEmbeddings``: the real wordllama model, loaded from the installed wheel with the network cut off.

What a user relies on: it loads offline (wordllama's own ``load()`` would
reach for Hugging Face), once per process; it answers unit vectors of 256
dimensions in which related texts are closer than unrelated ones; a store
with it ranks memories by meaning; it leaves the application's logging as
it was; and without wordllama it says which install fixes it.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys

import numpy as np
import pytest
from conftest import MNEM

from mnem_langgraph import MnemosyneStore
from mnem_langgraph.embeddings import DIMS, WordLlamaEmbeddings, model

pytest_plugins = ["langgraph_fixtures"]


def test_the_model_loads_offline_once_and_embeds_related_texts_closer(monkeypatch):
    def refused(*args, **kwargs):
        raise OSError("the network is cut off in this test")

    monkeypatch.setattr(socket.socket, "connect", refused)
    monkeypatch.setattr(socket, "create_connection", refused)
    model.cache_clear()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    embeddings = WordLlamaEmbeddings()
    vectors = np.array(embeddings.embed_documents(["I love eating sushi", "Japanese food such as ramen",
                                                   "the quarterly tax report"]))
    assert vectors.shape == (3, DIMS) == (3, 256)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = np.array(embeddings.embed_query("what food does she like?"))
    assert query @ vectors[0] > query @ vectors[2] and vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert model() is model()  # loaded once per process, shared by every instance
    assert (root.handlers, root.level) == (handlers, level)  # wordllama's basicConfig undone
    assert embeddings.embed_documents([]) == []


def test_a_store_ranks_memories_by_meaning_with_it(store_root):
    with MnemosyneStore(store_root, mnem=MNEM, index={"dims": DIMS, "embed": WordLlamaEmbeddings(),
                                                      "fields": ["text"]}) as store:
        store.put(("memories", "u1"), "food", {"text": "Her favourite dish is sushi"})
        store.put(("memories", "u1"), "tax", {"text": "Filed the quarterly tax report"})
        assert store.search(("memories", "u1"), query="What does she like to eat?")[0].key == "food"


def test_without_wordllama_it_names_the_embed_extra():
    code = ("import sys; sys.modules['wordllama'] = None\n"
            "from mnem_langgraph.embeddings import WordLlamaEmbeddings\n"
            "try:\n    WordLlamaEmbeddings().embed_query('x')\n"
            "except ValueError as exc:\n    print(type(exc).__name__ + ': ' + str(exc))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.startswith("UsageError: WordLlamaEmbeddings needs wordllama"), done
    assert done.stdout.strip().endswith("pip install -e '.[embed]' (in the mnemosyne-toolkit checkout)"), done


def test_a_wordllama_without_the_model_files_names_the_release_that_has_them(tmp_path):
    """A wordllama release that moved its files is refused with the install that fixes it, not a traceback."""
    fake = tmp_path / "wordllama"
    fake.mkdir()
    (fake / "__init__.py").write_text("__version__ = '9.9'\nclass WordLlamaInference: pass\n")
    code = ("from mnem_langgraph.embeddings import WordLlamaEmbeddings\n"
            "try:\n    WordLlamaEmbeddings().embed_query('x')\n"
            "except ValueError as exc:\n    print(type(exc).__name__ + ': ' + str(exc))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.stdout.startswith("UsageError: the installed wordllama (9.9) does not ship tokenizers/"), done
    assert done.stdout.strip().endswith("pip install 'wordllama>=0.4,<0.5'"), done


@pytest.mark.parametrize("texts", [["a"], ["a", "b", "c"]])
def test_one_vector_per_text(texts):
    assert len(WordLlamaEmbeddings().embed_documents(texts)) == len(texts)
