"""``Store.redact`` and ``Store.redactions``: a version's bytes leave history through the bridge, typed (issue #47).

The bridge keeps a worker with the store open; after the call its reads
(``working_node``, ``state_at``, ``blame``) answer a ``RedactedNode`` with the
record, every commit id stays, and bad requests are the taxonomy's typed
errors with nothing changed.
"""

from __future__ import annotations

import pytest

import mnem_bridge
from mnem_bridge import agents

SECRET = "AKIA4Z7Q2M9XK3LB8RTE"


def test_store_redact_answers_typed_results_and_reads_answer_the_record(bstore: mnem_bridge.Store) -> None:
    leaked = agents.remember(bstore, "aws-key", {"key": SECRET}, source="chat-77", author="agent", time_ms=1_000)
    agents.remember(bstore, "region", "eu-west-1", author="agent", time_ms=2_000)
    log = [commit.id for commit in bstore.log()]
    assert bstore.working_node("aws-key") == mnem_bridge.MemoryNode(
        "aws-key", {"key": SECRET}, provenance=mnem_bridge.Provenance(source="chat-77"))

    preview = bstore.redact(source="chat-77", reason="leaked key", dry_run=True)
    assert preview.dry_run and preview.records == () and [v.id for v in preview.versions] == ["aws-key"]
    assert bstore.working_node("aws-key").content == {"key": SECRET}  # a dry run changes nothing

    done = bstore.redact(source="chat-77", reason="leaked key", by="dpo")
    assert isinstance(done, mnem_bridge.Redacted) and done.complete and done.residue is None
    (version,) = done.versions
    assert (version.id, version.commits, version.redacted) == ("aws-key", (leaked,), None)
    (record,) = done.records
    assert (record.object, record.id, record.by, record.reason) == (version.object, "aws-key", "dpo", "leaked key")
    assert bstore.redactions() == [record]

    mark = mnem_bridge.Redaction(record.at, "dpo", "leaked key")
    for node in (bstore.working_node("aws-key"), bstore.state_at(leaked)["aws-key"], bstore.blame("aws-key").node):
        assert isinstance(node, mnem_bridge.RedactedNode) and isinstance(node, mnem_bridge.MemoryNode)
        assert node.content is None and node.redacted == mark
        assert node.to_dict()["redacted"] == {"at": record.at, "by": "dpo", "reason": "leaked key"}
    assert [commit.id for commit in bstore.log()] == log
    assert bstore.working_node("region") == mnem_bridge.MemoryNode("region", "eu-west-1")

    again = bstore.redact(nodes=["aws-key"], reason="second time")
    assert again.records == () and again.versions[0].redacted == mark  # the first record stays


def test_bad_redactions_are_typed_errors_and_change_nothing(bstore: mnem_bridge.Store) -> None:
    agents.remember(bstore, "aws-key", {"key": SECRET}, author="agent", time_ms=1_000)
    with pytest.raises(mnem_bridge.NotFoundError) as unknown:
        bstore.redact(nodes=["no-such-fact"], reason="r")
    assert "no-such-fact" in unknown.value.message
    with pytest.raises(mnem_bridge.UsageError):
        bstore.redact(reason="r")
    with pytest.raises(mnem_bridge.UsageError):
        bstore.redact(nodes=["aws-key"], reason=" ")
    assert bstore.redactions() == [] and bstore.working_node("aws-key").content == {"key": SECRET}
