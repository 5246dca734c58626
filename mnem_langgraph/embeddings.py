"""A local embedding model that needs no network, no key and no torch: wordllama, for ``index=``.

``WordLlamaEmbeddings`` is a LangChain ``Embeddings`` (what LangGraph's
``IndexConfig`` takes as ``embed``) over wordllama's ``l2_supercat`` model,
whose 256-dimension weights and tokenizer ship inside the ``wordllama``
wheel (about 16 MB): a text is embedded by averaging its tokens' vectors,
some 20 µs per short text on one core.  It is far weaker than a hosted
model, and much better than nothing for an agent that must run offline.

wordllama 0.4's own ``WordLlama.load()`` looks for the tokenizer under
``wordllama/tokenizer/`` while the wheel ships it under
``wordllama/tokenizers/``, so it falls back to downloading it from Hugging
Face and fails offline; the model is therefore loaded here from the
wheel's files directly, once per process (``model``).
"""

from __future__ import annotations

import logging
from functools import cache
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from mnem_bridge import UsageError

__all__ = ["DIMS", "WordLlamaEmbeddings", "model"]

#: The width of the vectors: ``index={"dims": DIMS, "embed": WordLlamaEmbeddings()}``.
DIMS = 256
#: The model's files inside the ``wordllama`` package.
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_WEIGHTS = f"weights/l2_supercat_{DIMS}.safetensors"


@cache
def model() -> Any:
    """The wordllama model (a ``wordllama.WordLlamaInference``), loaded from the installed wheel once per process.

    Raises:
        UsageError: wordllama is not installed, or is a release whose wheel lacks the model's files (the
            message is the install that fixes it).
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama  # type: ignore[import-untyped]  # (no stubs)
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama import WordLlamaInference
    except ImportError as missing:
        from mnem_bridge.install import pip_install

        raise UsageError(f"WordLlamaEmbeddings needs wordllama, which is not installed here ({missing}): "
                         f"{pip_install('embed')}") from missing
    finally:
        # wordllama's __init__ calls logging.basicConfig(level=INFO), which would reconfigure the application's
        # root logger (a handler, and every library's INFO records printed): put it back as it was.
        root.handlers[:], root.level = handlers, level
    where = Path(wordllama.__file__).parent
    missing_files = [name for name in (_TOKENIZER, _WEIGHTS) if not (where / name).is_file()]
    if missing_files:
        raise UsageError(f"the installed wordllama ({getattr(wordllama, '__version__', 'unknown version')}) does not "
                         f"ship {', '.join(missing_files)} in its wheel: pip install 'wordllama>=0.4,<0.5'")
    tokenizer = Tokenizer.from_file(str(where / _TOKENIZER))
    with safe_open(str(where / _WEIGHTS), framework="np") as weights:
        matrix = weights.get_tensor("embedding.weight")
    return WordLlamaInference(matrix, tokenizer)


class WordLlamaEmbeddings(Embeddings):
    """wordllama's ``l2_supercat`` model (256 dimensions) as LangChain ``Embeddings``, offline.

    Vectors are unit length, so ``cosine``, ``inner_product`` and ``l2``
    rank alike.  The model is loaded on first use, once per process, and
    shared by every instance.

    Example:
        ``MnemosyneStore(path, index={"dims": 256, "embed": WordLlamaEmbeddings()})``
    """

    #: Part of the name an index stores the vectors under (``index.model_name``).
    model = f"wordllama/l2_supercat_{DIMS}"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One unit vector per text.

        Raises:
            UsageError: wordllama is not installed.
        """
        if not texts:
            return []
        vectors: list[list[float]] = model().embed(texts, norm=True).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """The query's unit vector."""
        return self.embed_documents([text])[0]
