"""Typed events: one frozen pydantic model per type of the taxonomy (DESIGN §6).

Every event has an envelope — ``id``, ``type`` (the snake_case discriminator),
``timestamp``, ``correlation_id`` (the cascade it belongs to), ``run_id`` (the
agent run that produced it, if any), ``depth`` (how many agent turns deep in its
cascade it was produced: 0 for a person's edit or message) — and the fields of
its type. ``agent_id`` names the agent an event is about, ``from_agent`` and
``to_agent`` route messages. Events are parsed back from JSON with
:func:`parse_event`; a stored event also carries its ``seq`` (see ``store.py``).

The taxonomy is the design's, extended with the swarm's own bookkeeping:
``trigger_refused`` (a cascade rule said no, and why), ``run_interrupted``
(a run was in flight when the process died) and ``rewrite_not_applied`` (an
accepted edit did not land in the document) and ``proposal_checked`` (the
project's tests ran on a proposal).
"""

from __future__ import annotations

import time
import uuid
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


def new_event_id() -> str:
    """A fresh, unique event id."""
    return f"ev_{uuid.uuid4().hex}"


def new_correlation_id() -> str:
    """A fresh correlation id (one per cascade started by a person)."""
    return f"co_{uuid.uuid4().hex[:16]}"


class BaseEvent(BaseModel, frozen=True):
    """The envelope every event has.

    Frozen by class keyword (every event class repeats it), not in
    ``model_config``: type checkers read the keyword, so they know an event's
    fields are read-only — which lets ``AgentStarted`` narrow ``agent_id`` to
    a required ``str``. Such a narrowed field is declared ``= Field()``: a
    required field in pydantic either way, and the type checker's word that
    it does not inherit the envelope's default.
    """

    # Validators are built on first use, not at import: building those of some
    # 30 event classes delayed every start-up's answer to ``initialize``.
    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(default_factory=new_event_id)
    """The event's own id (``ev_`` + 32 hex digits)."""
    timestamp: float = Field(default_factory=time.time)
    """When it happened (seconds since the epoch)."""
    correlation_id: str = Field(default_factory=new_correlation_id)
    """The cascade it belongs to (``co_…``): a person's request or edit starts
    one, and every event that follows from it carries it."""
    run_id: str | None = None
    """The agent run that produced it, if any."""
    depth: int = 0
    """How many agent turns deep in its cascade it was produced: 0 for what a
    person did."""
    agent_id: str | None = None
    """The agent (its node's id) the event is about."""
    from_agent: str | None = None
    """The sender of a message."""
    to_agent: str | None = None
    """The recipient of a message or a request."""

    def concerned_nodes(self) -> tuple[str, ...]:
        """Every node this event is about (for queries by node and matching)."""
        # Fields are read from __dict__: a missing attribute on a pydantic model
        # is slow, and this runs for every event.
        fields = self.__dict__
        ids: list[str] = [
            i for i in (self.agent_id, self.from_agent, self.to_agent) if i
        ]
        for name in _NODE_FIELDS:
            value = fields.get(name)
            if isinstance(value, str):
                ids.append(value)
            elif value:
                ids.extend(value)
        return tuple(dict.fromkeys(ids)) if len(ids) > 1 else tuple(ids)

    def file(self) -> str | None:
        """The file this event is about, for events that have one."""
        return self.__dict__.get("path")

    def labels(self) -> tuple[str, ...]:
        """The event's tags (messages have them)."""
        return tuple(self.__dict__.get("tags", ()))


_NODE_FIELDS = ("node_id", "node_ids", "agent_ids", "added", "removed", "orphaned")


class ContentChanged(BaseEvent, frozen=True):
    """The text of nodes changed (an edit, a file changed on disk, start-up)."""

    type: Literal["content_changed"] = "content_changed"
    path: str
    node_ids: tuple[str, ...]
    change: Literal["created", "modified", "deleted"] = "modified"


class TopologyChanged(BaseEvent, frozen=True):
    """Nodes appeared in or disappeared from a file."""

    type: Literal["topology_changed"] = "topology_changed"
    path: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    orphaned: tuple[str, ...] = ()


class HumanChat(BaseEvent, frozen=True):
    """A person wrote to an agent."""

    type: Literal["human_chat"] = "human_chat"
    to_agent: str = Field()
    message: str
    bundle: str | None = None
    """The bundle the agent runs with for this request (a graph step's), instead
    of the one its node kind maps to."""
    graph_run_id: str | None = None
    """The graph run this request is a step of."""
    base_proposal_id: str | None = None
    """A pending proposal of an earlier step of the same graph run: the agent
    works on its new source, and its own proposal supersedes it."""


class AgentMessage(BaseEvent, frozen=True):
    """One agent wrote to another.

    ``request`` in ``tags``: the sender asked (``message_node``, ``ask_parent``)
    and the recipient's answer comes back as a message tagged ``reply`` whose
    ``reply_to`` is the request's event id (``swarm/runner.py``).
    """

    type: Literal["agent_message"] = "agent_message"
    from_agent: str = Field()
    to_agent: str = Field()
    message: str
    tags: tuple[str, ...] = ()
    from_name: str = ""
    """The sender's qualified name when it was sent (ids outlive names)."""
    to_name: str = ""
    """The recipient's qualified name when it was sent."""
    reply_to: str | None = None
    """For a reply: the id of the request it answers."""


