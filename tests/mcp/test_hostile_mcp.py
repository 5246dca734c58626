"""Hostile tool arguments: a correct result or a coded error, the server keeps serving, and errors change nothing.

Every tool of ``--tools all`` is called in process with arguments drawn from
its own input schema and then spoiled: hostile strings (control
characters, ``:``, ``..``, a leading ``-``, shell metacharacters, NUL, lone
surrogates, which JSON's ``\\ud800`` escape does carry), wrong JSON types,
missing required arguments, unknown ones, and strings of a few MB.  Each
call must end in one of:

* success, with structured content that is right for the tool (a write's
  value reads back exactly through ``recall``, type for type; a value with
  an integer beyond 64 bits is never a success: it would have been rounded);
* an ``isError`` result whose one text block starts ``<code>: `` with a code
  from the contract's taxonomy and then says something, and no traceback.

The SDK refuses schema-breaking arguments (unknown ones included: every
input schema has ``additionalProperties: false``) before our code runs; the
server answers its pydantic ``ValidationError`` with a short ``usage: ...``
line that names each argument and what was wrong with it, which is what a
model needs to retry, so those count as clear.  The fallback code ``error`` (something unforeseen) is a failure
here.  After every call a valid call must still work, and after an error the
store's fingerprint (HEAD, config, every row) must be unchanged.

NaN, Infinity and non-string object keys are not here: a JSON wire cannot
carry them (the SDK's client already turns NaN into null before sending), so
they are the bridge suite's business, where a Python caller can pass them.

hypothesis is synchronous and the client is async, so the client lives in an
anyio blocking portal (its own event-loop thread) for the whole test, and
each example calls through the portal: one server and one ``mnem`` worker
for all examples, as a real session has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pg_stores
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from conftest import store_fingerprint, strict_equal
from fuzzing import tried
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.types import CallToolResult
from mcp_support import connect

from mnem_bridge.text import is_utf8

#: The contract's codes (docs/cli-json.md); ``error``, the server's code for the unforeseen, is not among them.
CODES = frozenset({"not_found", "invalid_ref", "conflict", "corrupt_store", "format_version", "store_exists",
                   "no_store", "store_io", "busy", "usage"})
CODED = re.compile(r"^([a-z_]+): (.)", re.DOTALL)
HEX = re.compile(r"[0-9a-f]{64}")

STRINGS = ["", " ", "-", "--", "-x", "--json", "..", "a..b", "../../x", "/etc/passwd", ":", "a:b", "a=b", "HEAD",
           "main", "side", "plan", "$(touch pwned)", "`touch pwned`", "; touch pwned", "| touch pwned", "'\"", "\\",
           "a\x00b", "\x00", "\x1b[31m", "\r\n", "\u202e", "\ud800", "x\udcffy", "0000", "abcd", "feature/x"]
ANY_CHAR = st.characters(exclude_categories=())
hostile_text = st.one_of(st.sampled_from(STRINGS), st.text(ANY_CHAR, max_size=10), st.text(max_size=10),
                         st.sampled_from([("x", 2 << 20), ("é", 300_000)]).map(lambda unit: unit[0] * unit[1]))
#: Object keys: the SDK's client cannot serialise a lone surrogate in a key (values it sends as escapes).
key_text = hostile_text.filter(is_utf8)
#: Integers past 64 bits, which no store keeps exactly: a write holding one must be refused, never rounded.
BEYOND_64_BITS = [2**64, -(2**63) - 1, 10**30, -(10**400)]
json_scalar = (st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.sampled_from(BEYOND_64_BITS)
               | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([-0.0, 5e-324]) | hostile_text)
json_value = st.recursive(json_scalar, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(key_text, inner, max_size=3), max_leaves=6)
#: Something of the wrong JSON type for almost any parameter.
wrong_type = st.sampled_from([0, -1, 10**30, 1.5, True, None, [], ["a"], {}, {"id": "plan"}])




def exact(value: Any) -> bool:
    """Whether every integer in ``value`` fits 64 bits: what a store keeps exactly (docs/differences.md)."""
    if isinstance(value, dict):
        return all(exact(item) for item in value.values())
    if isinstance(value, list):
        return all(exact(item) for item in value)
    return not isinstance(value, int) or isinstance(value, bool) or -(2**63) <= value <= 2**64 - 1


def written(tool: str, arguments: dict[str, Any]) -> list[Any]:
    """The contents a write tool was asked to store."""
    if tool in ("remember", "revise"):
        return [arguments.get("content")]
    if tool == "remember_many" and isinstance(arguments.get("items"), list):
        return [item.get("content") for item in arguments["items"] if isinstance(item, dict)]
    return []


@dataclass
class Session:
    """An in-process client reached from synchronous code through a blocking portal."""

    portal: BlockingPortal
    client: Client
    root: Path
    schemas: dict[str, dict[str, Any]]

    def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        return self.portal.call(self.client.call_tool, tool, arguments)

    def ok(self, tool: str, **arguments: Any) -> Any:
        """A call that must succeed: its result, the JSON of its text."""
        result = self.call(tool, arguments)
        assert not result.is_error, result.content[0].text
        return json.loads(result.content[0].text)


@pytest.fixture
def session(store: Path) -> Iterator[Session]:
    """One server over a store with ``plan`` on ``main`` and a branch ``side``, for all of a test's examples."""
    with (start_blocking_portal() as portal,
          portal.wrap_async_context_manager(connect("in-process", pg_stores.address(store), tools="all")) as client):
        tools = portal.call(client.list_tools).tools
        opened = Session(portal, client, store, {tool.name: tool.input_schema for tool in tools})
        opened.ok("remember", id="plan", content="pro")
        opened.ok("branch", name="side")
        yield opened


