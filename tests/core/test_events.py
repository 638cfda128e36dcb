"""Events are typed, frozen, and survive a JSON round trip unchanged (DESIGN §6)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError
from remora_core.events.models import (
    EVENT_TYPES,
    AgentMessage,
    BaseEvent,
    ContentChanged,
    HumanChat,
    TopologyChanged,
    parse_event,
)
from remora_core.events.store import StoredEvent

# One instance per event type, every type-specific field given a non-default value.
SAMPLES: dict[str, dict] = {
    "content_changed": {"path": "a.py", "node_ids": ("rm_1", "rm_2")},
    "topology_changed": {
        "path": "pkg/b.py",
        "added": ("rm_3",),
        "removed": ("rm_4",),
        "orphaned": ("rm_5",),
    },
    "human_chat": {"to_agent": "rm_1", "message": "héllo 😀"},
    "agent_message": {
        "from_agent": "rm_1",
        "to_agent": "rm_2",
        "message": "hi",
        "tags": ("review", "urgent"),
    },
    "agent_started": {"agent_id": "rm_1", "trigger_ids": ("ev_1", "ev_2")},
    "agent_completed": {"agent_id": "rm_1", "result": "done"},
    "agent_failed": {"agent_id": "rm_1", "error": "ValueError: boom"},
    "agent_cancelled": {"agent_id": "rm_1", "reason": "by the user"},
    "agent_blocked": {
        "agent_id": "rm_1",
        "question_id": "q_1",
        "question": "Which?",
        "options": ("a", "b"),
    },
    "agent_resumed": {"agent_id": "rm_1", "question_id": "q_1", "answer": "a"},
    "model_request": {"model": "qwen"},
    "model_response": {"usage": {"prompt_tokens": 10, "completion_tokens": 3}},
    "tool_called": {"tool": "read_node", "arguments": {"id": "rm_1", "n": [1, 2]}},
    "tool_result": {"tool": "read_node", "ok": False, "summary": "no such node"},
    "rewrite_proposed": {"proposal_id": "p_1", "node_id": "rm_1", "diff": "-a\n+b\n"},
    "rewrite_applied": {"proposal_id": "p_1", "node_id": "rm_1"},
    "rewrite_rejected": {"proposal_id": "p_1", "node_id": "rm_1", "feedback": "no"},
    "rewrite_stale": {"proposal_id": "p_1", "node_id": "rm_1"},
    "rewrite_not_applied": {"proposal_id": "p_1", "node_id": "rm_1", "reason": "x"},
    "proposal_checked": {
        "proposal_id": "p_1",
        "node_id": "rm_1",
        "check": {"name": "tests", "ok": True, "detail": "2 passed"},
    },
    "checkpoint_created": {"checkpoint_id": "c_1"},
    "checkpoint_restored": {"checkpoint_id": "c_1"},
    "graph_started": {"graph_run_id": "gr_1", "name": "docs"},
    "graph_step_finished": {
        "graph_run_id": "gr_1",
        "step": "docs",
        "node_id": "rm_1",
        "outcome": "failed",
    },
    "graph_completed": {"graph_run_id": "gr_1", "outcome": "stopped"},
    "trigger_refused": {
        "agent_id": "rm_1",
        "trigger_id": "ev_1",
        "rule": "cycle",
        "reason": "rm_1 already ran",
    },
    "run_interrupted": {"agent_id": "rm_1"},
    "limit_reached": {
        "agent_id": "rm_1",
        "limit": "limits.tool_calls_per_run",
        "reason": "this run made 50 tool calls",
    },
}

ENVELOPE = {
    "correlation_id": "co_test",
    "run_id": "run_test",
    "depth": 3,
    "timestamp": 1234.5,
}


def sample(kind: str):
    return parse_event({"type": kind, **ENVELOPE, **SAMPLES[kind]})


def test_every_event_type_has_a_sample():
    assert set(SAMPLES) == set(EVENT_TYPES)
    assert len(EVENT_TYPES) == len(BaseEvent.__subclasses__())


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_json_round_trip(kind):
    event = sample(kind)
    assert event.type == kind
    again = parse_event(event.model_dump_json())
    assert again == event
    assert type(again) is type(event)
    # and from already decoded JSON, as a client would send it back
    assert parse_event(json.loads(event.model_dump_json())) == event


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_events_are_frozen(kind):
    event = sample(kind)
    with pytest.raises(ValidationError):
        event.correlation_id = "co_other"  # type: ignore[misc]


def test_the_type_picks_the_class():
    event = parse_event({"type": "human_chat", "to_agent": "rm_1", "message": "hi"})
    assert isinstance(event, HumanChat)
    with pytest.raises(ValidationError):
        parse_event({"type": "no_such_event", "to_agent": "rm_1"})
    with pytest.raises(ValidationError):  # a field of another type
        parse_event({"type": "human_chat", "to_agent": "rm_1", "message": "x", "ok": 1})
    with pytest.raises(ValidationError):  # a required field missing
        parse_event({"type": "agent_message", "to_agent": "rm_1", "message": "x"})


def test_envelope_defaults_are_fresh():
    first = HumanChat(to_agent="rm_1", message="a")
    second = HumanChat(to_agent="rm_1", message="a")
    assert first.id != second.id
    assert first.correlation_id != second.correlation_id
    assert first.depth == 0 and first.run_id is None
    assert first.timestamp > 0


def test_concerned_nodes_and_file():
    message = AgentMessage(from_agent="rm_a", to_agent="rm_b", message="m", tags=("t",))
    assert set(message.concerned_nodes()) == {"rm_a", "rm_b"}
    assert message.file() is None
    assert message.labels() == ("t",)
    changed = ContentChanged(path="x.py", node_ids=("rm_1", "rm_2"))
    assert changed.concerned_nodes() == ("rm_1", "rm_2")
    assert changed.file() == "x.py"
    topology = TopologyChanged(path="x.py", added=("rm_3",), orphaned=("rm_1",))
    assert set(topology.concerned_nodes()) == {"rm_3", "rm_1"}


def test_stored_event_json_carries_its_seq():
    event = sample("agent_message")
    stored = StoredEvent(42, event)
    data = stored.to_json()
    assert data["seq"] == 42
    assert data["type"] == "agent_message"
    assert data["tags"] == ["review", "urgent"]
    assert json.loads(json.dumps(data)) == data  # plain JSON, as sent to editors
    without_seq = {k: v for k, v in data.items() if k != "seq"}
    assert parse_event(without_seq) == event
