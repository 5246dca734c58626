"""``IndexConfig`` for ``MnemosyneStore``: what a put embeds, and the query vectors a search ranks by.

LangGraph's stores embed chosen fields of each value (``fields``, JSON
paths such as ``"text"`` or ``"steps[*].summary"``; ``"$"`` is the whole
value) and rank ``search(query=...)`` by the similarity of the query's
embedding to the item's closest field.  Here the embedding runs in the
caller's process, with the caller's ``embed``; the vectors travel with the
put to ``mnem write``, which stores them beside history, keyed by the node
object the put writes and the field (``mnem_store.similarity``).  A value
is embedded when it is written, and every commit or branch that holds it
later uses that vector: history is never re-embedded, and ``at(rev)``
searches the values as they were.

The config is read as every LangGraph store reads its own, so a config
written for one of them works here unchanged or is refused at once
(``UsageError``), never half-honoured: ``fields`` (``InMemoryStore``,
``PostgresStore``) or ``text_fields`` (``SqliteStore``'s name for it), a
path or a list of them; ``distance_type`` (``cosine``, ``l2``,
``inner_product``, scored as ``PostgresStore`` scores them: ``mnem similar
--distance``); and ``PostgresStore``'s ``ann_index_config``, whose
``vector_type="halfvec"`` is honoured by rounding vectors to half
precision, as pgvector stores them, and whose index ``kind`` and tuning
are accepted but change nothing: ``mnem similar`` searches exactly, which
is the answer an approximate index approximates.

Vectors are stored under a *model name*: ``"provider:model"`` for a string
``embed``, else the embedder's class or function name (plus its ``model``
attribute, if any), always with ``dims`` (and ``halfvec`` for half-precision
vectors).  Changing the embedder starts a new, empty index;
``MnemosyneStore.rebuild_index()`` fills it for the memory on the current
branch.  The distance is not part of the name: it scores the same vectors.
"""

from __future__ import annotations

import difflib
import logging
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp, SearchOp
from langgraph.store.base.embed import ensure_embeddings, get_text_at_path, tokenize_path

from mnem_bridge import UsageError
from mnem_bridge.store import pack_vector

__all__ = ["DISTANCES", "Embedded", "EmbeddingIndex"]

logger = logging.getLogger(__name__)

#: LangGraph's ``distance_type`` values (SqliteStore's and PostgresStore's), the first the default.
DISTANCES = ("cosine", "l2", "inner_product")
#: ``ann_index_config``'s ``vector_type`` values (PostgresStore's), the first the default.
VECTOR_TYPES = ("vector", "halfvec")
#: ``ann_index_config``'s index kinds and the tuning settings each takes (PostgresStore's), the first the default.
ANN_KINDS = {"hnsw": ("m", "ef_construction"), "ivfflat": ("lists", "nlist"), "flat": ("lists", "nlist")}
#: Every key an index config may hold; ``fields`` and ``text_fields`` are one option under two stores' names.
OPTIONS = ("dims", "embed", "fields", "text_fields", "distance_type", "ann_index_config")


@dataclass
class Embedded:
    """A batch's vectors, computed before anything is read or written.

    ``queries`` maps each search's query text to its embedding; ``puts``
    maps ``(namespace, key)`` to the ``mnem write`` ``vectors`` entry of the
    last put of that key (absent when it embeds nothing).
    """

    queries: dict[str, list[float]] = field(default_factory=dict)
    puts: dict[tuple[tuple[str, ...], str], dict[str, Any]] = field(default_factory=dict)


