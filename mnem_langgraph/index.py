"""``IndexConfig`` for ``MnemosyneStore``: what a put embeds, and the query vectors a search ranks by.

LangGraph's stores embed chosen fields of each value (``fields``, JSON
paths such as ``"text"`` or ``"steps[*].summary"``; ``"$"`` is the whole
value) and rank ``search(query=...)`` by cosine similarity of the query's
embedding to the item's closest field.  Here the embedding runs in the
caller's process, with the caller's ``embed``; the vectors travel with the
put to ``mnem write``, which stores them beside history, keyed by the node
object the put writes and the field (``mnem_store.similarity``).  A value
is embedded when it is written, and every commit or branch that holds it
later uses that vector: history is never re-embedded, and ``at(rev)``
searches the values as they were.

Vectors are stored under a *model name*: ``"provider:model"`` for a string
``embed``, else the embedder's class or function name (plus its ``model``
attribute, if any), always with ``dims``.  Changing the embedder starts a
new, empty index; ``MnemosyneStore.rebuild_index()`` fills it for the
memory on the current branch.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig, PutOp, SearchItem, SearchOp
from langgraph.store.base.embed import ensure_embeddings, get_text_at_path, tokenize_path

from mnem_bridge import Store, UsageError
from mnem_bridge.store import pack_vector

from .keys import id_prefix, parse_node_id
from .snapshot import Snapshot

__all__ = ["Embedded", "EmbeddingIndex", "ranked_page", "reads_page_only", "similarity"]

logger = logging.getLogger(__name__)


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
    """One store's ``IndexConfig``: the embedder, the fields, and the name its vectors are stored under.

    Args:
        config: LangGraph's ``IndexConfig`` (``dims``, ``embed``, optional ``fields``).

    Raises:
        ValueError: ``dims`` or ``embed`` is missing or unusable.
    """

    def __init__(self, config: IndexConfig) -> None:
        dims = config.get("dims")
        if not isinstance(dims, int) or isinstance(dims, bool) or dims <= 0:
            raise UsageError(f"index dims must be a positive integer, got {dims!r}")
        if config.get("embed") is None:
            raise UsageError("index embed is required: an Embeddings object, a function, or 'provider:model'")
        self.config = config
        self.dims = dims
        self.embeddings: Embeddings = ensure_embeddings(config["embed"])
        self.fields = [(path, tokenize_path(path) if path != "$" else path) for path in config.get("fields") or ["$"]]
        self.model = f"{model_name(config['embed'])}/{dims}"

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
    def plan(self, ops: Sequence[Any]) -> tuple[list[str], dict[tuple[tuple[str, ...], str], dict[str, str]]]:
        """The distinct query texts to embed, and each put key's ``{field: text}`` (last put of a key wins)."""
        queries = sorted({op.query for op in ops if isinstance(op, SearchOp) and op.query})
        puts: dict[tuple[tuple[str, ...], str], dict[str, str]] = {}
        for op in ops:
            if isinstance(op, PutOp):
                puts[(tuple(op.namespace), op.key)] = self.texts(op)
        return queries, puts

    def embed(self, ops: Sequence[Any]) -> Embedded:
        """Embed a batch's queries and put texts with the sync API (one ``embed_documents`` for all texts)."""
        queries, puts = self.plan(ops)
        texts = _distinct(puts.values())
        vectors = self.embeddings.embed_documents(texts) if texts else []
        return self._embedded(queries, [self.embeddings.embed_query(q) for q in queries], puts, texts, vectors)

    async def aembed(self, ops: Sequence[Any]) -> Embedded:
        """``embed`` with the async API, for ``abatch``."""
        queries, puts = self.plan(ops)
        texts = _distinct(puts.values())
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
        packed = {text: pack_vector(vector) for text, vector in zip(texts, vectors, strict=True)}
        result = Embedded({q: list(v) for q, v in zip(queries, query_vectors, strict=True)})
        for key, fields in puts.items():
            if fields:
                result.puts[key] = {"model": self.model, "fields": {f: packed[text] for f, text in fields.items()}}
        return result


