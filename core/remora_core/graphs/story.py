"""What the event log tells of a graph run (DESIGN §10).

A graph run's own events share its correlation id (``co_<graph_run_id>``):
``graph_started`` (its name, steps and, per step, the nodes it runs on),
``graph_step_finished`` per step and node, ``graph_completed`` at the end —
also for a run a crash interrupted, announced at the next start. That is
enough to answer ``remora.graph.status`` for any run the store remembers,
whichever process ran it: :func:`status_of` rebuilds the answer a live run
gives (:meth:`GraphRun.to_json`) from the log alone.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from remora_core.events.store import EventStore, StoredEvent

log = logging.getLogger(__name__)

MAX_STORY = 1_000_000
"""Events of one graph run read at most (steps × nodes + 2)."""

UNFINISHED = {
    "completed": "cancelled",
    "stopped": "cancelled",
    "cancelled": "cancelled",
    "interrupted": "interrupted",
}
"""How a run ended → the outcome of its steps that never finished (a live run
marks them ``cancelled`` when it ends; a crash left them ``interrupted``)."""


def correlation_of(graph_run_id: str) -> str:
    """The correlation id of a graph run's own events."""
    return f"co_{graph_run_id}"


def finished_steps(story: list[StoredEvent]) -> tuple[Counter[str], list[str]]:
    """Outcome counts of the steps that ended, and the nodes all of whose
    steps ended (in the order they did).
    """
    counts: Counter[str] = Counter()
    finished: list[str] = []
    for item in story:
        if item.event.type == "graph_step_finished":
            fields = item.event.__dict__
            counts[fields["outcome"]] += 1
            if fields["last"]:
                finished.append(fields["node_id"])
    return counts, list(dict.fromkeys(finished))


def _replay(
    story: list[StoredEvent],
) -> tuple[str, dict[tuple[str, str], str], dict[str, str]]:
    """How a graph run stands by its log: its status (``running`` when no end
    is logged: another live process runs it), the outcome of each (step, node)
    that finished, and each node's latest proposal.
    """
    status = "running"
    outcomes: dict[tuple[str, str], str] = {}
    proposals: dict[str, str] = {}
    for item in story:
        fields = item.event.__dict__
        if item.event.type == "graph_step_finished":
            outcomes[(fields["step"], fields["node_id"])] = fields["outcome"]
            if fields["proposal_id"]:
                proposals[fields["node_id"]] = fields["proposal_id"]
        elif item.event.type == "graph_completed":
            status = fields["outcome"]
        elif item.event.type == "graph_started":
            status = "running"  # begun, or resumed after an interruption
    return status, outcomes, proposals


async def status_of(events: EventStore, graph_run_id: str) -> dict[str, Any] | None:
    """Steps × nodes with outcomes of a graph run the log remembers; None if
    it holds no ``graph_started`` for it.
    """
    story = await events.for_correlation(correlation_of(graph_run_id), MAX_STORY)
    started = next((s for s in story if s.event.type == "graph_started"), None)
    if started is None:
        return None
    begun = started.event.__dict__
    status, outcomes, proposals = _replay(story)
    targets: dict[str, tuple[str, ...]] = dict(begun["targets"])
    for step, node in outcomes:  # a log from before targets were recorded
        if node not in targets.setdefault(step, ()):
            targets[step] += (node,)
    left = UNFINISHED.get(status, "pending")
    steps = [
        {
            "step": step,
            "nodes": {node: outcomes.get((step, node), left) for node in nodes},
        }
        for step in dict.fromkeys([*begun["steps"], *targets])
        for nodes in [targets.get(step, ())]
    ]
    counts = Counter(o for step in steps for o in step["nodes"].values())
    return {
        "graph_run_id": graph_run_id,
        "name": begun["name"],
        "status": status,
        "counts": dict(counts),
        "steps": steps,
        "proposals": proposals,
    }


def resumable(
    story: list[StoredEvent],
) -> tuple[dict[str, Any], dict[tuple[str, str], str], dict[str, str]]:
    """What an interrupted run's log holds to go on: its first
    ``graph_started``'s fields, the outcome of each (step, node) that finished
    and each node's latest proposal. ValueError saying why it cannot go on.
    """
    begun = [s.event.__dict__ for s in story if s.event.type == "graph_started"]
    if not begun:
        raise ValueError("the log holds no start of it")
    status, outcomes, proposals = _replay(story)
    if status != "interrupted":
        raise ValueError(f"it is {status}: only an interrupted run goes on")
    return dict(begun[0]), outcomes, proposals


async def recent_runs(events: EventStore, limit: int) -> list[dict[str, Any]]:
    """The latest graph runs the log remembers, newest first: each one's
    status (:func:`status_of` without its steps) and when it started.
    """
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    for started in await events.latest_of_types(("graph_started",), limit):
        graph_run_id = started.event.__dict__["graph_run_id"]
        if graph_run_id in seen:
            continue  # a resumed run is started twice: listed once
        seen.add(graph_run_id)
        status = await status_of(events, graph_run_id)
        if status is not None:
            del status["steps"]
            found.append({**status, "started_at": started.event.timestamp})
    return found
