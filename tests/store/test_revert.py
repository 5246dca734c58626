"""``mnem revert``: one commit undoes every fact a source, step, observation, author or commit set (issue #47).

The running example is upstream's support agent (examples/support_agent.py):
a misread billing note (``billing-note-8842``, step 31) makes the agent
believe customer 4821 moved to Pro, and the same note sets other facts.
One of them was corrected later by another source; the revert must report
it and leave it alone.  Both backends (the ``store`` fixture).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import run_mnem, store_fingerprint

CUSTOMER = "customer-4821"
BILLING = "billing-note-8842"
START = 1_757_000_000_000


def mnem_json(store: Path, *args: str, input: str | None = None) -> Any:
    run = run_mnem("--json", *args, cwd=store, input=input)
    assert run.code == 0, run.out + run.err
    return json.loads(run.out)


def refused(store: Path, *args: str) -> dict[str, Any]:
    run = run_mnem("--json", *args, cwd=store)
    assert run.code != 0, run.out
    error: dict[str, Any] = json.loads(run.out)["error"]
    return error


def write(store: Path, minute: int, author: str, message: str, *puts: dict[str, Any],
          delete: tuple[str, ...] = ()) -> str:
    done = mnem_json(store, "write", "-m", message, f"--author={author}", f"--time={START + 60_000 * minute}",
                     input=json.dumps({"put": list(puts), "delete": list(delete)}))
    commit: str = done["commit"]["id"]
    return commit


def misread_run(store: Path) -> dict[str, str]:
    """The agent's run: the ticket, the misread billing note (twice for the plan), a correction by the CRM."""
    return {
        "ticket": write(store, 0, "support-agent", "open the case",
                        {"id": CUSTOMER, "content": "on the Enterprise plan", "source": "ticket-4821"},
                        {"id": f"{CUSTOMER}/primary-contact", "content": "dana@acme.example", "source": "ticket-4821"},
                        {"id": f"{CUSTOMER}/seats", "content": 240, "source": "ticket-4821"}),
        "misread": write(store, 1, "support-agent", "update the plan tier from billing",
                         {"id": CUSTOMER, "content": "downgraded to Pro last month", "source": BILLING,
                          "step": "step-31", "observation": "billing note 8842: 'moved to Pro pricing'"},
                         {"id": f"{CUSTOMER}/discount-band", "content": "pro-tier (10%)", "source": BILLING,
                          "step": "step-31"},
                         {"id": f"{CUSTOMER}/primary-contact", "content": "billing@acme.example", "source": BILLING,
                          "step": "step-31"}),
        "again": write(store, 2, "support-agent", "confirm the plan tier from billing",
                       {"id": CUSTOMER, "content": "on the Pro plan", "source": BILLING, "step": "step-32"}),
        "crm": write(store, 3, "crm-sync", "the CRM's contact",
                     {"id": f"{CUSTOMER}/primary-contact", "content": "dana.r@acme.example", "source": "crm"}),
    }


def content(store: Path, node_id: str) -> Any:
    return mnem_json(store, "show", f"--node={node_id}")["content"] if node_id in mnem_json(store, "ls") else None


def test_one_revert_undoes_the_misread_billing_note_and_why_names_the_revert(store: Path) -> None:
    commits = misread_run(store)
    done = mnem_json(store, "revert", f"--source={BILLING}", "--by=ops", f"--time={START + 600_000}")
    restored = {fact["id"]: fact for fact in done["reverted"]}
    assert {fact_id: fact["action"] for fact_id, fact in restored.items()} == {
        CUSTOMER: "restore", f"{CUSTOMER}/discount-band": "remove"}
    # the note wrote the plan twice in a row: the value before the first comes back, whole (provenance too)
    assert restored[CUSTOMER]["current"]["content"] == "on the Pro plan"
    assert restored[CUSTOMER]["restored"]["provenance"]["source"] == "ticket-4821"
    assert [by["commit"] for by in restored[CUSTOMER]["undone"]] == [commits["again"], commits["misread"]]
    assert restored[f"{CUSTOMER}/discount-band"]["restored"] is None
    # corrected since by the CRM: reported, not overwritten
    [skipped] = done["skipped"]
    assert skipped["id"] == f"{CUSTOMER}/primary-contact"
    assert skipped["changed_by"]["commit"] == commits["crm"] and skipped["changed_by"]["author"] == "crm-sync"
    assert [by["commit"] for by in skipped["undone"]] == [commits["misread"]]

    assert content(store, CUSTOMER) == "on the Enterprise plan"
    assert content(store, f"{CUSTOMER}/discount-band") is None
    assert content(store, f"{CUSTOMER}/primary-contact") == "dana.r@acme.example"
    assert content(store, f"{CUSTOMER}/seats") == 240
    log = mnem_json(store, "log")
    assert len(log) == 5 and log[0]["id"] == done["commit"]["id"]
    assert log[0]["author"] == "ops"
    assert log[0]["message"] == (f'revert --source "{BILLING}": restore {CUSTOMER}; remove {CUSTOMER}/discount-band')
    why = mnem_json(store, "blame", CUSTOMER)  # what `why` answers: the revert commit, and the ticket's provenance
    assert why["commit"] == done["commit"]["id"] and why["author"] == "ops"
    assert why["node"]["provenance"]["source"] == "ticket-4821"
    assert mnem_json(store, "verify")["ok"] is True


