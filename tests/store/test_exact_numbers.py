"""Numbers are stored exactly or refused: never rounded, on either backend.

Upstream parses content with serde_json, which reads an integer beyond 64
bits as the nearest float: ``2**64`` is stored as ``1.8446744073709552e19``
and one too long for a float (``-10**400`` written out) is "not valid JSON".
Here both are refused with a ``usage`` error that says why and what to do
(send it as a string), and the store is unchanged; every number upstream
stores exactly is stored exactly, under the same object id
(docs/differences.md, "Exact numbers").

Runs through ``invoke`` (the path of a one-shot ``mnem`` and of each
``mnem serve`` request) so hypothesis can try many documents, and through
the real binary for what a user reads.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import re
from pathlib import Path
from typing import Any

import orjson
import pg_stores
import pytest
from conftest import new_store, run_mnem, strict_equal
from fuzzing import tried
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mnem_store import canonical
from mnem_store.canonical import encode, hex_id, object_id
from mnem_store.cli import Streams, invoke

I64_MIN, U64_MAX = -(2**63), 2**64 - 1
class Literal(str):
    """A number written as this text in a document (an exponent, a literal too long for ``str(int)``, ``-0``)."""


#: Integers no store keeps exactly: one past each end of 64 bits, far past, past what a float holds, and past
#: what Python converts to an ``int`` (4300 digits).
BEYOND = [Literal(text) for text in (str(U64_MAX + 1), str(I64_MIN - 1), str(2**70), str(-(10**30)),
                                     "-1" + "0" * 400, "1" + "0" * 400, "1" + "0" * 5000)]
#: Numbers at the edges that must round-trip exactly, type for type.
EDGES = [U64_MAX, I64_MIN, 2**63, 2**63 - 1, 0, -0.0, 5e-324, 1.7976931348623157e308, -1.7976931348623157e308,
         0.1, 1.0, 1e19, 1.8446744073709552e19]


def run(store: Path, argv: list[str], stdin: bytes = b"") -> tuple[int, Any]:
    out, err = io.BytesIO(), io.BytesIO()
    code = invoke(["-C", pg_stores.address(store), "--json", *argv], Streams(io.BytesIO(stdin), out, err))
    assert err.getvalue() == b""
    return code, orjson.loads(out.getvalue())


def snapshot(store: Path) -> Any:
    return run(store, ["export"])[1], run(store, ["status"])[1]


@pytest.fixture
def seeded(tmp_path: Path, backend: str) -> Path:
    root = new_store(tmp_path / "store", backend)
    assert run(root, ["write", "-m", "seed"], b'{"put": [{"id": "plan", "content": "pro"}]}')[0] == 0
    return root


def refused_as_inexact(store: Path, argv: list[str], stdin: bytes = b"") -> str:
    before = snapshot(store)
    code, doc = run(store, argv, stdin)
    assert code == 2 and doc["error"]["code"] == "usage", doc
    message: str = doc["error"]["message"]
    assert "outside the range a store keeps exactly" in message and "store it as a string" in message, message
    assert "not valid JSON" not in message, message
    assert snapshot(store) == before
    return message


@pytest.mark.parametrize("number", BEYOND, ids=["2^64", "-2^63-1", "2^70", "-10^30", "-10^400", "10^400", "10^5000"])
def test_an_integer_beyond_64_bits_is_refused_by_every_writer(seeded: Path, number: Literal) -> None:
    for where in ({"n": number}, [1, [number]]):
        refused_as_inexact(seeded, ["add", f"--content-json={dump(where)}", "--", "n"])
        payload = f'{{"put": [{{"id": "ok", "content": 1}}, {{"id": "n", "content": {dump(where)}}}]}}'
        refused_as_inexact(seeded, ["write", "-m", "x"], payload.encode())
    refused_as_inexact(seeded, ["merge", "side", "--resolve-json", f"plan={number}"])
    refused_as_inexact(seeded, ["bisect", "--node", "plan", "--equals", number])
    assert run(seeded, ["show", "--node", "n"])[1] is None


def test_the_message_names_the_number_and_the_put(seeded: Path) -> None:
    payload = b'{"put": [{"id": "a", "content": 1}, {"id": "b", "content": {"n": 18446744073709551616}}]}'
    message = refused_as_inexact(seeded, ["write", "-m", "x"], payload)
    assert message.startswith("put[1].content holds the integer 18446744073709551616, outside the range a store keeps "
                              "exactly (-9223372036854775808 to 18446744073709551615)"), message
    long = refused_as_inexact(seeded, ["add", "--content-json=-1" + "0" * 400, "--", "n"])
    assert long.startswith("content holds an integer of 401 digits"), long


def test_the_real_binary_says_so_in_text(seeded: Path) -> None:
    """What a user at a terminal reads: the reason and the fix, exit status 2, not "is not valid JSON"."""
    result = run_mnem("add", "--content-json", '{"id": 18446744073709551616}', "big", cwd=seeded)
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: content holds the integer 18446744073709551616, outside the range a store "
                                 "keeps exactly"), result.err
    assert "store it as a string" in result.err and "Traceback" not in result.err


def test_a_float_beyond_a_double_is_still_not_valid_json(seeded: Path) -> None:
    """``1e400`` is a float literal no double holds: refused as upstream refuses it ("number out of range")."""
    before = snapshot(seeded)
    code, doc = run(seeded, ["add", "--content-json", "[1e400]", "--", "n"])
    assert code == 1 and doc["error"]["code"] == "usage" and "not valid JSON" in doc["error"]["message"]
    assert snapshot(seeded) == before


def test_numbers_at_the_edges_are_stored_exactly_under_upstreams_ids(seeded: Path) -> None:
    """Every edge value reads back type for type, and its node hashes as upstream's canonical CBOR does."""
    content = {f"n{i}": value for i, value in enumerate(EDGES)}
    puts: list[dict[str, Any]] = [{"id": "edges", "content": content}, {"id": "neg0", "content": -0.0},
                                  {"id": "max", "content": U64_MAX}]
    assert run(seeded, ["write", "-m", "edges"], dump({"put": puts}).encode())[0] == 0
    for put in puts:
        node = run(seeded, ["show", "--node", put["id"]])[1]
        assert strict_equal(node["content"], put["content"]) and signs(node["content"]) == signs(put["content"])
    export = run(seeded, ["export"])[1]
    expected = {"id": "max", "kind": "memory_node", "content": U64_MAX, "content_kind": "note"}
    assert hex_id(object_id(encode(expected))) in export["objects"]