def _distinct(field_texts: Iterable[Mapping[str, str]]) -> list[str]:
    """Every text once, in first-seen order: a text shared by fields or items is embedded once."""
    return list(dict.fromkeys(text for fields in field_texts for text in fields.values()))


def model_name(embed: Any) -> str:
    """The name an embedder's vectors are stored under (without ``dims``)."""
    if isinstance(embed, str):
        return embed
    kind = embed if callable(embed) and not isinstance(embed, Embeddings) else type(embed)
    name = f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', repr(kind))}"
    model = getattr(embed, "model", None) or getattr(embed, "model_name", None)
    return f"{name}:{model}" if isinstance(model, str) else name


def similarity(
    store: Store, index: EmbeddingIndex | None, op: Any, embedded: Embedded, at: str | None = None,
) -> dict[str, float] | None:
    """For a search with a query on an indexed store, its candidates' similarity (``Store.similar``); else None.

    Candidates are the nodes under the search's namespace prefix, at the
    commit ``at``, or (``None``) live on the current branch.
    """
    if index is None or not isinstance(op, SearchOp) or not op.query:
        return None
    prefix = id_prefix(tuple(op.namespace_prefix))
    return store.similar(index.model, embedded.queries[op.query], prefixes=[prefix] if prefix else None, at=at,
                         live=at is None)


def reads_page_only(index: EmbeddingIndex | None, op: Any) -> bool:
    """Whether a search is answered by ``ranked_page``: a query over the whole store, an index, no filter.

    A search under a namespace prefix reads that namespace in one walk
    (``mnem stamps --prefix``), which costs what the namespace holds and,
    on PostgreSQL, less than looking up the times of even ten items one by
    one; a search of the whole store would read every item, so it reads
    only its page.
    """
    return (index is not None and isinstance(op, SearchOp) and bool(op.query) and not op.filter
            and not op.namespace_prefix)


def ranked_page(
    store: Store, index: EmbeddingIndex, op: SearchOp, embedded: Embedded,
) -> tuple[list[SearchItem], Snapshot]:
    """A query search without a filter, reading only the page's items: ``(results, their snapshot)``.

    ``mnem similar`` ranks every candidate where the vectors are and sends
    the best ``offset + limit``; the page is cut from them (items without a
    vector follow, in key order, only when the ranking runs out), and only
    the page's items are read with their times.  The answer equals ``Snapshot.answer``'s; a
    write landing between the two calls can leave the page an item short.
    """
    prefix = id_prefix(tuple(op.namespace_prefix))
    prefixes = [prefix] if prefix else None
    end = op.offset + op.limit
    query = embedded.queries[op.query or ""]
    ranking = store.similar(index.model, query, prefixes=prefixes, live=True, limit=end)
    chosen = [nid for nid in ranking if parse_node_id(nid) is not None][:end]
    if len(chosen) < end == len(ranking):  # ids that are not items took places: rank them all
        ranking = store.similar(index.model, query, prefixes=prefixes, live=True)
        chosen = [nid for nid in ranking if parse_node_id(nid) is not None][:end]
    if len(chosen) < end:  # past the ranked items: the unranked ones, in key order
        rest = [(parsed, nid) for nid in store.node_ids(prefixes=prefixes, live=True)
                if nid not in ranking and (parsed := parse_node_id(nid)) is not None]
        chosen += [nid for _, nid in sorted(rest)][: end - len(chosen)]
    page = chosen[op.offset :]
    snapshot = Snapshot.of(store.node_times(page, live=True)) if page else Snapshot(())
    results = []
    for nid in page:
        namespace, key = parse_node_id(nid) or ((), "")
        entry = snapshot.entry(namespace, key)
        if entry is not None:
            results.append(entry.search_item(ranking.get(nid)))
    return results, snapshot
