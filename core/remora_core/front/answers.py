"""The shapes of the commands' JSON answers (for readers and the reference).

Handlers return plain JSON (dicts and lists); these ``TypedDict`` s say what
is in them, field by field. Each :class:`~remora_core.front.table.Command`
names its answer type here, and ``docs/reference/commands.md`` is generated
from them (``scripts/reference_docs.py``), so the reference cannot drift
from the table. Lines and characters are 0-based, as in LSP.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict


class NodeRef(TypedDict):
    """A short reference to a node."""

    id: str
    kind: Literal["file", "class", "function", "method"]
    name: str
    qualified_name: str
    file_path: str
    """Relative to the project root, ``/`` separators."""
    line: int
    """The first line of the definition (its decorators included)."""


class NodeMatch(NodeRef):
    """A search result: a node and its agent's status."""

    agent_status: str


class GraphNode(NodeMatch):
    """A node of the project graph: its agent's status and its container."""

    parent_id: str | None
    """The node that contains it (a file contains classes and functions)."""


class NodeGraphPage(TypedDict):
    """A page of the project's node graph."""

    nodes: list[GraphNode]
    """Active nodes, by file path and line."""
    calls: list[list[str]]
    """``[caller id, callee id]``: the calls made by this page's nodes."""
    total: int
    """How many active nodes the project has."""
    next_offset: int | None
    """The ``offset`` of the next page (None: this was the last)."""


class Party(TypedDict):
    """Another agent in a conversation."""

    id: str
    name: str | None


class CheckJson(TypedDict):
    """One check run on a proposal (the intent guard, the tests)."""

    name: str
    ok: bool | None
    """True passed, False failed, None not decided (not run, running)."""
    detail: str
    status: str


class MemberJson(TypedDict):
    """One edit of a change set (or the file a new-file proposal creates)."""

    path: str
    kind: Literal["rewrite", "new_node", "new_file"]
    node_id: str | None
    """The rewritten node, a new definition's file node; None for a new file."""
    base_hash: str
    """sha256 of the whole file when the set was made ('' for a new file)."""
    start_byte: int
    end_byte: int
    old_source: str
    new_source: str
    diff: str


class ShownMember(TypedDict):
    """A member as ``remora.proposal.diff`` shows it."""

    index: int
    path: str
    node_id: str | None
    kind: Literal["rewrite", "new_node", "new_file"]
    old_source: str
    new_source: str
    diff: str


class ProposalJson(TypedDict):
    """A proposal: what an agent wants to change, and its decision."""

    id: str
    node_id: str
    run_id: str | None
    kind: Literal["rewrite", "new_node", "revert", "new_file", "change_set"]
    file_path: str
    base_version: int | None
    base_hash: str
    start_byte: int
    end_byte: int
    old_source: str
    new_source: str
    diff: str
    reasoning: str
    status: Literal["pending", "accepted", "rejected", "stale", "superseded"]
    feedback: str | None
    created_at: float
    decided_at: float | None
    checks: list[CheckJson]
    members: list[MemberJson]
    """A change set's edits, a new file's one; [] for the other kinds."""
    depends_on: list[list[int]]
    """``[i, j]``: member ``i`` needs member ``j`` (accept both or neither)."""
    anchor_path: str | None
    """The asking node's file when it is none of the edited ones."""
    accepted_members: list[int] | None
    """The members an accepted change set applied (None: all)."""
    summary: NotRequired[str]
    """A change set's: what it does, in one line."""


class ProposalListed(ProposalJson):
    """A proposal in a listing, with where it is."""

    uri: str
    node: str | None
    """Its node's qualified name (None: the node is gone)."""
    title: str
    """What accepting it does, in a few words (``create tests/test_x.py
    (+24)``, ``Change set: add currency (4 definitions in 3 files, 1 new
    file)``, or the change and its reason)."""


class EventJson(TypedDict):
    """A persisted event: these fields, plus those of its ``type`` (see the
    events reference).
    """

    seq: int
    """Its place in the project's event log."""
    type: str
    id: str
    timestamp: float
    correlation_id: str | None
    run_id: str | None


class WokenBy(TypedDict):
    """What woke a run: the subscription that fired, and the event's type."""

    id: str
    text: str
    event_type: str | None


ConversationEntry = TypedDict(
    "ConversationEntry",
    {
        "role": Literal["person", "agent", "node"],
        "kind": str,
        "text": str,
        "run_id": str | None,
        "timestamp": float,
        "seq": int,
        "event_id": str,
        "from": NotRequired[Party],
        "to": NotRequired[Party],
        "options": NotRequired[list[str]],
        "question_id": NotRequired[str],
        "proposal_id": NotRequired["str | None"],
        "woken_by": NotRequired[WokenBy],
    },
)
"""One entry of a node's conversation (texts are never cut). ``kind``:
message, request, reply, answer, failure, cancelled, interrupted, question,
answer_given, proposal, accepted, rejected, stale."""


