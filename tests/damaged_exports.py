"""A hypothesis strategy that spoils a good ``mnem export`` one way at a time.

Shared by the CLI's import suite (tests/store/test_corrupt_db.py) and the
bridge's (``Store.import_``), so both layers face the same damage.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import orjson
from hypothesis import strategies as st


def json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into a JSON document (keys and indexes), the root excluded."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield (*prefix, key)
        yield from json_paths(child, (*prefix, key))


def at(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


@st.composite
def damaged_export(draw: st.DrawFn, good: dict[str, Any]) -> bytes:
    """The export of a good store, spoiled one way: a value swapped, a key or an object dropped, a ref moved..."""
    doc = orjson.loads(orjson.dumps(good))  # a deep copy
    ids = sorted(doc["objects"])
    some_id = st.sampled_from(ids)
    value = st.one_of(st.none(), st.booleans(), st.integers(-2, 2**64), st.text(max_size=5), some_id,
                      some_id.map(str.upper), st.just([]), st.just({}), st.just({"kind": "commit"}))
    kind = draw(st.sampled_from(["set", "set", "delete key", "drop object", "rename object", "move ref", "head",
                                 "version", "raw text"]))
    if kind == "raw text":
        text = orjson.dumps(good)
        return draw(st.one_of(st.integers(0, len(text) - 1).map(lambda n: text[:n]),
                              st.sampled_from([b"", b"\xff\xfe", b"[1e999]", b"NaN", b"{" * 5000, b"null"])))
    if kind in ("set", "delete key"):
        path = draw(st.sampled_from(list(json_paths(doc))))
        parent = at(doc, path[:-1])
        if kind == "set":
            parent[path[-1]] = draw(value)
        elif isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    elif kind == "drop object":
        del doc["objects"][draw(some_id)]
    elif kind == "rename object":
        old = draw(some_id)
        new = draw(st.sampled_from([old.upper(), old[:-1] + ("0" if old[-1] != "0" else "1"), old[:63], old + "0"]))
        doc["objects"][new] = doc["objects"].pop(old)
    elif kind == "move ref":
        doc["refs"][draw(st.sampled_from(["main", "side", "new", "a..b"]))] = draw(some_id | st.just("ab" * 32))
    elif kind == "head":
        doc["head"] = draw(st.sampled_from(["ref: main", "ref: side", "ref: nosuch", "ref: a..b", "ref:", "", "xyz"])
                           | some_id | some_id.map(str.upper))
    else:
        doc["format_version"] = draw(st.sampled_from([0, -1, 2, 10**30, 1.0, "1", None, True]))
    return json.dumps(doc).encode()  # stdlib json: integers past 64 bits are part of the damage