def test_an_export_holding_an_integer_beyond_64_bits_is_refused(seeded: Path, tmp_path: Path) -> None:
    """An export whose node says ``2**64`` under the id of the rounded float: refused, nothing imported.

    Read as a float, the node would hash to its key and be stored as a
    number other than the file's; read exactly, no store can hold it.
    """
    export = run(seeded, ["export"])[1]
    rounded = {"id": "big", "kind": "memory_node", "content": float(2**64), "content_kind": "note"}
    key = hex_id(object_id(encode(rounded)))
    text = orjson.dumps(export).decode()
    body = json.dumps({**rounded, "content": 2**64})
    doctored = text.replace('"objects":{', f'"objects":{{"{key}":{body},', 1)
    (tmp_path / "doctored.json").write_text(doctored)
    target = tmp_path / "target"
    result = run_mnem("--json", "import", str(tmp_path / "doctored.json"), str(target))
    assert result.code == 1 and result.json["error"]["code"] == "corrupt_store", result.out
    assert "18446744073709551616" in result.json["error"]["message"], result.out
    assert not target.exists()


# ---------------------------------------------------------------------------------------------- fuzz


NUMBER_TEXTS = ["1e400", "-1e400", "1E+2", "1e-400", "-0", "-0.0", "0.1", "1.0", "1e19", "18446744073709551615",
                "18446744073709551616", "-9223372036854775808", "-9223372036854775809", "1" + "0" * 25,
                "-" + "9" * 400, "123456789012345678901.5", "9" * 19]