class LastAnswer(TypedDict):
    """The agent's last answer: whole up to 6 lines and 600 characters."""

    text: str
    truncated: bool
    lines: int
    run_id: str | None
    timestamp: float


class Usage(TypedDict):
    """What some runs cost: tokens as the model reported them, wall time."""

    runs: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    """Input tokens read from the server's cache, where it reports them."""
    tokens: int
    """Input plus output (what the budgets count)."""
    requests: int
    seconds: float
    """Wall time of the runs, summed (a running one until now)."""


class RunUsage(TypedDict):
    """What one run cost."""

    input_tokens: int
    output_tokens: int
    cached_tokens: int
    tokens: int
    requests: int
    seconds: float


class SubscriptionMatch(TypedDict):
    """A run a subscription fired."""

    run_id: str
    event_id: str | None
    event_type: str | None
    at: float


class SubscriptionJson(TypedDict):
    """One of a node's subscriptions and what it fired lately."""

    id: str
    default: bool
    """One of the two every node has (messages to it, changes of its code)."""
    pattern: dict[str, Any]
    text: str
    """The pattern in words."""
    created_at: float | None
    fired: int
    """Runs it fired among the node's latest 50."""
    matched: list[SubscriptionMatch]
    """The latest of those runs (at most 5)."""


class NodeSubscriptions(TypedDict):
    """A node's subscriptions, and whether a person muted it."""

    node_id: str
    muted: bool
    subscriptions: list[SubscriptionJson]


class NodeCard(NodeRef):
    """Everything a person is shown about one node."""

    uri: str
    status: Literal["active", "orphaned"]
    agent_status: str
    start_line: int
    end_line: int
    parent: NodeRef | None
    children: list[NodeRef]
    callers: list[NodeRef]
    callees: list[NodeRef]
    pending_proposals: int
    proposals: list[ProposalJson]
    """The pending ones."""
    recent_events: list[EventJson]
    last_answer: LastAnswer | None
    conversation: list[ConversationEntry]
    """The conversation's latest entries."""
    usage: Usage
    """What all the node's runs cost."""
    muted: bool
    """A person muted it: only their messages wake it."""
    subscriptions: list[SubscriptionJson]
    instructions: str | None
    """A person's standing instructions for its agent
    (``remora.node.instructions.set``); None when it has none."""


class RunId(TypedDict):
    """The id the run will have (progress and outcome follow as events)."""

    run_id: str


class MaybeRunId(TypedDict):
    """The agent's retry, if it tries again."""

    run_id: str | None


class Cancelled(TypedDict):
    """Whether something was running to cancel."""

    cancelled: bool


class Ok(TypedDict):
    """Whether it was done."""

    ok: bool


class Applied(TypedDict):
    """Whether the edit landed, and why not."""

    applied: bool
    reason: NotRequired[str]


class AppliedProposal(Applied):
    """One proposal of several accepted together."""

    proposal_id: str


class Diff(TypedDict):
    """A proposal's change, and where it is."""

    uri: str
    file_path: str
    """Relative to the project root."""
    start_byte: int
    """Where its definition starts in the file (UTF-8 bytes) when proposed."""
    diff: str
    old_source: str
    new_source: str
    status: str
    checks: list[CheckJson]
    kind: str
    members: NotRequired[list[ShownMember]]
    """A change set's (or new file's) edits, each with its own diff."""
    depends_on: NotRequired[list[list[int]]]
    summary: NotRequired[str]


class RunNode(TypedDict):
    """The node a run is for."""

    id: str
    name: str | None
    file_path: str | None
    line: int | None


class FiredBy(TypedDict):
    """The subscription that fired a run."""

    id: str
    text: str


Trigger = TypedDict(
    "Trigger",
    {
        "kind": str,
        "text": str,
        "message": NotRequired[str],
        "from": NotRequired[Party],
        "subscription": NotRequired[FiredBy],
    },
)
"""What started a run: ``kind`` person, message, request, reply, change, …;
``subscription`` the one of the node's that fired (``text``: a default's name
in words, a custom one's id)."""


class KeptQuestion(TypedDict):
    """A question asked before a restart, waiting again."""

    question_id: str
    question: str
    options: list[str]


class RunRow(TypedDict):
    """One run: queued, running, waiting for the person, or ended."""

    id: str | None
    """None for a queued turn another agent triggered (no id yet)."""
    node: RunNode
    status: Literal[
        "queued", "running", "waiting", "done", "failed", "cancelled", "interrupted"
    ]
    trigger: Trigger
    started_at: float | None
    ended_at: float | None
    outcome: str | None
    queued_at: NotRequired[float]
    answered_by: NotRequired[str | None]
    reason: NotRequired[str | None]
    """``limit_reached`` when a token budget stopped the run."""
    usage: NotRequired[RunUsage]
    """What the run cost (not for a queued one)."""
    question: NotRequired[KeptQuestion]
    """A ``waiting`` run interrupted by a restart: the question it waits on
    (answer it with ``remora.agent.respond``)."""