def test_a_second_revert_has_nothing_to_do_and_writes_nothing(store: Path) -> None:
    misread_run(store)
    mnem_json(store, "revert", f"--source={BILLING}")
    before = store_fingerprint(store)
    error = refused(store, "revert", f"--source={BILLING}")
    assert error["code"] == "invalid_ref"
    assert "nothing to revert" in error["message"] and f"{CUSTOMER}/primary-contact" in error["message"]
    assert "mnem write" in error["message"]  # the fix is named
    assert store_fingerprint(store) == before


def test_a_dry_run_shows_the_fact_level_diff_and_writes_nothing(store: Path) -> None:
    misread_run(store)
    before = store_fingerprint(store)
    preview = mnem_json(store, "revert", f"--source={BILLING}", "--dry-run")
    assert preview["commit"] is None
    assert store_fingerprint(store) == before
    text = run_mnem("revert", f"--source={BILLING}", "--dry-run", cwd=store)
    assert text.code == 0
    assert f'restore {CUSTOMER}: "on the Pro plan" -> "on the Enterprise plan"' in text.out
    assert f"skipped {CUSTOMER}/primary-contact" in text.out and "dry run: nothing written" in text.out
    assert store_fingerprint(store) == before
    done = mnem_json(store, "revert", f"--source={BILLING}")
    assert (preview["reverted"], preview["skipped"]) == (done["reverted"], done["skipped"])


def test_every_field_given_must_hold_so_a_step_undoes_only_its_own_version(store: Path) -> None:
    misread_run(store)
    done = mnem_json(store, "revert", f"--source={BILLING}", "--step=step-32")
    assert [fact["id"] for fact in done["reverted"]] == [CUSTOMER] and done["skipped"] == []
    assert content(store, CUSTOMER) == "downgraded to Pro last month"  # step-31's version stays
    assert content(store, f"{CUSTOMER}/discount-band") == "pro-tier (10%)"


def test_a_commit_or_an_author_is_reverted_removals_included(store: Path) -> None:
    commits = misread_run(store)
    dropped = write(store, 4, "cleanup-bot", "drop the seats", delete=(f"{CUSTOMER}/seats",))
    done = mnem_json(store, "revert", f"--commit={dropped[:12]}")
    assert [(fact["id"], fact["action"], fact["current"]) for fact in done["reverted"]] == [
        (f"{CUSTOMER}/seats", "restore", None)]
    assert content(store, f"{CUSTOMER}/seats") == 240
    by_author = mnem_json(store, "revert", "--author=crm-sync")
    assert [fact["id"] for fact in by_author["reverted"]] == [f"{CUSTOMER}/primary-contact"]
    assert content(store, f"{CUSTOMER}/primary-contact") == "billing@acme.example"
    assert commits["crm"] in [by["commit"] for by in by_author["reverted"][0]["undone"]]


def test_a_value_merged_in_from_a_branch_goes_back_to_the_value_before_its_branch_wrote_it(store: Path) -> None:
    write(store, 0, "agent", "open", {"id": "plan", "content": "enterprise", "source": "ticket"})
    mnem_json(store, "branch", "billing")
    mnem_json(store, "checkout", "billing")
    side = write(store, 1, "agent", "misread", {"id": "plan", "content": "pro", "source": BILLING})
    mnem_json(store, "checkout", "main")
    write(store, 2, "agent", "unrelated", {"id": "seats", "content": 240, "source": "ticket"})
    merged = mnem_json(store, "merge", "billing", f"--time={START + 180_000}")
    assert merged["status"] == "merged"
    done = mnem_json(store, "revert", f"--source={BILLING}")
    [fact] = done["reverted"]
    assert fact["restored"]["content"] == "enterprise" and [by["commit"] for by in fact["undone"]] == [side]
    assert content(store, "plan") == "enterprise" and content(store, "seats") == 240


def test_what_matches_nothing_is_refused_with_what_was_searched_and_changes_nothing(store: Path) -> None:
    misread_run(store)
    before = store_fingerprint(store)
    error = refused(store, "revert", "--source=billing-note-0000")
    assert error["code"] == "not_found" and '--source "billing-note-0000"' in error["message"]
    assert "mnem blame" in error["message"]
    assert refused(store, "revert")["code"] == "usage"
    assert refused(store, "revert", "--commit=ffffffff")["code"] == "invalid_ref"
    assert store_fingerprint(store) == before
    assert "revert" in mnem_json(store, "--version")["features"]


def test_a_value_whose_bytes_were_redacted_comes_back_as_that_same_redacted_version(store: Path) -> None:
    write(store, 0, "agent", "the token", {"id": "api-key", "content": "sk-live-0123456789", "source": "chat"})
    before = mnem_json(store, "ls", "--objects")["nodes"]["api-key"]
    write(store, 1, "agent", "a poisoned document", {"id": "api-key", "content": "sk-attacker", "source": "doc-666"})
    mnem_json(store, "redact", "--source=chat", "--reason=leaked token")
    done = mnem_json(store, "revert", "--source=doc-666")
    [fact] = done["reverted"]
    assert fact["restored"]["content"] is None and fact["restored"]["redacted"]["reason"] == "leaked token"
    # the very object it was (never decoded and encoded again): still redacted, no bytes written back
    assert mnem_json(store, "ls", "--objects")["nodes"]["api-key"] == before
    shown = mnem_json(store, "show", "--node=api-key")
    assert shown["content"] is None and shown["redacted"]["reason"] == "leaked token"
    assert mnem_json(store, "verify")["ok"] is True
