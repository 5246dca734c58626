"""``Store.revert``: undo a misread billing note through the bridge, typed (issue #47).

The story is examples/support_agent.py's: the agent misreads billing note
8842 and believes customer 4821 moved to Pro; the same note set a discount
band and a contact, and the contact was corrected later by the CRM.
"""

from __future__ import annotations

import pytest

import mnem_bridge
from mnem_bridge import agents

CUSTOMER = "customer-4821"
BILLING = "billing-note-8842"
START = 1_757_000_000_000


def misread_run(store: mnem_bridge.Store) -> dict[str, str]:
    """The ticket, the misread note (three facts in one commit), and the CRM's correction of one of them."""
    ticket = agents.remember_many(store, [
        {"id": CUSTOMER, "content": "on the Enterprise plan", "source": "ticket-4821"},
        {"id": f"{CUSTOMER}/primary-contact", "content": "dana@acme.example", "source": "ticket-4821"},
    ], author="support-agent", time_ms=START)
    misread = agents.remember_many(store, [
        {"id": CUSTOMER, "content": "downgraded to Pro last month", "source": BILLING, "step": "step-31"},
        {"id": f"{CUSTOMER}/discount-band", "content": "pro-tier (10%)", "source": BILLING, "step": "step-31"},
        {"id": f"{CUSTOMER}/primary-contact", "content": "billing@acme.example", "source": BILLING},
    ], author="support-agent", time_ms=START + 60_000)
    crm = agents.remember(store, f"{CUSTOMER}/primary-contact", "dana.r@acme.example", source="crm",
                          author="crm-sync", time_ms=START + 120_000)
    return {"ticket": ticket, "misread": misread, "crm": crm}


def test_store_revert_undoes_the_note_reports_the_correction_and_blame_names_it(
        bstore: mnem_bridge.Store) -> None:
    commits = misread_run(bstore)
    preview = bstore.revert(source=BILLING, dry_run=True)
    assert preview.commit is None and len(bstore.log()) == 3  # a dry run writes nothing
    done = bstore.revert(source=BILLING, by="ops", time_ms=START + 600_000)
    assert isinstance(done, mnem_bridge.Reverted) and done.commit is not None
    assert (preview.reverted, preview.skipped) == (done.reverted, done.skipped)
    assert [(fact.id, fact.action) for fact in done.reverted] == [
        (CUSTOMER, "restore"), (f"{CUSTOMER}/discount-band", "remove")]
    plan = done.reverted[0]
    assert plan.current is not None and plan.current.content == "downgraded to Pro last month"
    assert plan.restored is not None and plan.restored.provenance.source == "ticket-4821"
    assert [by.commit for by in plan.undone] == [commits["misread"]]
    [skipped] = done.skipped
    assert skipped.id == f"{CUSTOMER}/primary-contact" and skipped.changed_by.commit == commits["crm"]
    assert mnem_bridge.Reverted.from_dict(done.to_dict()) == done  # the document round-trips

    memory = bstore.working_memory()
    assert memory[CUSTOMER].content == "on the Enterprise plan"
    assert f"{CUSTOMER}/discount-band" not in memory
    assert memory[f"{CUSTOMER}/primary-contact"].content == "dana.r@acme.example"
    why, author = bstore.blame_with_author(CUSTOMER)
    assert why.commit == done.commit.id and author == "ops"
    assert done.commit.message.startswith(f'revert --source "{BILLING}"')


def test_store_revert_refusals_are_typed_and_name_the_fix(bstore: mnem_bridge.Store) -> None:
    misread_run(bstore)
    with pytest.raises(mnem_bridge.NotFoundError) as missing:
        bstore.revert(source="billing-note-0000")
    assert '--source "billing-note-0000"' in missing.value.message
    with pytest.raises(mnem_bridge.UsageError):
        bstore.revert()
    bstore.revert(source=BILLING)
    with pytest.raises(mnem_bridge.InvalidRefError) as nothing:
        bstore.revert(source=BILLING)
    assert "nothing to revert" in nothing.value.message and "mnem write" in nothing.value.message
    with pytest.raises(mnem_bridge.UsageError):
        bstore.on("side").revert(source=BILLING)
    assert len(bstore.log()) == 4
