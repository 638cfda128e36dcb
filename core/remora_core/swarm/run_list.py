"""Which runs there are: queued, running, waiting for a person, and recent.

``list_runs`` joins what the runner holds in memory (turns queued behind an
agent's running turn or its cooldown, with the run id promised to the person
when there is one) with the ``runs`` table (running and finished runs) and the
events that explain them: the trigger (a person, a message from another agent,
a change of code…, and the subscription that fired it: ``wake.py``), the
outcome (the answer, the error, why it was cancelled; ``reason``
``limit_reached`` when a budget stopped it) and what it cost (``usage``:
tokens and wall time). Newest first, queued runs on top.
"""

from __future__ import annotations

import time
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from remora_core.model import AgentStatus
from remora_core.model import RunStatus as StoredStatus
from remora_core.store.runs import RUN_ENDS
from remora_core.swarm.wake import subscription_name

if TYPE_CHECKING:
    from remora_core.events.models import Event
    from remora_core.store.runs import RunRow
    from remora_core.swarm.pipeline import Swarm


class RunStatus(StrEnum):
    """A run's status as a person reads it."""

    QUEUED = "queued"
    RUNNING = "running"
    WAITING = "waiting"
    """Running, blocked on a question to a person (``ask_user``)."""
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


STORED_STATUS = {
    StoredStatus.RUNNING: RunStatus.RUNNING,
    StoredStatus.COMPLETED: RunStatus.DONE,
    StoredStatus.FAILED: RunStatus.FAILED,
    StoredStatus.CANCELLED: RunStatus.CANCELLED,
    StoredStatus.INTERRUPTED: RunStatus.INTERRUPTED,
}
"""``runs.status`` → what is shown."""
STORED_AS = {
    **{shown: stored for stored, shown in STORED_STATUS.items()},
    RunStatus.WAITING: StoredStatus.RUNNING,
}
"""What is shown → the ``runs.status`` to list (waiting runs are running)."""
END_TYPES = tuple(RUN_ENDS)
ENDED_BY_A_STOP = (RunStatus.INTERRUPTED.value, RunStatus.CANCELLED.value)
"""How a run whose question waits again ended: killed, or cancelled by a
graceful stop (``agents/questions.py``)."""
MAX_RUNS = 500


def trigger_of(event: Event | None) -> dict[str, Any]:
    """What started a run: ``{kind, text, from?}`` for a person to read."""
    if event is None:
        return {"kind": "unknown", "text": "unknown"}
    f = event.__dict__
    if event.type == "human_chat":
        return {"kind": "person", "text": "person", "message": f["message"]}
    if event.type == "agent_message":
        name = f["from_name"] or f["from_agent"]
        what = "reply" if f["reply_to"] else "message"
        return {
            "kind": what,
            "text": f"{what} from {f['from_agent']} ({name})",
            "from": {"id": f["from_agent"], "name": f["from_name"] or None},
            "message": f["message"],
        }
    if event.type == "content_changed":
        return {"kind": "change", "text": f"change of {f['path']}"}
    if event.type == "rewrite_rejected":
        return {"kind": "person", "text": "person (rejected a proposal)"}
    return {"kind": event.type, "text": event.type.replace("_", " ")}


def _outcome(event: Event | None, row: RunRow) -> str | None:
    if event is None:
        return row.error
    f = event.__dict__
    return {
        "agent_completed": f.get("result"),
        "agent_failed": f.get("error"),
        "agent_cancelled": f.get("reason") or "cancelled",
        "run_interrupted": row.error or "the server stopped during the run",
    }.get(event.type)