class EmbeddingIndex:
    """One store's index config: the embedder, the fields, the distance, and the name its vectors are stored under.

    Args:
        config: LangGraph's ``IndexConfig``, or ``SqliteStore``'s or
            ``PostgresStore``'s richer one (``OPTIONS``).

    Raises:
        UsageError: An option is unknown, missing or unusable; the message
            names it and what it accepts.  Nothing is half-honoured.
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        unknown = [key for key in config if key not in OPTIONS]
        if unknown:
            close = difflib.get_close_matches(str(unknown[0]), OPTIONS, n=1)
            raise UsageError(
                f"index option {unknown[0]!r} is not one MnemosyneStore knows"
                f"{f' (did you mean {close[0]!r}?)' if close else ''}; the options are {', '.join(OPTIONS)}"
            )
        dims = config.get("dims")
        if not isinstance(dims, int) or isinstance(dims, bool) or dims <= 0:
            raise UsageError(f"index dims must be a positive integer, got {dims!r}")
        self.dims = dims
        self.fields = [(path, tokenize_path(path) if path != "$" else path) for path in _fields(config) or ["$"]]
        self.distance = _choice(config, "distance_type", DISTANCES)
        self.half = _vector_type(config.get("ann_index_config")) == "halfvec"
        # Last: a "provider:model" embedder builds a client, which a refused option should not cost.
        self.embeddings: Embeddings = _embeddings(config.get("embed"))
        self.model = f"{model_name(config['embed'])}/{dims}{'/halfvec' if self.half else ''}"

    # ------------------------------------------------------------------ texts
    def texts(self, op: PutOp) -> dict[str, str]:
        """``{field: text}`` a put embeds: the configured fields, or ``op.index``'s; none for ``index=False``.

        A path that selects several texts (``a[*].b``) gives one field per
        text, ``path.0``, ``path.1``, ..., as LangGraph's stores name them.
        """
        if op.value is None or op.index is False:
            return {}
        paths = self.fields if op.index is None else [(path, tokenize_path(path)) for path in op.index]
        found: dict[str, str] = {}
        for path, tokens in paths:
            texts = get_text_at_path(op.value, tokens)
            if len(texts) == 1:
                found[path] = texts[0]
            else:
                found.update((f"{path}.{i}", text) for i, text in enumerate(texts))
        return found

    # ------------------------------------------------------------------ embedding
    def plan(
        self, ops: Sequence[Any], rank: bool = True,
    ) -> tuple[list[str], dict[tuple[tuple[str, ...], str], dict[str, str]], list[str]]:
        """The distinct query texts to embed (none unless ``rank``), each put key's ``{field: text}``, and its texts.

        The last put of a key wins.  A store whose queries are not ranked by
        vectors (``query_mode``) embeds no query: an embedder may be a paid API.
        A text shared by fields or items is embedded once.
        """
        queries = sorted({op.query for op in ops if isinstance(op, SearchOp) and op.query}) if rank else []
        puts = {(tuple(op.namespace), op.key): self.texts(op) for op in ops if isinstance(op, PutOp)}
        return queries, puts, list(dict.fromkeys(text for fields in puts.values() for text in fields.values()))

    def embed(self, ops: Sequence[Any], rank: bool = True) -> Embedded:
        """Embed a batch's queries (when ``rank``) and put texts with the sync API (one ``embed_documents``)."""
        queries, puts, texts = self.plan(ops, rank)
        vectors = self.embeddings.embed_documents(texts) if texts else []
        return self._embedded(queries, [self.embeddings.embed_query(q) for q in queries], puts, texts, vectors)

    async def aembed(self, ops: Sequence[Any], rank: bool = True) -> Embedded:
        """``embed`` with the async API, for ``abatch``."""
        queries, puts, texts = self.plan(ops, rank)
        vectors = await self.embeddings.aembed_documents(texts) if texts else []
        query_vectors = [await self.embeddings.aembed_query(q) for q in queries]
        return self._embedded(queries, query_vectors, puts, texts, vectors)

    def _embedded(
        self, queries: list[str], query_vectors: Sequence[Sequence[float]],
        puts: Mapping[tuple[tuple[str, ...], str], Mapping[str, str]], texts: list[str],
        vectors: Sequence[Sequence[float]],
    ) -> Embedded:
        for vector in [*query_vectors, *vectors]:
            if len(vector) != self.dims:
                raise UsageError(
                    f"the embedder returned {len(vector)} dimensions where the index says dims={self.dims}"
                )
        packed = {text: pack_vector(self._stored(vector)) for text, vector in zip(texts, vectors, strict=True)}
        result = Embedded({q: self._stored(v) for q, v in zip(queries, query_vectors, strict=True)})
        for key, fields in puts.items():
            if fields:
                result.puts[key] = {"model": self.model, "fields": {f: packed[text] for f, text in fields.items()}}
        return result

    def _stored(self, vector: Sequence[float]) -> list[float]:
        """A vector as the index keeps it: rounded to half precision for ``halfvec``, as pgvector stores it.

        PostgresStore casts both the stored vectors and the query to
        ``halfvec``, so its scores are those of the rounded vectors; so are ours.

        Raises:
            UsageError: A component beyond half precision's range (65504), which pgvector refuses too.
        """
        if not self.half:
            return list(vector)
        try:
            return list(struct.unpack(f"<{len(vector)}e", struct.pack(f"<{len(vector)}e", *vector)))
        except (OverflowError, struct.error) as exc:
            raise UsageError(
                f"the embedder returned a value that half precision cannot hold ({exc}); "
                "use ann_index_config vector_type 'vector' for this embedder"
            ) from exc


