"""Object ids are byte-identical to upstream's: the six golden vectors and derived ones."""

import pytest

from mnem_store.canonical import encode, object_id
from mnem_store.objects import Commit, MemoryNode, Provenance, State, encode_object

NOTE_MINIMAL = MemoryNode("greeting", "hello")
NOTE_FULL = MemoryNode(
    "customer-4821",
    {"plan": "enterprise", "seats": 40},
    "note",
    Provenance("triage", "ticket-4821 body", "read-ticket", "ticket-4821", "first contact"),
    1757000000000,
)
ID_MINIMAL = bytes.fromhex("5107a6e4f686efec31950bf3171e7b4affd3c83697e8ab5182dc4a5f867cce10")
ID_FULL = bytes.fromhex("85ff5bf72e74962be19991ba2f67edeb71212d80fc17a9abc83f0aedf228f8ec")
ID_STATE_EMPTY = bytes.fromhex("d6f3970d8ebe9b9ed1a48d4433b2872b324aa84e97bab1cfbfa50a112a620295")
ID_STATE_ONE = bytes.fromhex("d1cdd28f6540e9e7a344554add2bd056bbf3717e7680833582fc463435446991")
ID_ROOT = bytes.fromhex("925570c5e44700e4e36d74cffeaa010cbf3caeecb364a383f955ff835d088814")

UPSTREAM = [
    (
        "note_minimal",
        NOTE_MINIMAL,
        ID_MINIMAL,
        "a4626964686772656574696e67646b696e646b6d656d6f72795f6e6f646567636f6e74656e746568656c6c6f6c636f6e74656e745f6b696e64646e6f7465",
    ),
    (
        "note_full",
        NOTE_FULL,
        ID_FULL,
        "a66269646d637573746f6d65722d34383231646b696e646b6d656d6f72795f6e6f646567636f6e74656e74a264706c616e6a656e746572707269736565736561747318286a6576656e745f74696d651b00000199155c62006a70726f76656e616e6365a5646e6f74656d666972737420636f6e7461637466736f757263656b7469636b65742d3438323169746f6f6c5f63616c6c6b726561642d7469636b65746a6167656e745f73746570667472696167656b6f62736572766174696f6e707469636b65742d3438323120626f64796c636f6e74656e745f6b696e64646e6f7465",
    ),
    ("state_empty", State({}), ID_STATE_EMPTY, "a2646b696e64657374617465656e6f646573a0"),
    (
        "state_one",
        State({"greeting": ID_MINIMAL}),
        ID_STATE_ONE,
        "a2646b696e64657374617465656e6f646573a1686772656574696e6758205107a6e4f686efec31950bf3171e7b4affd3c83697e8ab5182dc4a5f867cce10",
    ),
    (
        "commit_root",
        Commit((), ID_STATE_ONE, "first commit", "agent", 1757000000000),
        ID_ROOT,
        "a6646b696e6466636f6d6d69746474696d651b00000199155c62006573746174655820d1cdd28f6540e9e7a344554add2bd056bbf3717e7680833582fc46343544699166617574686f72656167656e74676d6573736167656c666972737420636f6d6d697467706172656e747380",
    ),
    (
        "commit_child",
        Commit((ID_ROOT,), ID_STATE_EMPTY, "second", "agent", 1757000060000),
        bytes.fromhex("fa02c3c4d1d9bdad0adb3f8bddd3ed9f36810e6158ef40d5467e38a579d4d447"),
        "a6646b696e6466636f6d6d69746474696d651b00000199155d4c606573746174655820d6f3970d8ebe9b9ed1a48d4433b2872b324aa84e97bab1cfbfa50a112a62029566617574686f72656167656e74676d657373616765667365636f6e6467706172656e7473815820925570c5e44700e4e36d74cffeaa010cbf3caeecb364a383f955ff835d088814",
    ),
]


@pytest.mark.parametrize("name,obj,expected_id,expected_cbor", UPSTREAM, ids=[row[0] for row in UPSTREAM])
def test_upstream_golden_vector(name, obj, expected_id, expected_cbor):
    raw, data = encode_object(obj)
    assert data.hex() == expected_cbor
    assert raw == expected_id


DERIVED = [
    ("node_half", MemoryNode("x", 1.5), "89423987753e2fa99ad1806ce23d06b8ab1bbfcc98454ae314dfc15f5547ba44"),
    ("node_float", MemoryNode("pi", 3.14159), "e4dc84000e7a0f5bd8b0f0ec77e6c685b77933251c5fe06e269a985ba7ef8cb7"),
    (
        "node_mixed",
        MemoryNode("n", {"b": [1, -1, True, None, "s"], "aa": {"zz": 0, "a": -1000}}, event_time=-5),
        "5024f80ba0f98c2f5a3481f7dcff7d9e2cbcc1bc149038e43a00b6fbc397eec6",
    ),
    (
        "state_two",
        State({"b": ID_MINIMAL, "aa": ID_FULL}),
        "91eb76c0982eaacea98336ce4e1cf1f2bd5e7128c022760d1572b1f4b9a54906",
    ),
    (
        "benchmark_golden",
        MemoryNode("canonical", {"plan": "Enterprise", "seats": 40}, provenance=Provenance(source="ticket-1"),
                   event_time=1757000000000),
        "a197a6c57aa46723469daf377bcc2336b42ac95f155dda456f5fa36f4b98bb11",
    ),
]


@pytest.mark.parametrize("name,obj,expected", DERIVED, ids=[row[0] for row in DERIVED])
def test_derived_vector(name, obj, expected):
    assert encode_object(obj)[0].hex() == expected


@pytest.mark.parametrize(
    "value,cbor_hex",
    [(1.5, "f93e00"), (1.0, "f93c00"), (-0.0, "f98000"), (100.0, "f95640"), (1e10, "fa501502f9"),
     (0.1, "fb3fb999999999999a")],
)
def test_floats_use_the_shortest_lossless_width(value, cbor_hex):
    assert encode(value).hex() == cbor_hex


def test_blake3_of_nothing_matches_upstream():
    assert object_id(b"").hex() == "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"


def test_integral_float_and_integer_are_different_objects():
    assert encode_object(MemoryNode("n", 1))[0] != encode_object(MemoryNode("n", 1.0))[0]