def value_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A mostly well-typed, hostile value for one parameter of an input schema."""
    types = {option.get("type") for option in schema.get("anyOf", [schema])}
    if "integer" in types:
        return st.integers(-5, 1005)
    if "boolean" in types:
        return st.booleans()
    if "array" in types:  # remember_many's items, now and then with a typo'd key the schema refuses
        item = st.fixed_dictionaries({"id": hostile_text, "content": json_value}, optional={"source": hostile_text})
        typo = st.fixed_dictionaries({"id": hostile_text, "content": json_value, "sorce": hostile_text})
        return st.lists(st.one_of(item, item, item, typo), max_size=3)
    if "string" in types:
        return hostile_text
    if "object" in types:  # merge's resolutions
        return st.dictionaries(key_text, st.sampled_from(["ours", "theirs", "base", "delete", "mine"])
                               | st.fixed_dictionaries({"content": json_value}), max_size=2)
    return json_value  # content / equals: any JSON


@st.composite
def arguments_for(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool: each parameter present or not, well-typed or not; now and then an unknown one."""
    required = set(schema.get("required", []))
    arguments = {}
    for name, spec in schema["properties"].items():
        if draw(st.integers(0, 9)) < (9 if name in required else 4):  # required ones usually given
            arguments[name] = draw(value_for(spec) if draw(st.integers(0, 5)) else wrong_type)
    if draw(st.integers(0, 14)) == 0:
        arguments[draw(st.sampled_from(["unknown", "ID", "_meta"]))] = draw(json_scalar)
    return arguments


#: An error is read by a model: a few MB of echoed argument would flood its context, not explain anything.
MAX_ERROR_TEXT = 10_000


def check_error_text(text: str) -> str:
    """The error text's code, after checking it is a taxonomy code followed by a message of a readable size."""
    coded = CODED.match(text)
    assert coded is not None and coded.group(1) in CODES, text[:2000]
    assert "Traceback" not in text and "internal error" not in text, text[:2000]
    assert len(text) <= MAX_ERROR_TEXT, f"{len(text)} characters: {text[:300]!r}..."
    return coded.group(1)