class AgentStarted(BaseEvent, frozen=True):
    """An agent's turn began; ``trigger_ids`` are the events it is reacting to."""

    type: Literal["agent_started"] = "agent_started"
    agent_id: str = Field()
    trigger_ids: tuple[str, ...] = ()


class AgentCompleted(BaseEvent, frozen=True):
    """An agent's turn ended normally."""

    type: Literal["agent_completed"] = "agent_completed"
    agent_id: str = Field()
    answered_by: str | None = None
    """Set on the end of a run whose request was coalesced into another run's
    turn (quick chats to one agent): the run that answered it."""
    result: str = ""


class AgentFailed(BaseEvent, frozen=True):
    """An agent's turn ended with an error."""

    type: Literal["agent_failed"] = "agent_failed"
    agent_id: str = Field()
    answered_by: str | None = None
    """Set on the end of a run whose request was coalesced into another run's
    turn (quick chats to one agent): the run that answered it."""
    error: str
    reason: str | None = None
    """``limit_reached`` when a token budget stopped the run (the error names
    the setting); None for any other failure."""


class AgentCancelled(BaseEvent, frozen=True):
    """An agent's turn was cancelled."""

    type: Literal["agent_cancelled"] = "agent_cancelled"
    agent_id: str = Field()
    answered_by: str | None = None
    """Set on the end of a run whose request was coalesced into another run's
    turn (quick chats to one agent): the run that answered it."""
    reason: str = ""


class AgentBlocked(BaseEvent, frozen=True):
    """An agent waits for a person's answer."""

    type: Literal["agent_blocked"] = "agent_blocked"
    agent_id: str = Field()
    question_id: str
    question: str
    options: tuple[str, ...] = ()


class AgentResumed(BaseEvent, frozen=True):
    """A person answered an agent's question."""

    type: Literal["agent_resumed"] = "agent_resumed"
    agent_id: str = Field()
    question_id: str
    answer: str
    outcome: Literal["answered", "timed_out", "cancelled"] = "answered"


class ModelRequest(BaseEvent, frozen=True):
    """A request went to the model."""

    type: Literal["model_request"] = "model_request"
    model: str = ""
    attempt: int = 1
    """1 for the first try, more for retries after a failure."""
    retry_reason: str = ""


class ModelResponse(BaseEvent, frozen=True):
    """The model answered."""

    type: Literal["model_response"] = "model_response"
    usage: dict[str, int] = Field(default_factory=dict)
    """``input_tokens``, ``output_tokens`` (as the server reported them)."""
    finish_reason: str = ""


class ToolCalled(BaseEvent, frozen=True):
    """An agent called a tool."""

    type: Literal["tool_called"] = "tool_called"
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolResult(BaseEvent, frozen=True):
    """A tool answered."""

    type: Literal["tool_result"] = "tool_result"
    tool: str
    ok: bool
    summary: str = ""


class RewriteProposed(BaseEvent, frozen=True):
    """An agent proposed new source for a node."""

    type: Literal["rewrite_proposed"] = "rewrite_proposed"
    proposal_id: str
    node_id: str
    diff: str
    checks: list[dict[str, Any]] = Field(default_factory=list)
    """What was checked when it was made (``checks.py``): its guard, its
    tests "running"; later outcomes arrive as ``proposal_checked``."""


class RewriteApplied(BaseEvent, frozen=True):
    """A person accepted a proposal and it is in the document."""

    type: Literal["rewrite_applied"] = "rewrite_applied"
    proposal_id: str
    node_id: str


class RewriteRejected(BaseEvent, frozen=True):
    """A person rejected a proposal (or the project's tests failed with it)."""

    type: Literal["rewrite_rejected"] = "rewrite_rejected"
    proposal_id: str
    node_id: str
    feedback: str = ""
    by: Literal["person", "tests"] = "person"
    """``tests``: the project's tests failed with it; the feedback is their
    output (``review.run_tests``)."""
    members: list[int] = Field(default_factory=list)
    """Part of a change set was rejected, the rest stays pending: these
    indices of its ``rejected_members`` (empty: the whole proposal)."""


class ProposalChecked(BaseEvent, frozen=True):
    """A check of a pending proposal finished (its tests ran): the outcome."""

    type: Literal["proposal_checked"] = "proposal_checked"
    proposal_id: str
    node_id: str
    check: dict[str, Any]
    """``{name, ok, detail, status}`` (``checks.py``)."""


class RewriteStale(BaseEvent, frozen=True):
    """A proposal's node changed before a decision; it will not be applied."""

    type: Literal["rewrite_stale"] = "rewrite_stale"
    proposal_id: str
    node_id: str
    reason: str = ""