numbers = st.one_of(st.integers(), st.integers(-(2**70), 2**70), st.sampled_from([*BEYOND, *EDGES]),
                    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(NUMBER_TEXTS).map(Literal))
#: Strings that look like numbers or ids, so the exact parse's trigger meets them inside strings too.
texts = st.one_of(st.text(max_size=6), st.sampled_from(["9" * 19, "a" + "1" * 30, hex_id(bytes(32)), "1e400"]))
documents = st.recursive(st.none() | st.booleans() | numbers | texts,
                         lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
                         max_leaves=8)


def dump(value: Any) -> str:
    """The document's JSON text, each ``Literal`` written as its own text."""
    if isinstance(value, Literal):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump(item) for item in value) + "]"
    return json.dumps(value)


def storable(value: Any) -> bool:
    """Whether the exact value (``exact``'s reading) is one a store keeps: what must succeed."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    if isinstance(value, int):
        return I64_MIN <= value <= U64_MAX
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(storable(item) for item in value)
    return all(storable(item) for item in value.values())


IDS = itertools.count()


def exact_int(literal: str) -> int | float:
    """An integer literal as Python reads it, whole; one too long for ``int()`` as infinity (refused either way)."""
    return int(literal) if len(literal) < 4000 else math.inf


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=documents, how=st.sampled_from(["write", "add"]))
def test_documents_are_stored_exactly_or_refused_unchanged(seeded: Path, document: Any, how: str) -> None:
    """``mnem write`` / ``add`` documents with every kind of number: stored as parsed exactly, or a usage refusal."""
    tried("write documents")
    text = dump(document)
    exact = json.loads(text, parse_int=exact_int)
    node = f"doc{next(IDS)}"
    before = snapshot(seeded)
    if how == "write":
        code, doc = run(seeded, ["write", "-m", "x"], f'{{"put": [{{"id": "{node}", "content": {text}}}]}}'.encode())
    else:
        code, doc = run(seeded, ["add", f"--content-json={text}", "--", node])
    if storable(exact):
        assert code == 0, doc
        if how == "add":
            assert run(seeded, ["commit", "-m", "x"])[0] == 0
        stored = run(seeded, ["show", "--node", node])[1]
        assert strict_equal(stored["content"], exact) and signs(stored["content"]) == signs(exact), (text, stored)
        event("stored")
    else:
        assert code in (1, 2) and doc["error"]["code"] == "usage", (text, doc)  # 1: upstream's "not valid JSON"
        assert snapshot(seeded) == before
        event("refused")


def signs(value: Any) -> list[float]:
    """The sign of every float in ``value``, which ``==`` ignores (``-0.0 == 0.0``)."""
    if isinstance(value, dict):
        return [sign for key in sorted(value) for sign in signs(value[key])]
    if isinstance(value, list):
        return [sign for item in value for sign in signs(item)]
    return [math.copysign(1, value)] if isinstance(value, float) else []


#: The rule ``canonical._long_integer`` keeps, as a regular expression: 19 digits or more, neither joined to a word
#: character nor to a point on either side.
STANDING_ALONE = re.compile(r"(?<![\w.])-?\d{19,}(?![\w.])")


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(alphabet=st.sampled_from("0123456789-._aZé1:,\"[]{} e+"), max_size=80)
       | st.lists(st.sampled_from(["1" * 19, "9" * 25, "-", ".", "e", "a", "é", " ", "\"", "0"]),
                  max_size=8).map("".join))
def test_the_long_integer_scan_finds_every_literal_the_rule_names(text: str) -> None:
    """Every literal the rule names is found (else it would be read as a float); in ASCII, nothing else is."""
    found = canonical._long_integer(text)
    assert found is canonical._long_integer(text.encode())
    if STANDING_ALONE.search(text):
        assert found
    elif text.isascii():
        assert not found