def check_success(session: Session, tool: str, arguments: dict[str, Any], content: Any) -> None:
    """What a successful call must have done, tool by tool."""
    if tool in ("remember", "revise", "remember_many", "forget"):
        assert HEX.fullmatch(content["commit"]), content
        assert session.ok("history", limit=1)[0]["id"] == content["commit"]
    if tool in ("remember", "revise"):
        node = session.ok("recall", id=arguments["id"])
        assert strict_equal(node["content"], arguments["content"]), (arguments, node)
        assert node["provenance"]["source"] == arguments.get("source")
    elif tool == "remember_many":
        last = {item["id"]: item for item in arguments["items"]}
        for node_id, item in last.items():
            node = session.ok("recall", id=node_id)
            assert strict_equal(node["content"], item["content"]), (item, node)
    elif tool == "forget":
        assert session.ok("recall", id=arguments["id"]) is None
    elif tool in ("recall", "recall_at"):
        if arguments.get("id") is not None:
            assert content is None or content["id"] == arguments["id"], content
        elif arguments.get("limit") is not None or arguments.get("cursor") is not None:
            assert isinstance(content["memory"], dict) and set(content) == {"memory", "next_cursor"}, content
        else:
            assert isinstance(content, dict) and all(node["id"] == key for key, node in content.items()), content
    elif tool == "history":
        assert len(content) <= arguments.get("limit", 20)
    elif tool == "why":
        assert content["node"]["id"] == arguments["id"] and HEX.fullmatch(content["commit"])
    elif tool == "when_did":
        assert HEX.fullmatch(content["commit"])
    elif tool == "whats_new":
        assert set(content.values()) <= {"added", "modified", "removed"}
    elif tool == "branch":
        assert content == {"branch": arguments["name"]}
    elif tool == "switch":
        assert content["head"] in (f"ref: {arguments['target']}",) or HEX.fullmatch(content["head"])
        session.ok("switch", target="main")  # back, so later examples can write
    elif tool == "merge":
        assert content["status"] in ("up-to-date", "fast-forwarded", "merged", "conflicts")


def one_hostile_call(session: Session, tool: str, arguments: dict[str, Any]) -> None:
    """Call, check the outcome, and check that the server still answers a valid call."""
    before = store_fingerprint(session.root)
    result = session.call(tool, arguments)
    if result.is_error:
        assert result.structured_content is None and len(result.content) == 1
        code = check_error_text(result.content[0].text)
        event(f"{tool}: {code}")
        assert store_fingerprint(session.root) == before, (tool, arguments, result.content[0].text)
    else:
        event(f"{tool}: ok")
        assert all(exact(content) for content in written(tool, arguments)), ("stored a number it rounds", arguments)
        check_success(session, tool, arguments, json.loads(result.content[0].text))
    assert session.ok("recall", id="plan")["id"] == "plan"  # still serving


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_hostile_tool_arguments(session: Session, data: st.DataObject) -> None:
    tool = data.draw(st.sampled_from(sorted(session.schemas)))
    arguments = data.draw(arguments_for(session.schemas[tool]))
    tried("mcp tool arguments")
    one_hostile_call(session, tool, arguments)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool=st.sampled_from(["remember", "forget", "why", "recall_at", "whats_new", "switch", "merge", "nope", ""]),
       arguments=st.one_of(st.none(), st.just({}), st.dictionaries(key_text, json_value, max_size=3)))
def test_missing_and_unknown_arguments_and_tools(session: Session, tool: str, arguments: dict[str, Any] | None) -> None:
    """No arguments at all, only unknown ones, or a tool that does not exist: a ``usage`` error, and still serving."""
    tried("mcp tool arguments")
    one_hostile_call(session, tool, arguments or {})


def test_an_error_about_a_huge_argument_stays_readable(session: Session) -> None:
    """A 3 MB id echoed in the message, the rerun line or pydantic's report is cut, saying where the rest is."""
    huge = "x" * (3 << 20)
    for tool, arguments in (("why", {"id": huge}), ("switch", {"target": huge}),
                            ("merge", {"theirs": "side", "resolutions": {huge: "mine"}})):  # pydantic names the key
        result = session.call(tool, arguments)
        assert result.is_error
        text = result.content[0].text
        check_error_text(text)
        assert "more characters; the server log has the first" in text, text[:300]
    assert session.ok("recall", id="plan")["content"] == "pro"


@pytest.mark.parametrize("number", BEYOND_64_BITS, ids=["2^64", "-2^63-1", "10^30", "-10^400"])
def test_an_integer_beyond_64_bits_is_refused_by_every_write_tool(session: Session, number: int) -> None:
    """Never stored as the nearest float: a ``usage`` error saying to store it as a string, and nothing written."""
    before = store_fingerprint(session.root)
    for tool, arguments in (("remember", {"id": "n", "content": {"n": number}}),
                            ("revise", {"id": "plan", "content": [1, number]}),
                            ("remember_many", {"items": [{"id": "a", "content": 1}, {"id": "n", "content": number}]})):
        result = session.call(tool, arguments)
        assert result.is_error, (tool, result.content[0].text)
        text = result.content[0].text
        assert check_error_text(text) == "usage" and "store it as a string" in text, text
        assert store_fingerprint(session.root) == before
    assert session.ok("recall", id="plan")["content"] == "pro"