def _queued(swarm: Swarm, node_id: str | None) -> list[dict[str, Any]]:
    runner, found = swarm.runner, []
    for agent_id, actor in runner.actors.items():
        if node_id is not None and agent_id != node_id:
            continue
        waiting = [(actor.run_id, actor.taken[0])] if actor.taken else []
        waiting += [(runner.reserved.get(s.event.id), s) for s in actor.pending]
        for run_id, stored in waiting:
            found.append(
                {
                    "id": run_id,
                    "node": _node(swarm, agent_id),
                    "status": RunStatus.QUEUED.value,
                    "trigger": trigger_of(stored.event),
                    "started_at": None,
                    "ended_at": None,
                    "outcome": None,
                    "queued_at": stored.event.timestamp,
                }
            )
    return sorted(found, key=lambda r: r["queued_at"], reverse=True)


def _node(swarm: Swarm, node_id: str) -> dict[str, Any]:
    node = swarm.graph.get(node_id)
    return {
        "id": node_id,
        "name": node.qualified_name if node else None,
        "file_path": node.file_path if node else None,
        "line": node.span.start_line if node else None,
    }


async def list_runs(
    swarm: Swarm,
    *,
    status: RunStatus | None = None,
    node_id: str | None = None,
    limit: int = 100,
    kept: dict[str, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Queued runs, then recorded runs newest first (at most ``limit``).

    ``kept``: run id → the question it asked before a restart, unanswered
    (``agents/resuming.py``): that interrupted run shows ``waiting`` again.
    """
    queued = [] if status not in (None, RunStatus.QUEUED) else _queued(swarm, node_id)
    if status is RunStatus.QUEUED:
        return queued[:limit]
    stored_status = STORED_AS.get(status) if status is not None else None
    if status is RunStatus.WAITING and kept:
        stored_status = None  # an interrupted run may wait again
    rows = await swarm.runs.recent(status=stored_status, node_id=node_id, limit=limit)
    ids = [row.id for row in rows]
    triggers = {
        s.event.id: s.event
        for s in await swarm.events.by_ids(
            [r.trigger_event_id for r in rows if r.trigger_event_id]
        )
    }
    ends = {s.event.run_id: s.event for s in await swarm.events.of_runs(ids, END_TYPES)}
    runs = [_run(swarm, row, triggers, ends) for row in rows]
    for run in runs:
        asked = (kept or {}).get(run["id"])
        if asked is not None and run["status"] in ENDED_BY_A_STOP:
            run["status"] = RunStatus.WAITING.value
            run["question"] = asked
    if status is not None:
        runs = [r for r in runs if r["status"] == status.value]
    # A turn whose start was committed while the rows were read is a row now.
    queued = [q for q in queued if q["id"] is None or q["id"] not in ids]
    return (queued + runs)[:limit]


def _run(
    swarm: Swarm,
    row: RunRow,
    triggers: dict[str, Event],
    ends: dict[str | None, Event],
) -> dict[str, Any]:
    shown = STORED_STATUS[row.status]
    node = swarm.graph.get(row.node_id)
    blocked = node is not None and node.agent_status is AgentStatus.BLOCKED
    if shown is RunStatus.RUNNING and blocked:
        shown = RunStatus.WAITING
    end = ends.get(row.id)
    trigger = trigger_of(triggers.get(row.trigger_event_id or ""))
    if row.subscription_id is not None:
        trigger["subscription"] = {
            "id": row.subscription_id,
            "text": subscription_name(row.subscription_id),
        }
    return {
        "id": row.id,
        "node": _node(swarm, row.node_id),
        "status": shown.value,
        "trigger": trigger,
        "started_at": row.started_at,
        "ended_at": row.ended_at,
        "outcome": _outcome(end, row),
        "answered_by": end.__dict__.get("answered_by") if end else None,
        "reason": row.end_reason,
        "usage": run_usage(row),
    }


def run_usage(row: RunRow) -> dict[str, Any]:
    """What one run cost: its tokens and wall time (until now if running)."""
    ended = row.ended_at if row.ended_at is not None else time.time()
    return {
        "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens,
        "cached_tokens": row.cached_tokens,
        "tokens": row.input_tokens + row.output_tokens,
        "requests": row.requests,
        "seconds": round(max(0.0, ended - row.started_at), 3),
    }