class NodeSource(TypedDict):
    """A node's current source, or why it is withheld."""

    node_id: str
    file_path: str
    source: str | None
    """The node's whole lines, from the open buffer, else the file (read
    when asked)."""
    withheld: str | None
    """Why there is no source: the file matches ``secrets.exclude``, or it
    cannot be read safely (outside the project, a link to a secret file)."""


class LastSeq(TypedDict):
    """The ``seq`` of the newest event."""

    seq: int


class GraphRunId(TypedDict):
    """The graph run started."""

    graph_run_id: str


class GraphStep(TypedDict):
    """One step of a graph run: each target node's outcome."""

    step: str
    nodes: dict[str, str]


class GraphStatus(TypedDict):
    """A graph run's steps × nodes with outcomes."""

    graph_run_id: str
    name: str
    status: str
    counts: dict[str, int]
    steps: list[GraphStep]
    proposals: Any


class GraphListing(TypedDict):
    """A graph under ``.remora/graphs``: its steps, or why it cannot run."""

    name: str
    steps: list[str]
    problems: list[str]


class GraphRunRow(TypedDict):
    """A graph run: how it stands, what it proposed, when it started."""

    graph_run_id: str
    name: str
    status: str
    counts: dict[str, int]
    proposals: Any
    started_at: float


class CheckpointId(TypedDict):
    """The checkpoint taken."""

    checkpoint_id: str


class CheckpointRow(TypedDict):
    """One checkpoint."""

    checkpoint_id: str
    label: str | None
    created_at: float
    git_head: str | None


class NotRestored(TypedDict):
    """A file a checkpoint restore does not propose back, and why."""

    path: str
    reason: str


class Restored(TypedDict):
    """Agents' state is back; which project files differ from then."""

    restored: bool
    files_differing: list[str]
    proposal_ids: NotRequired[list[str]]
    """With ``files``: the proposals putting files back as they were (accept
    them together with ``remora.proposals.accept``)."""
    not_restored: NotRequired[list[NotRestored]]
    """With ``files``: differing files no proposal puts back, and why."""


class Point(TypedDict):
    """A position (0-based)."""

    line: int
    character: int


class LineRange(TypedDict):
    """A range of whole lines (end exclusive, at column 0)."""

    start: Point
    end: Point


class AttributedRange(TypedDict):
    """Lines of the current text still written by an accepted proposal."""

    range: LineRange
    agent_id: str
    proposal_id: str
    accepted_at: float


class Trailers(TypedDict):
    """``Remora-Agent: rm_… (pr_…)`` lines for accepted proposals not yet
    committed.
    """

    trailers: list[str]


class TrustRow(TypedDict):
    """Whether a workspace folder's repository is trusted, and who decided."""

    root: str
    """The folder's URI."""
    trusted: bool
    decided_by: Literal["client", "person", "session", "undecided"]
    wants: str
    """What the repository wants that needs trust ('' for nothing)."""
    hosts: dict[str, bool]
    """``host:port`` → whether the key may be sent there."""


class UsageRow(Usage):
    """The totals of one node, graph run or day."""

    key: str
    """The node id, the graph run id, the correlation id or the day
    (``YYYY-MM-DD``, local)."""
    name: NotRequired[str | None]
    """The node's qualified name (by node)."""


class UsageReport(TypedDict):
    """What agents cost: in all, by node, graph run, cascade and day."""

    since: float | None
    total: Usage
    by_node: list[UsageRow]
    by_graph: list[UsageRow]
    by_cascade: list[UsageRow]
    """By correlation id: what one request of a person set off."""
    by_day: list[UsageRow]


class SubscriptionId(TypedDict):
    """The subscription added."""

    subscription_id: str


class NodeInstructions(TypedDict):
    """A node's standing instructions now, and whether that changed."""

    node_id: str
    instructions: str | None
    """None: the node has none."""
    changed: bool


class Muted(TypedDict):
    """Whether the node is muted now, and whether that changed."""

    node_id: str
    muted: bool
    changed: bool


class RefusedLines(TypedDict):
    """Lines a revert leaves as they are: edited after the accept."""

    proposal_id: str
    path: str
    first_line: int
    """1-based, inclusive."""
    last_line: int
    reason: str


class Reverted(TypedDict):
    """Proposals undoing accepted ones (one per file), to review and accept."""

    proposal_ids: list[str]
    """The revert proposals; several are accepted together with
    ``remora.proposals.accept``. Empty when every part was refused."""
    reverted: list[str]
    """The accepted proposals they undo."""
    refused: list[RefusedLines]
