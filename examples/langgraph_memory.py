"""A support agent whose LangGraph long-term memory is a Mnemosyne store (ADR-0016's LangGraph example).

Run it: ``python examples/langgraph_memory.py [DIR]``.  The store is created
in DIR (kept afterwards, for ``mnem log`` / ``mnem blame``), or in a
temporary directory that is removed at the end.  It needs no model and no
network: the "agent" is a compiled ``StateGraph`` whose nodes read a ticket,
record beliefs with provenance through ``runtime.store``, and check a
hunch on a hypothesis branch before believing it.

The story, over two conversation threads that share one memory:

1. Thread 1: the customer says they are on the pro plan and have "about 40
   seats".  The agent records the plan at once (the customer said so), but
   the seat count is a hunch: it branches, records it there, checks the
   billing export, finds it confirmed and merges the branch.
2. Thread 2, a new conversation: the agent already knows the plan (the
   memory is cross-thread).  The customer sounds unhappy; the agent's hunch
   "they want to downgrade" goes on a branch, the ticket does not support
   it, and the branch is abandoned: main never believed it.
3. ``why`` explains the seat count: the commit, and the billing export and
   observation that were passed in ``_meta``.  ``at`` shows what the agent
   knew before the hypothesis was merged.

The script prints the story and ends by asserting it, so it runs in the
test suite.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

import mnem_bridge
from mnem_langgraph import MnemosyneStore

CUSTOMER = ("customers", "acme")

#: What the billing system would say if asked (the agent's "tool").
BILLING_EXPORT = {"id": "billing-export-2291", "acme": {"plan": "pro", "seats": 40}}

TICKETS = {
    "thread-1": {"id": "ticket-4411", "text": "Hi, we're on the pro plan with about 40 seats; invoices look off."},
    "thread-2": {"id": "ticket-4502", "text": "This is the third time I've asked. What plan are we even on?"},
}


class Turn(TypedDict, total=False):
    """One conversation turn: the ticket in, the hypothesis branch and key it opened, the reply out."""

    ticket: dict[str, str]
    hunch: str
    hunch_key: str
    reply: str


def say(line: str) -> None:
    print(f"  {line}")


def read_ticket(state: Turn, runtime: Runtime) -> Turn:
    """Record what the customer stated outright, with its source, on main."""
    ticket = state["ticket"]
    store = runtime.store
    store.put(CUSTOMER, "last_contact", {"ticket": ticket["id"], "_meta": {"source": ticket["id"]}})
    if "pro plan" in ticket["text"]:
        store.put(CUSTOMER, "plan", {"tier": "pro", "_meta": {
            "source": ticket["id"], "step": "read_ticket", "observation": "customer says: pro plan"}})
        say(f"read_ticket: recorded plan=pro (source {ticket['id']})")
    return {}


def open_hunch(state: Turn, runtime: Runtime) -> Turn:
    """A guess goes on its own branch first, so main only ever holds what was checked."""
    ticket = state["ticket"]
    store: MnemosyneStore = runtime.store  # type: ignore[assignment]
    if "40 seats" in ticket["text"]:
        key, value = "seats", {"count": 40, "_meta": {
            "source": BILLING_EXPORT["id"], "step": "open_hunch",
            "observation": "chat says about 40 seats; billing export lists 40"}}
    elif "third time" in ticket["text"]:
        key, value = "intent", {"wants": "downgrade", "_meta": {
            "source": ticket["id"], "step": "open_hunch", "note": "frustrated tone"}}
    else:
        return {}
    branch = store.branch(f"hypothesis/{ticket['id']}")
    store.switch(branch)
    try:
        store.put(CUSTOMER, key, value)
    finally:
        store.switch("main")
    say(f"open_hunch: on {branch}, tentatively {key}={_shown(value)}")
    return {"hunch": branch, "hunch_key": key}


def settle_hunch(state: Turn, runtime: Runtime) -> Turn:
    """Check the hunch against the evidence, note the check on main, then merge or abandon the branch."""
    branch, key = state.get("hunch"), state.get("hunch_key")
    if branch is None:
        return {}
    store: MnemosyneStore = runtime.store  # type: ignore[assignment]
    guess = store.at(branch).get(CUSTOMER, key).value
    if key == "seats":
        evidence, agrees = BILLING_EXPORT["id"], guess["count"] == BILLING_EXPORT["acme"]["seats"]
    else:
        text = state["ticket"]["text"]
        evidence, agrees = state["ticket"]["id"], "downgrade" in text or "cancel" in text
    store.put(CUSTOMER, "last_check", {"hunch": key, "agrees": agrees, "_meta": {
        "source": evidence, "step": "settle_hunch"}})
    if agrees:
        result = store.merge(branch)
        say(f"settle_hunch: {evidence} agrees; merged {branch} ({result.status})")
    else:
        say(f"settle_hunch: {evidence} does not support it; abandoned {branch}, main never believed it")
    return {}


def answer(state: Turn, runtime: Runtime) -> Turn:
    """Reply from long-term memory, whichever thread wrote it."""
    plan = runtime.store.get(CUSTOMER, "plan")
    seats = runtime.store.get(CUSTOMER, "seats")
    reply = "I don't have your plan on file yet."
    if plan is not None:
        reply = f"You're on the {plan.value['tier']} plan"
        reply += f" with {seats.value['count']} seats." if seats is not None else "."
    say(f"answer: {reply!r}")
    return {"reply": reply}


def _shown(value: dict) -> str:
    return str({k: v for k, v in value.items() if k != "_meta"})


def build(store: MnemosyneStore):
    """The agent: read the ticket, open a hunch on a branch, settle it, answer; memory in ``store``."""
    graph = StateGraph(Turn)
    graph.add_node("read_ticket", read_ticket)
    graph.add_node("open_hunch", open_hunch)
    graph.add_node("settle_hunch", settle_hunch)
    graph.add_node("answer", answer)
    graph.add_edge(START, "read_ticket")
    graph.add_edge("read_ticket", "open_hunch")
    graph.add_edge("open_hunch", "settle_hunch")
    graph.add_edge("settle_hunch", "answer")
    graph.add_edge("answer", END)
    return graph.compile(store=store, checkpointer=InMemorySaver())


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        return run(Path(argv[1]))
    with tempfile.TemporaryDirectory(prefix="mnem-langgraph-") as scratch:
        return run(Path(scratch))


def run(where: Path) -> int:
    """Tell the story with a new store at ``where``; returns the exit status."""
    mnem_bridge.init(where).close()
    print(f"memory store: {where}")
    with MnemosyneStore(where, author="support-agent") as store:
        agent = build(store)
        replies = {}
        for thread, ticket in TICKETS.items():
            print(f"\n{thread} ({ticket['id']}): {ticket['text']!r}")
            out = agent.invoke({"ticket": ticket}, {"configurable": {"thread_id": thread}})
            replies[thread] = out["reply"]

        print("\nwhy do we believe acme has 40 seats?")
        why = store.why(CUSTOMER, "seats")
        log = store.history(limit=50)
        written = next(c for c in log if c.id == why.commit)
        merge = next(c for c in log if len(c.parents) == 2)
        say(f"commit {why.commit[:12]} {written.message!r} by {written.author}, on the hypothesis branch")
        say(f"source={why.provenance.source} step={why.provenance.agent_step}")
        say(f"observation={why.provenance.observation!r}")
        say(f"merged into main by {merge.id[:12]} {merge.message!r}")

        print("\nwhat did main know just before the merge?")
        before = store.at(merge.parents[0])
        say(f"at {merge.parents[0][:12]}: {[(i.key, i.value) for i in before.search(CUSTOMER)]}")
        abandoned = store.at("hypothesis/ticket-4502").get(CUSTOMER, "intent")
        say(f"the abandoned branch still holds its hunch: intent={abandoned.value}")

        print("\nhistory of main:")
        for c in log:
            say(f"{c.id[:12]} {c.message}")

        seats = store.get(CUSTOMER, "seats")
        assert replies["thread-2"] == "You're on the pro plan with 40 seats.", replies
        assert store.get(CUSTOMER, "intent") is None
        assert seats.value == {"count": 40} and seats.updated_at.timestamp() * 1000 == written.time
        assert why.provenance.source == "billing-export-2291" and why.provenance.agent_step == "open_hunch"
        assert written.message == "put customers:acme:seats" and written.author == "support-agent"
        assert merge.parents[1] == why.commit and merge.message == "merge hypothesis/ticket-4411 into main"
        assert before.get(CUSTOMER, "seats") is None and before.get(CUSTOMER, "plan").value == {"tier": "pro"}
        assert abandoned.value == {"wants": "downgrade"}
    print("\nok: the memory tells the story")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