def _embeddings(embed: Any) -> Embeddings:
    """The embedder ``embed`` names, as LangGraph's stores resolve it (``ensure_embeddings``), or a ``UsageError``."""
    if embed is None:
        raise UsageError("index embed is required: an Embeddings object, a function, or 'provider:model'")
    if not isinstance(embed, (str, Embeddings)) and not callable(embed):
        raise UsageError(
            f"index embed must be an Embeddings object, a function of a list of texts, or a 'provider:model' "
            f"string, got {type(embed).__name__}"
        )
    try:
        return ensure_embeddings(embed)
    except Exception as exc:  # init_embeddings raises whatever the provider's package raises
        raise UsageError(
            f"index embed {embed!r} could not be loaded: {exc} (install the provider's package and set its "
            "credentials, or pass an Embeddings object or a function)"
        ) from exc


def _fields(config: Mapping[str, Any]) -> list[str] | None:
    """The paths to embed: ``fields`` or ``text_fields`` (a path or a list of them), or None for the whole value.

    Raises:
        UsageError: A value that is not a path or a list of them, or both names given with different paths.
    """
    given: dict[str, list[str]] = {}
    for name in ("fields", "text_fields"):
        paths = config.get(name)
        if paths is None:
            continue
        paths = [paths] if isinstance(paths, str) else paths
        if not isinstance(paths, list) or not all(isinstance(path, str) for path in paths):
            raise UsageError(f"index {name} must be a JSON path or a list of them, such as ['text'], got {paths!r}")
        given[name] = paths
    if len({tuple(paths) for paths in given.values()}) > 1:
        raise UsageError(
            f"index fields {given['fields']!r} and text_fields {given['text_fields']!r} differ: they are one option "
            "(SqliteStore calls it text_fields); give one of them"
        )
    return next(iter(given.values()), None)


def _choice(config: Mapping[str, Any], name: str, allowed: Sequence[str], where: str = "index") -> str:
    """``config[name]``, one of ``allowed`` (the first when absent), or a ``UsageError`` naming them and ``where``."""
    value = config.get(name, allowed[0])
    if value not in allowed:
        raise UsageError(f"{where} {name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return str(value)


def _vector_type(ann: Any) -> str:
    """PostgresStore's ``ann_index_config`` checked as PostgresStore checks it, and its ``vector_type``.

    ``kind`` and its tuning (``m``, ``ef_construction`` for ``hnsw``;
    ``lists`` or ``nlist`` for ``ivfflat`` and ``flat``) shape an approximate
    index; we search exactly, so they are accepted and change nothing.  A
    setting of another kind, or not a positive integer, is refused (PostgresStore would drop it silently).
    """
    if ann is None:
        return VECTOR_TYPES[0]
    if not isinstance(ann, Mapping):
        raise UsageError(f"index ann_index_config must be a dict (kind, vector_type, ...), got {type(ann).__name__}")
    kind = _choice(ann, "kind", tuple(ANN_KINDS), "ann_index_config")
    for key, value in ann.items():
        if key in ("kind", "vector_type"):
            continue
        if key not in ANN_KINDS[kind]:
            raise UsageError(
                f"ann_index_config {key!r} is not a setting of a {kind} index; its settings are kind, vector_type, "
                f"{', '.join(ANN_KINDS[kind])}"
            )
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise UsageError(f"ann_index_config {key} must be a positive integer, got {value!r}")
    return _choice(ann, "vector_type", VECTOR_TYPES, "ann_index_config")


def model_name(embed: Any) -> str:
    """The name an embedder's vectors are stored under (without ``dims``)."""
    if isinstance(embed, str):
        return embed
    kind = embed if callable(embed) and not isinstance(embed, Embeddings) else type(embed)
    name = f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', repr(kind))}"
    model = getattr(embed, "model", None) or getattr(embed, "model_name", None)
    return f"{name}:{model}" if isinstance(model, str) else name