class RewriteNotApplied(BaseEvent, frozen=True):
    """A person accepted a proposal but its edit did not land (it stays pending)."""

    type: Literal["rewrite_not_applied"] = "rewrite_not_applied"
    proposal_id: str
    node_id: str
    reason: str = ""


class CheckpointCreated(BaseEvent, frozen=True):
    """A snapshot of agent state was taken."""

    type: Literal["checkpoint_created"] = "checkpoint_created"
    checkpoint_id: str


class CheckpointRestored(BaseEvent, frozen=True):
    """Agents' state was brought back from a checkpoint."""

    type: Literal["checkpoint_restored"] = "checkpoint_restored"
    checkpoint_id: str


class GraphStarted(BaseEvent, frozen=True):
    """A batch graph run began."""

    type: Literal["graph_started"] = "graph_started"
    graph_run_id: str
    name: str
    steps: tuple[str, ...] = ()
    node_count: int = 0
    targets: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    """Step id → the nodes it runs on: what ``remora.graph.status`` shows of a
    past run (empty in events from before it was recorded)."""
    spec: dict[str, Any] | None = None
    """The graph as it was checked (``GraphSpec``): what resuming the run
    needs (None in events from before it was recorded)."""
    resumed: bool = False
    """True: an interrupted run going on (``remora.graph.resume``), same id."""


class GraphStepFinished(BaseEvent, frozen=True):
    """One step of a graph run ended on one node."""

    type: Literal["graph_step_finished"] = "graph_step_finished"
    graph_run_id: str
    step: str
    node_id: str
    outcome: Literal["completed", "failed", "cancelled", "skipped"]
    detail: str = ""
    """Why it failed or was skipped, or the agent's answer (its first 500
    characters)."""
    proposal_id: str | None = None
    last: bool = False
    """This was the node's last step in the run (the node is finished)."""


class GraphCompleted(BaseEvent, frozen=True):
    """A batch graph run ended: ``interrupted`` when the process died during it
    (announced at the next start; nothing is run again).
    """

    type: Literal["graph_completed"] = "graph_completed"
    graph_run_id: str
    outcome: Literal["completed", "stopped", "cancelled", "interrupted"]
    counts: dict[str, int] = Field(default_factory=dict)
    """Steps × nodes per outcome (``completed``, ``failed``, ``skipped``…)."""
    finished_nodes: tuple[str, ...] = ()
    """Nodes whose every step had ended (``interrupted``: before the crash)."""


RefusalRule = Literal[
    "max_depth", "cycle", "turn_budget", "orphaned", "unknown_agent", "secret", "muted"
]
"""The cascade rule that refused a trigger (DESIGN §7)."""


class TriggerRefused(BaseEvent, frozen=True):
    """A cascade rule stopped an event from triggering an agent."""

    type: Literal["trigger_refused"] = "trigger_refused"
    agent_id: str = Field()
    """The (first) agent refused."""
    agent_ids: tuple[str, ...] = ()
    """Every agent refused by this rule for this reason, ``agent_id`` first
    (a cascade's budget spent refuses hundreds at once). Empty in events
    written before it existed: ``agent_id`` alone."""
    trigger_id: str
    rule: RefusalRule
    reason: str

    def refused(self) -> tuple[str, ...]:
        """The agents this refusal stands for."""
        return self.agent_ids or (self.agent_id,)


class LimitReached(BaseEvent, frozen=True):
    """A bound (``limits`` settings) refused something a model asked for."""

    type: Literal["limit_reached"] = "limit_reached"
    agent_id: str = Field()
    limit: str
    """The setting, e.g. ``limits.tool_calls_per_run``."""
    reason: str


class RunInterrupted(BaseEvent, frozen=True):
    """A run was in flight when the process stopped (found on the next start)."""

    type: Literal["run_interrupted"] = "run_interrupted"
    agent_id: str = Field()


Event = Annotated[
    ContentChanged
    | TopologyChanged
    | HumanChat
    | AgentMessage
    | AgentStarted
    | AgentCompleted
    | AgentFailed
    | AgentCancelled
    | AgentBlocked
    | AgentResumed
    | ModelRequest
    | ModelResponse
    | ToolCalled
    | ToolResult
    | RewriteProposed
    | RewriteApplied
    | RewriteRejected
    | RewriteStale
    | RewriteNotApplied
    | ProposalChecked
    | CheckpointCreated
    | CheckpointRestored
    | GraphStarted
    | GraphStepFinished
    | GraphCompleted
    | TriggerRefused
    | LimitReached
    | RunInterrupted,
    Field(discriminator="type"),
]
"""Any event, discriminated by ``type``."""


@cache
def event_adapter() -> TypeAdapter[Event]:
    """Validates any event (built when first needed, like the classes)."""
    return TypeAdapter(Event)


EVENT_TYPES: frozenset[str] = frozenset(
    cls.model_fields["type"].default for cls in BaseEvent.__subclasses__()
)
"""Every event type name."""


def parse_event(data: str | bytes | dict[str, Any]) -> Event:
    """An event from its JSON (text or already decoded)."""
    if isinstance(data, dict):
        return event_adapter().validate_python(data)
    return event_adapter().validate_json(data)
