"""A node's subscriptions as a person reads them: its two defaults (messages
to it, changes of its code) and its own, each with the runs it fired among
the node's latest (``runs.subscription_id``, written by ``swarm/wake.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remora_core.events.subscriptions import default_subscriptions
from remora_core.swarm.wake import describe, subscription_name

if TYPE_CHECKING:
    from remora_core.store.runs import RunRow
    from remora_core.swarm.pipeline import Swarm

RECENT_RUNS = 50
"""The node's latest runs looked through for what each subscription fired."""
SHOWN_MATCHES = 5
"""Runs listed per subscription (the count covers all of ``RECENT_RUNS``)."""


async def node_subscriptions(swarm: Swarm, agent_id: str) -> list[dict[str, Any]]:
    """The agent's subscriptions, defaults first, each with the runs it
    fired among the node's latest :data:`RECENT_RUNS`.
    """
    rows = await swarm.runs.recent(status=None, node_id=agent_id, limit=RECENT_RUNS)
    triggers = {
        s.event.id: s.event
        for s in await swarm.events.by_ids(
            [r.trigger_event_id for r in rows if r.trigger_event_id]
        )
    }
    fired: dict[str, list[RunRow]] = {}
    for row in rows:
        if row.subscription_id is not None:
            fired.setdefault(row.subscription_id, []).append(row)
    found = [*default_subscriptions(agent_id), *swarm.index.of_agent(agent_id)]
    listed = []
    for subscription in found:
        runs = fired.get(subscription.id, [])
        listed.append(
            {
                "id": subscription.id,
                "default": subscription.default,
                "pattern": subscription.pattern.model_dump(exclude_none=True),
                "text": subscription_name(subscription.id)
                if subscription.default
                else describe(subscription.pattern),
                "created_at": subscription.created_at or None,
                "fired": len(runs),
                "matched": [_match(row, triggers) for row in runs[:SHOWN_MATCHES]],
            }
        )
    return listed


def _match(row: RunRow, triggers: dict[str, Any]) -> dict[str, Any]:
    """One run a subscription fired: the run, its trigger event and when."""
    event = triggers.get(row.trigger_event_id or "")
    return {
        "run_id": row.id,
        "event_id": row.trigger_event_id,
        "event_type": event.type if event is not None else None,
        "at": row.started_at,
    }


RUN_ENDS = ("answer", "failure", "cancelled", "interrupted")
"""Conversation entries that end a run (they say what woke it)."""


async def name_wakers(swarm: Swarm, entries: list[dict[str, Any]]) -> None:
    """Add ``woken_by`` (the subscription that fired, the event's type) to
    the conversation entries that end a run.
    """
    ends = [e for e in entries if e["role"] == "agent" and e["kind"] in RUN_ENDS]
    rows = await swarm.runs.by_ids([e["run_id"] for e in ends if e["run_id"]])
    fired = {r.trigger_event_id: r for r in rows.values() if r.subscription_id}
    types = {
        s.event.id: s.event.type
        for s in await swarm.events.by_ids([t for t in fired if t])
    }
    for entry in ends:
        row = rows.get(entry["run_id"] or "")
        if row is None or row.subscription_id is None:
            continue
        entry["woken_by"] = {
            "id": row.subscription_id,
            "text": subscription_name(row.subscription_id) or row.subscription_id,
            "event_type": types.get(row.trigger_event_id or ""),
        }
