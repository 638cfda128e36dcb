"""A node's conversation: what was said to, by and about its agent, in full.

Built from the event log (nothing else is stored): the person's messages and
answers, the agent's answers, failures and questions, messages between agents
(requests, replies, plain messages — with the other side's id and name), and
proposals with their outcome. Oldest first, texts never cut (each event's
payload is already bounded when stored, ``limits.*``). The same entries feed
``remora.agent.history``, the node card's last answer, and the CLI/MCP later.

Each entry is a dict: ``role`` (``person`` | ``agent`` | ``node`` — another
node's agent), ``kind`` (what it is, below), ``text``, ``run_id``,
``timestamp``, ``seq``, and where they apply ``from`` / ``to`` (``{id,
name}``), ``options``, ``proposal_id``; a run's end says what woke the run
(``woken_by``: the subscription that fired and the event's type).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remora_core.history.subscribed import name_wakers

if TYPE_CHECKING:
    from collections.abc import Mapping

    from remora_core.events.models import Event
    from remora_core.events.store import EventStore, StoredEvent
    from remora_core.swarm.pipeline import Swarm

CONVERSATION_TYPES = (
    "human_chat",
    "agent_message",
    "agent_completed",
    "agent_failed",
    "agent_cancelled",
    "run_interrupted",
    "agent_blocked",
    "agent_resumed",
    "rewrite_proposed",
    "rewrite_applied",
    "rewrite_rejected",
    "rewrite_stale",
)
MAX_ENTRIES = 1000
SHORT_ANSWER_LINES = 6
SHORT_ANSWER_CHARS = 600
"""An answer up to this many lines and characters is shown whole in a hover
or card; a longer one shows its beginning and says how to read it all."""


async def conversation(
    swarm: Swarm, node_id: str, limit: int = 200
) -> list[dict[str, Any]]:
    """The latest ``limit`` entries of ``node_id``'s conversation, oldest first.

    A message that started a run (a person's, or another agent's) carries the
    id of the run it started.
    """
    found = await swarm.events.conversation_of(node_id, CONVERSATION_TYPES, limit * 2)
    entries = [e for s in reversed(found) if (e := entry(s, node_id)) is not None]
    entries = entries[-limit:]
    received = {e["event_id"]: e for e in entries if e["role"] != "agent"}
    for trigger, run_id in (await swarm.runs.for_triggers(list(received))).items():
        if received[trigger]["kind"] in ("message", "request", "reply"):
            received[trigger]["run_id"] = run_id
    await name_wakers(swarm, entries)
    return entries


def entry(stored: StoredEvent, node_id: str) -> dict[str, Any] | None:
    """One event as a conversation entry of ``node_id`` (None: not part of it)."""
    event = stored.event
    fields = event.__dict__
    if fields.get("answered_by"):
        return None  # a coalesced run's end repeats the turn that answered it
    made = _made(event, node_id)
    if made is None:
        return None
    role, kind, text, extra = made
    return {
        "role": role,
        "kind": kind,
        "text": text,
        "run_id": event.run_id,
        "timestamp": event.timestamp,
        "seq": stored.seq,
        "event_id": event.id,
        **extra,
    }


def _party(agent_id: str | None, name: str) -> dict[str, Any]:
    return {"id": agent_id, "name": name or None}


def _made(event: Event, me: str) -> tuple[str, str, str, dict[str, Any]] | None:
    """(role, kind, text, extra fields) of an event, or None if not ``me``'s."""
    f = event.__dict__
    kind = event.type
    if kind == "human_chat":
        return "person", "message", f["message"], {}
    if kind == "agent_message":
        what = "request" if "request" in f["tags"] else "message"
        what = "reply" if f["reply_to"] else what
        if f["to_agent"] == me:
            return (
                "node",
                what,
                f["message"],
                {"from": _party(f["from_agent"], f["from_name"])},
            )
        if f["from_agent"] == me:
            return (
                "agent",
                what,
                f["message"],
                {"to": _party(f["to_agent"], f["to_name"])},
            )
        return None
    if f.get("agent_id") == me or f.get("node_id") == me:
        return _own(kind, f)
    return None


def _own(
    kind: str, f: Mapping[str, Any]
) -> tuple[str, str, str, dict[str, Any]] | None:
    """Entries about the node's own agent and proposals."""
    if kind == "agent_completed":
        return "agent", "answer", f["result"], {}
    if kind == "agent_failed":
        return "agent", "failure", f["error"], {}
    if kind == "agent_cancelled":
        return "agent", "cancelled", f["reason"] or "cancelled", {}
    if kind == "run_interrupted":
        return "agent", "interrupted", "the server stopped during the run", {}
    if kind == "agent_blocked":
        return (
            "agent",
            "question",
            f["question"],
            {
                "options": list(f["options"]),
                "question_id": f["question_id"],
            },
        )
    if kind == "agent_resumed":
        return (
            "person",
            "answer_given",
            f["answer"],
            {
                "question_id": f["question_id"],
                "outcome": f["outcome"],
            },
        )
    proposal = {"proposal_id": f.get("proposal_id")}
    if kind == "rewrite_proposed":
        return "agent", "proposal", f["diff"], proposal
    if kind == "rewrite_applied":
        return "person", "accepted", "accepted the proposal", proposal
    if kind == "rewrite_rejected":
        return "person", "rejected", f["feedback"] or "rejected the proposal", proposal
    if kind == "rewrite_stale":
        return "agent", "stale", f["reason"] or "the proposal went stale", proposal
    return None


async def last_answer(events: EventStore, node_id: str) -> dict[str, Any] | None:
    """The agent's latest answer for a card: the whole text when short, else
    its first lines, with ``truncated`` and the number of ``lines``.
    """
    found = await events.conversation_of(node_id, ("agent_completed",), 5)
    for stored in found:
        made = entry(stored, node_id)
        if made is None or not made["text"].strip():
            continue
        text = made["text"].strip()
        lines = text.splitlines()
        short = len(lines) <= SHORT_ANSWER_LINES and len(text) <= SHORT_ANSWER_CHARS
        shown = text if short else "\n".join(lines[:SHORT_ANSWER_LINES])
        return {
            "text": shown[:SHORT_ANSWER_CHARS],
            "truncated": not short,
            "lines": len(lines),
            "run_id": made["run_id"],
            "timestamp": made["timestamp"],
        }
    return None
