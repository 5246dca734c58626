"""Node ids for namespaced keys: upstream's ids for plain labels, exact round trips for the rest."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from mnem_langgraph.keys import check_op, decode_part, encode_part, node_id, parse_node_id

#: Text with the two special characters, unicode and no lone surrogates (ids are UTF-8).
text = st.text(st.characters(blacklist_categories=("Cs",)) | st.sampled_from(":%3A25"), max_size=12)
label = text.filter(lambda s: s and "." not in s and "\x00" not in s)


def test_plain_labels_give_upstreams_ids():
    assert node_id(("memories", "u1"), "plan") == "memories:u1:plan"
    assert node_id(("prefs",), "") == "prefs:"
    assert node_id(("日本", "ü"), "ключ") == "日本:ü:ключ"


def test_only_the_separator_and_the_escape_are_escaped():
    assert node_id(("a:b",), "k") == "a%3Ab:k"
    assert node_id(("50%",), "x:y%z") == "50%25:x%3Ay%25z"
    assert node_id(("%3A",), "%25") == "%253A:%2525"


@given(st.lists(label, min_size=1, max_size=4), text)
def test_every_namespace_and_key_round_trips(namespace, key):
    assert parse_node_id(node_id(tuple(namespace), key)) == (tuple(namespace), key)


@given(text)
def test_decode_inverts_encode(part):
    assert decode_part(encode_part(part)) == part
    assert ":" not in encode_part(part)


@pytest.mark.parametrize(
    "foreign",
    [
        "plan",  # no namespace: an MCP remember id
        "ns:50%off",  # a % that is no escape of ours
        "ns:%3a",  # lower-case escape: we only write %3A
        ":key",  # empty label
        "a.b:key",  # a label BaseStore refuses
        "ns::key",  # empty middle label
        ".checkpoint:t1::c:1ef",  # a checkpoint's node (MnemosyneSaver's layout): graph state, never an item
    ],
)
def test_ids_no_put_could_write_are_not_items(foreign):
    assert parse_node_id(foreign) is None


def test_keys_may_hold_dots_and_be_empty():
    assert parse_node_id("ns:user.name") == (("ns",), "user.name")
    assert parse_node_id("ns:") == (("ns",), "")


def test_check_op_applies_puts_rules_inside_batch():
    check_op(PutOp(("ok",), "k", {"v": 1}))
    check_op(PutOp((), "k", None))  # a delete: labels only, as BaseStore.delete
    check_op(PutOp(("langgraph", "x"), "k", None))
    check_op(PutOp(("langgraph", "x"), "k", {"v": 1}))  # the reserved root is put()'s rule, not batch's
    check_op(GetOp(("langgraph",), "k"))
    for bad in (
        PutOp((), "k", {"v": 1}),
        PutOp(("a.b",), "k", {"v": 1}),
        GetOp(("",), "k"),
        SearchOp(("x\x00",)),
        ListNamespacesOp((MatchCondition("prefix", ("a.b",)),)),
    ):
        with pytest.raises(InvalidNamespaceError):
            check_op(bad)
    with pytest.raises(ValueError, match="Unknown operation type"):
        check_op(("not", "an", "op"))  # type: ignore[arg-type]
