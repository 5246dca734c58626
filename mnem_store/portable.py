"""Export and import: upstream's whole-store JSON document.

The export holds every object ever written (ids as hex), the refs and HEAD;
states are written in full even though the store keeps most of them as
per-commit changes.  Import checks the whole document before anything is
created: every object must hash to its key, every link must name an object
of the right kind, and the refs and HEAD must make sense (HEAD names one of
the refs, or a commit), so a tampered or truncated export cannot create a
store.  It then replays the commits parents-first so they are stored as
changes again.  Export -> import -> export is byte-identical.

Upstream's format checksums nothing outside the objects, so a default
export cannot carry proof of its refs: a branch other than HEAD's renamed
to another legal name is exactly upstream's export of a store with that
name, and no importer can tell the two apart.  ``export --seal`` adds one
key upstream's importer ignores, ``seal`` (see :func:`seal_of`), after the
six it reads; import refuses a sealed export whose seal does not match.

A store with redactions (``redaction``) has node versions without bytes,
which no export can write as objects.  Its export leaves them out of
``objects`` and adds one key upstream's importer ignores, ``redactions``
(after ``objects``, before any seal): each record
(``Redaction.to_dict``, as ``mnem redactions --json`` lists it), so the export still says who removed what
and why.  Import accepts a node a state names and ``objects`` lacks only
when a record names it, keeps every record, and drops bytes an export
holds for an object a record names, so an import restores nothing a record
removed.  A seal covers the records too.

An export written to a file replaces it atomically (a temporary sibling,
fsync, rename), so a full disk or a kill leaves the old file whole.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import orjson

from .backend import Backend
from .canonical import InexactNumberError, encode, hex_id, object_id, parse_hex_id, parse_json
from .errors import (
    CommandError,
    CorruptStoreError,
    FormatVersionError,
    InvalidRefError,
    UsageError,
)
from .layout import FORMAT_VERSION, Head, parse_head, validate_branch_name
from .objects import (
    Commit,
    MemoryNode,
    Redaction,
    State,
    StoredObject,
    decode_object,
    from_portable,
)
from .redaction import apply, recorded
from .redaction_travel import MAX_REDACTIONS, from_json
from .repo import Repo
from .scratch import remove_dead, scratch_name
from .sqlite import io_error

__all__ = ["Restored", "dump_export", "export_document", "parse_export", "replace_file", "restore", "seal_of"]

#: The key ``export --seal`` adds.  Upstream's importer (serde, without ``deny_unknown_fields``) ignores it.
SEAL = "seal"
#: The key holding a redacted store's records, which upstream's importer ignores as it does ``seal``.
REDACTIONS = "redactions"
#: The fields a seal covers besides the object ids: every other field upstream's format has.
_SEALED_FIELDS = ("format_version", "hash_algo", "default_branch", "head", "refs")


def export_document(repo: Repo, *, seal: bool = False) -> dict[str, Any]:
    """The export as a Python value, keys in upstream's order (call inside a read snapshot).

    With ``seal``, a ``seal`` key follows the six upstream writes, which
    stay as they are, byte for byte, ahead of it.  A store with redaction
    records adds them under ``redactions`` after ``objects`` (the module's
    docstring); the redacted versions are not among the objects.
    """
    records = recorded(repo)
    objects = {hex_id(raw): decode_object(data).to_portable() for raw, data in repo.all_objects()}
    refs = {name: hex_id(tip) for name, tip in sorted(repo.branches(), key=lambda p: p[0].encode())}
    head = repo.head().text
    document: dict[str, Any] = {
        "format_version": int(repo.config.get("format_version", FORMAT_VERSION)),
        "hash_algo": "blake3",
        "default_branch": repo.config.get("default_branch", "main"),
        "head": head,
        "refs": refs,
        "objects": objects,
    }
    if records:
        document[REDACTIONS] = [record.to_dict() for record in records.values()]
    if seal:
        document[SEAL] = seal_of(document)
    return document


def seal_of(document: dict[str, Any]) -> str:
    """The 64-hex BLAKE3 seal of an export: of its header, HEAD, refs and the set of its object keys.

    Those are the parts of an export that nothing else checks: every object
    must hash to its key, so covering the keys covers the objects too.  The
    values are sealed as written (a ref's hex in upper case is another
    file), encoded as canonical CBOR under a ``kind`` of their own so a seal
    can never equal an object id.  On import the values are whatever JSON
    the file holds (checked later), which CBOR encodes as well.
    """
    covered = {field: document[field] for field in _SEALED_FIELDS}
    covered["objects"] = sorted(document["objects"])
    if REDACTIONS in document:  # an export without records is sealed as before
        covered[REDACTIONS] = document[REDACTIONS]
    covered["kind"] = "export_seal"
    return hex_id(object_id(encode(covered)))


def dump_export(document: dict[str, Any]) -> str:
    """Pretty JSON with two-space indent, as serde_json's pretty printer writes it."""
    return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()


