"""A support agent gets a customer's plan wrong; bisect finds when, blame finds why, one revert undoes it.

ADR-0016's first worked example, on the bridge.  The agent records what it
learns about customer 4821, one commit per belief, each with provenance
(where it came from, at which step of the run).  One observation is
misread: a billing note makes it believe the customer downgraded to Pro,
and it then derives a discount band from that.  When the customer
complains, nobody has to replay the run: ``bisect`` finds the commit where
the belief flipped, and ``blame`` names the observation behind it.  Then
one ``revert`` of the note's source gives every belief it set back the
value it had before, as one commit that ``blame`` names from then on.

Run: ``.venv/bin/python examples/support_agent.py`` (a fresh temporary store;
nothing is left behind).  The script asserts its own outcome.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import mnem_bridge
from mnem_bridge import agents

CUSTOMER = "customer-4821"
MISREAD = "downgraded to Pro last month"
START_MS = 1_757_000_000_000  # a fixed clock, so the commit ids are the same on every run


def record_the_run(store: mnem_bridge.Store) -> str:
    """What the agent learned, one commit per belief; returns the commit of the misread."""
    beliefs = [
        (CUSTOMER, "on the Enterprise plan", {"source": "ticket-4821", "step": "step-3"}),
        (f"{CUSTOMER}/primary-contact", "dana@acme.example", {"source": "ticket-4821", "step": "step-7"}),
        (f"{CUSTOMER}/open-tickets", 2, {"source": "helpdesk-export", "step": "step-12"}),
        (CUSTOMER, MISREAD, {"source": "billing-note-8842", "step": "step-31",
                             "observation": "billing note 8842: 'moved to Pro pricing last month'"}),
        (f"{CUSTOMER}/discount-band", "pro-tier (10%)", {"source": "pricing-table", "step": "step-34"}),
    ]
    commits = [
        agents.remember(store, node_id, content, author="support-agent", time_ms=START_MS + 60_000 * minute, **prov)
        for minute, (node_id, content, prov) in enumerate(beliefs)
    ]
    return commits[3]


def main() -> int:
    """Record the run, trace the wrong belief, print and assert the story."""
    with tempfile.TemporaryDirectory() as tmp, mnem_bridge.init(Path(tmp) / "agent-memory") as store:
        misread = record_the_run(store)
        history = store.log()  # newest first
        now = store.working_node(CUSTOMER)
        assert now is not None
        print(f"The agent recorded {len(history)} commits and now believes {CUSTOMER} is {now.content!r}.")
        print("The customer says they never left Enterprise. When did the agent start believing otherwise?\n")

        found, blame_at_found = store.bisect_explain(CUSTOMER, equals=MISREAD)
        position = [c.id for c in history].index(found)
        before = store.state_at(history[position].parents[0])[CUSTOMER].content
        print(f"bisect: the belief first holds at commit {found[:12]} ({history[position].message!r});")
        print(f"        just before it, the agent believed {before!r}.")

        why = store.blame(CUSTOMER)
        prov = why.provenance
        print(f"blame:  {why.node.content!r} was introduced by {why.commit[:12]},")
        print(f"        from source {prov.source} at agent step {prov.agent_step}:")
        print(f"        observation: {prov.observation}")

        derived = [node_id for commit in history[:position] for node_id in store.changed_by(commit.id)]
        print(f"\nBeliefs recorded after the misread, to review: {', '.join(derived)}.")

        undone = store.revert(source=prov.source, by="support-lead", time_ms=START_MS + 3_600_000)
        assert undone.commit is not None
        restored = store.working_node(CUSTOMER)
        assert restored is not None
        print(f"\nrevert: {len(undone.reverted)} belief(s) from {prov.source} undone in one commit, "
              f"{undone.commit.id[:12]} ({undone.commit.message!r});")
        print(f"        {CUSTOMER} is {restored.content!r} again, and blame now names that commit.")

        assert found == misread == why.commit, "bisect and blame must both land on the misread"
        assert blame_at_found is not None and blame_at_found.commit == misread
        assert (prov.source, prov.agent_step) == ("billing-note-8842", "step-31")
        assert before == "on the Enterprise plan"
        assert derived == [f"{CUSTOMER}/discount-band"]
        assert [(fact.id, fact.action) for fact in undone.reverted] == [(CUSTOMER, "restore")] and not undone.skipped
        assert restored.content == before and store.blame(CUSTOMER).commit == undone.commit.id
        print("\nOK: the wrong belief is traced to billing-note-8842 at step-31 and undone by one revert.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
