"""A deterministic stand-in for an embedding model, and the index config for it, for the ported vector tests.

LangGraph's store tests embed text with a toy model: every character gets a
fixed random direction, and a text is the normalised mix of its characters'
directions, weighted by how often each occurs.  Texts sharing characters
point the same way, so a query finds the values that spell like it; the
same text always gives the same vector.  This is that model, restated: here
a character's direction is drawn from a generator seeded by the character
itself, so a vector does not depend on which texts were embedded before it.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings

__all__ = ["DIMS", "CharacterEmbeddings", "cosine", "index_config", "pg_index", "similarity", "sqlite_index"]

#: The dimension every upstream store test uses.
DIMS = 500


class CharacterEmbeddings(Embeddings):
    """Character-frequency embeddings through fixed random projections.

    Args:
        dims: The length of every vector.
        seed: Picks the family of directions; equal seeds give equal vectors.
    """

    def __init__(self, dims: int = DIMS, seed: int = 42) -> None:
        self.dims = dims
        self.seed = seed
        self._directions: dict[str, list[float]] = {}

    def _direction(self, char: str) -> list[float]:
        found = self._directions.get(char)
        if found is None:
            rng = random.Random(f"{self.seed}/{ord(char)}")
            found = [rng.gauss(0.0, 1.0 / math.sqrt(self.dims)) for _ in range(self.dims)]
            self._directions[char] = found
        return found

    def vector(self, text: str) -> list[float]:
        """The unit vector for ``text`` (all zeros for the empty text)."""
        mix = [0.0] * self.dims
        counts = Counter(text)
        total = sum(counts.values())
        for char, count in counts.items():
            weight = count / total
            for i, component in enumerate(self._direction(char)):
                mix[i] += weight * component
        norm = math.sqrt(sum(x * x for x in mix))
        return [x / norm for x in mix] if norm else mix

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text)

    def __eq__(self, other: object) -> bool:
        # As upstream's: two instances of the model with the same width count as the same model.
        return isinstance(other, CharacterEmbeddings) and other.dims == self.dims

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable (its cache)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine similarity of two vectors (0.0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norms if norms else 0.0


def similarity(distance: str, query: Sequence[float], stored: Sequence[float]) -> float:
    """Upstream's expected score of a stored vector for a query: the cosine similarity, the inner product,
    or minus the Euclidean distance (``distance`` is ``cosine``, ``inner_product`` or ``l2``)."""
    if distance == "cosine":
        return cosine(query, stored)
    if distance == "inner_product":
        return sum(x * y for x, y in zip(query, stored, strict=True))
    return -math.sqrt(sum((x - y) ** 2 for x, y in zip(query, stored, strict=True)))


def index_config(embed: CharacterEmbeddings, fields: list[str] | None = None) -> dict[str, Any]:
    """A ``langgraph.store.base.IndexConfig`` for ``embed``, embedding ``fields`` (None: the whole value)."""
    config: dict[str, Any] = {"dims": embed.dims, "embed": embed}
    if fields is not None:
        config["fields"] = fields
    return config


def sqlite_index(embed: CharacterEmbeddings, text_fields: list[str] | None = None, **extra: str) -> dict[str, Any]:
    """The config upstream's SQLite suites open ``SqliteStore`` with: ``text_fields`` (None included), and
    ``extra`` (the sync suite's ``distance_type``)."""
    return {"dims": embed.dims, "embed": embed, "text_fields": text_fields, **extra}


def pg_index(embed: CharacterEmbeddings, vector_type: str, distance_type: str,
             fields: list[str] | None = None) -> dict[str, Any]:
    """The config upstream's PostgreSQL suites open ``PostgresStore`` with (``fields`` None included)."""
    return {"dims": embed.dims, "embed": embed, "ann_index_config": {"vector_type": vector_type},
            "distance_type": distance_type, "fields": fields}