def _require(doc: Any, key: str, kind: type) -> Any:
    if not isinstance(doc, dict) or key not in doc:
        raise CorruptStoreError(f"the export has no {key}")
    value = doc[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise CorruptStoreError(f"the export's {key} has the wrong type")
    return value


def replace_file(path: Path, document: dict[str, Any]) -> None:
    """Write an export file atomically: a temporary sibling, fsync, then rename over ``path``.

    The export is the whole memory, so a new file is created owner-only
    (0600) whatever the umask, and an existing file keeps the mode its
    owner gave it.  Any failure (a full disk among them) removes the
    temporary file and leaves the old ``path`` exactly as it was; one left by
    a killed export (``.<name>.tmp-<pid>-<random>``) is removed by the next.
    """
    data = dump_export(document).encode("utf-8")
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = 0o600
    except OSError as exc:
        raise io_error(f"writing {path}", exc) from None
    prefix = f".{path.name}.tmp-"
    remove_dead(path.parent, prefix)
    tmp = path.with_name(scratch_name(prefix))
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with suppress(OSError):
            tmp.unlink()
        raise io_error(f"writing {path}", exc) from None


@dataclass(frozen=True, slots=True)
class Restored:
    """A checked export: how many objects it holds, and how to write them into a new store."""

    count: int
    populate: Callable[[Backend], None]


def restore(doc: Any) -> Restored:
    """Check an export document whole and return what writes it into a new store.

    Checked before anything exists: the seal, when the export has one; the
    header; every object's hash; that every commit's parents and state and
    every state's nodes are held with the right kind; that every ref names a
    commit; and that HEAD names a commit or, attached, one of the refs (an
    attached HEAD may name a missing branch only while there are no refs at
    all: a store with no commits yet).  So a bad export creates nothing, and
    a store made by import always verifies.
    """
    if isinstance(doc, dict) and SEAL in doc:
        _check_seal(doc)
    version = _require(doc, "format_version", int)
    algo = _require(doc, "hash_algo", str)
    _require(doc, "default_branch", str)
    head_text = _require(doc, "head", str)
    refs = _require(doc, "refs", dict)
    objects = _require(doc, "objects", dict)
    if algo != "blake3":
        raise CorruptStoreError(f'export uses hash_algo "{algo}", this release only reads blake3')
    if version > FORMAT_VERSION:
        raise FormatVersionError(version, FORMAT_VERSION)
    if version < 1:
        raise CorruptStoreError(f"the export's format_version {version} is not a version (they start at 1)")
    records = _records(doc)
    rows: dict[bytes, tuple[StoredObject, bytes]] = {}
    for key, body in objects.items():
        raw_key = parse_hex_id(key)
        try:
            obj = from_portable(body)
        except UsageError as exc:
            raise CorruptStoreError(f"object {key}: {exc}") from None
        data = encode(obj.to_cbor_map())
        actual = object_id(data)
        if actual != raw_key:
            raise CorruptStoreError(
                f"object {key} does not hash to its own id (got {hex_id(actual)}); "
                "the export is corrupt or was hand-edited"
            )
        if raw_key in records:  # bytes a record removed stay removed; the record says what it was
            if not isinstance(obj, MemoryNode) or obj.id != records[raw_key].node_id:
                raise CorruptStoreError(f"the export's redactions name object {key} as a version of "
                                        f"{records[raw_key].node_id!r}, which it is not; the export is corrupt or "
                                        "was hand-edited")
            continue
        rows[raw_key] = (obj, data)
    ref_rows = []
    for name, target in refs.items():
        try:
            validate_branch_name(name)
        except InvalidRefError as exc:  # a name no store can hold: the export is damaged, as for a bad HEAD
            raise CorruptStoreError(f"the export has a ref whose name is refused: {exc.detail}") from None
        if not isinstance(target, str):
            raise CorruptStoreError(f'ref "{name}" is not a hex id')
        ref_rows.append((name, _commit_in(rows, parse_hex_id(target.lower()), f'ref "{name}"')))
    head = parse_head(head_text)
    _check_head(head, {name for name, _ in ref_rows}, rows)
    redacted = _check_complete(rows, records)

    def populate(backend: Backend) -> None:
        repo = Repo(backend)
        apply(repo, records.values())
        repo.objects.insert_many((raw, "memory_node", None) for raw in sorted(redacted))
        _store_objects(repo, rows)
        backend.set_refs(ref_rows)
        backend.set_head(head)

    return Restored(len(rows) + len(redacted), populate)


def _records(doc: dict[str, Any]) -> dict[bytes, Redaction]:
    """The export's redaction records by object (none without the key), at most ``MAX_REDACTIONS``."""
    listed = doc.get(REDACTIONS, [])
    if not isinstance(listed, list):
        raise CorruptStoreError("the export's redactions are not a list; the export is corrupt or was hand-edited")
    if len(listed) > MAX_REDACTIONS:
        raise CorruptStoreError(f"the export holds {len(listed)} redaction records, more than the {MAX_REDACTIONS} "
                                "an import takes")
    records: dict[bytes, Redaction] = {}
    for entry in listed:
        record = from_json(entry)
        records.setdefault(record.object, record)
    return records


def _check_seal(doc: dict[str, Any]) -> None:
    """A sealed export must match its seal, before anything else is judged.

    Checked first, so any damage to what the seal covers (a branch's name
    among them, which nothing else can catch, or a field's name) is refused
    with the one message that says what happened and what to do.  A field
    the seal covers that is missing, or objects that are not a map, cannot
    match it.
    """
    whole = all(field in doc for field in (*_SEALED_FIELDS, "objects")) and isinstance(doc["objects"], dict)
    if not whole or doc[SEAL] != seal_of(doc):
        raise CorruptStoreError(
            "the export's seal does not match its header, HEAD, refs or objects: the file was damaged or "
            "edited after `mnem export --seal` wrote it, and nothing was imported; import an undamaged copy, "
            "or export the source store again with `mnem export --seal`"
        )


def _check_head(head: Head, ref_names: set[str], rows: dict[bytes, tuple[StoredObject, bytes]]) -> None:
    """HEAD must name a held commit, or a branch among the refs once there are any."""
    if head.commit is not None:
        _commit_in(rows, head.commit, "HEAD")
    elif ref_names and head.branch not in ref_names:
        raise CorruptStoreError(
            f'the export\'s HEAD names branch "{head.branch}", which is not among its refs '
            f"({', '.join(sorted(ref_names))}); the export is corrupt or was hand-edited"
        )


def _commit_in(rows: dict[bytes, tuple[StoredObject, bytes]], raw: bytes, what: str) -> bytes:
    """``raw``, if the export holds it as a commit: a ref or HEAD at anything else makes a broken store."""
    found = rows.get(raw)
    if found is None:
        raise CorruptStoreError(f"{what} points at {hex_id(raw)}, which the export does not hold")
    if not isinstance(found[0], Commit):
        raise CorruptStoreError(f"{what} points at {hex_id(raw)}, a {found[0].kind}, not a commit")
    return raw


def _check_complete(rows: dict[bytes, tuple[StoredObject, bytes]], records: dict[bytes, Redaction]) -> set[bytes]:
    """Every commit's parents and state, and every state's nodes, must be in the export, of the right kind.

    A truncated export used to be refused only halfway through writing (a
    ``not_found`` from replaying the commits, after the store directory was
    made), or not at all for a state's missing node; checked here, before
    anything exists, it is the damage it is.  A state's node may be missing
    only where a redaction record names it; those nodes are returned.
    """
    redacted: set[bytes] = set()
    for raw, (obj, _) in rows.items():
        links: list[tuple[bytes, type[StoredObject], str, str | None]]
        if isinstance(obj, Commit):
            links = [(parent, Commit, "parent", None) for parent in obj.parents] + [(obj.state, State, "state", None)]
            owner = f"commit {hex_id(raw)}"
        elif isinstance(obj, State):
            links = [(node, MemoryNode, f"node {node_id!r}", node_id) for node_id, node in obj.nodes.items()]
            owner = f"state {hex_id(raw)}"
        else:
            continue
        for target, kind, role, node_id in links:
            found = rows.get(target)
            record = records.get(target) if node_id is not None else None
            if found is None and record is not None:
                if record.node_id != node_id:  # the record is all a read will show of the version: it must fit
                    raise CorruptStoreError(f"{owner} names {role} {hex_id(target)}, which the export's redactions "
                                            f"say is a version of {record.node_id!r}; the export is corrupt or was "
                                            "hand-edited")
                redacted.add(target)
                continue
            if found is None:
                raise CorruptStoreError(f"{owner} names {role} {hex_id(target)}, which the export does not hold")
            if not isinstance(found[0], kind):
                raise CorruptStoreError(f"{owner} names {role} {hex_id(target)}, which is a {found[0].kind}")
    return redacted


def _store_objects(repo: Repo, rows: dict[bytes, tuple[StoredObject, bytes]]) -> None:
    """Store verified objects: nodes and lone states as they are, commits replayed parents-first.

    A state some commit points at is stored virtual and rebuilt by
    replaying that commit, which also checks it against the commit graph.
    """
    from graphlib import TopologicalSorter  # only an import replays commits

    commits = {raw: obj for raw, (obj, _) in rows.items() if isinstance(obj, Commit)}
    in_use = {commit.state for commit in commits.values()}
    repo.objects.insert_many(
        (raw, obj.kind, None if raw in in_use else data) for raw, (obj, data) in rows.items()
        if not isinstance(obj, Commit)
    )
    for raw in TopologicalSorter({raw: commits[raw].parents for raw in sorted(commits)}).static_order():
        commit = commits[raw]
        repo.index_commit(commit, cast(State, rows[commit.state][0]).nodes)  # held, a state: _check_complete


def parse_export(text: bytes, name: str) -> Any:
    """Parse an export file's bytes; malformed JSON is upstream's "not a valid mnem export".

    Integers are read exactly (``canonical.parse_json``), so a node whose
    content holds one beyond 64 bits is refused by ``from_portable`` rather
    than imported as the nearest float under an id computed for that float.
    """
    refused = f"{name} is not a valid mnem export"
    try:
        return parse_json(text, "the export", check=False)
    except InexactNumberError as exc:  # an integer too long for a float, which no export upstream writes holds
        raise CommandError(refused, "corrupt_store", cause=exc.detail) from None
    except UsageError as exc:
        raise CommandError(refused, "corrupt_store", cause=exc.detail.split(": ", 1)[-1]) from None
