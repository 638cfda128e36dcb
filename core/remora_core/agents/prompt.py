"""The system prompt of a node's agent and the input of one turn (DESIGN §8).

The system prompt says who the agent is (kind, qualified name, id, location,
parent), shows its current source, its callers and callees, the custom
instructions of its bundle and extensions, a person's standing instructions
for the node, its mounted workspaces, the rules and the project's own rules
(``AGENTS.md``: ``project_rules.py``).
It is rebuilt for every turn (pydantic-ai ``instructions``, not stored in the
chat history), so it always shows the current code.

Order matters for speed: what is the same for every node of a bundle (the
rules, the bundle's instructions) comes first and everything about this node
(who it is, its neighbours, its source) last. A llama.cpp server keeps the
previous request's prompt and re-reads only what differs after the longest
common prefix, so on the embedded model (~150 prompt tokens/s on 2 cores) the
shared half of the prompt is read once, not once per node. Empty facts (no
callers, no callees) are left out: a small model reads every token.

The turn's input renders the events that triggered it — a person's request, a
message from another agent, a change in a node it watches, a rejected proposal
with its feedback — as one user message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remora_core.agents.fenced import (
    FENCED_CHANGE_RULES,
    FENCED_LOOK_RULES,
    FENCED_RULES,
)
from remora_core.agents.instructions import instructions_part
from remora_core.agents.project_rules import rules_part
from remora_core.model import ProposalStatus

if TYPE_CHECKING:
    from collections.abc import Mapping

    from remora_core.agents.bundles import Bundle
    from remora_core.agents.context import AgentContext
    from remora_core.events.models import Event
    from remora_core.index.codegraph import CodeGraph
    from remora_core.model import CodeNode
    from remora_core.review.proposals import Proposal
    from remora_core.swarm.turns import Turn

MAX_LISTED = 12
"""Callers/callees listed in the prompt (small models drown in long lists)."""


def _ref(node: CodeNode) -> str:
    return f"{node.qualified_name} ({node.kind.value}, {node.id})"


def _listed(nodes: list[CodeNode]) -> str:
    if not nodes:
        return "none"
    shown = ", ".join(_ref(n) for n in nodes[:MAX_LISTED])
    more = len(nodes) - MAX_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def system_prompt(context: AgentContext, protocol: str) -> str:
    """The system prompt of the agent taking this turn: shared part, then own."""
    shared = shared_prompt(context.bundle, protocol, context.project_rules)
    return shared + _about(context, protocol)


def shared_prompt(bundle: Bundle, protocol: str, project_rules: str = "") -> str:
    """What the system prompt of every agent of ``bundle`` starts with (the
    embedded model reads it ahead at start-up: ``model.preload``): the
    rules, the bundle's instructions, then the project's own rules
    (``AGENTS.md``; the same for every node, so they belong to the shared
    half).
    """
    rules = FENCED_RULES if protocol == "fenced" else TOOL_RULES
    shared = [INTRODUCTION, rules]
    if protocol == "fenced" and "create_file" in bundle.tool_names:
        shared.append(FENCED_CHANGE_RULES)
    if "search_nodes" in bundle.tool_names:
        shared.append(FENCED_LOOK_RULES if protocol == "fenced" else TOOL_LOOK_RULES)
    if bundle_text := bundle.system_prompt.strip():
        shared.append("Instructions:\n" + bundle_text)
    if project := rules_part(project_rules):
        shared.append(project)
    return "\n\n".join(shared) + "\n\n"


INTRODUCTION = (
    "You are an AI agent that lives in a Python codebase: you are one of its "
    "definitions (a function, class, method or file), described at the end."
)


def _about(context: AgentContext, protocol: str) -> str:
    """Everything about this node: who, where, neighbours, extras, source."""
    services, node = context.services, context.node
    graph = services.graph
    if protocol == "fenced":
        # What a small model can use, no more: its own id, line number and
        # parent's id are never needed in a reply (ASK_PARENT takes no id; a
        # method's qualified name names its class), and each costs prompt
        # tokens read on every ask (~30 of ~85 per node part).
        lines = [
            f"You are the {node.kind.value} `{node.qualified_name}` in "
            f"{node.file_path}."
        ]
    else:
        parent = graph.get(node.parent_id) if node.parent_id else None
        where = f"{node.file_path}, line {node.span.start_line + 1}"
        lines = [
            f"You are the {node.kind.value} `{node.qualified_name}` (id {node.id}) "
            f"in {where}.",
            f"Your parent: {_ref(parent) if parent else 'none (you are a file)'}.",
        ]
    # A recursive function is not its own caller or callee worth listing.
    if callers := [n for n in graph.callers(node.id) if n.id != node.id]:
        lines.append(f"Called by: {_listed(callers)}.")
    if callees := [n for n in graph.callees(node.id) if n.id != node.id]:
        lines.append(f"Calls: {_listed(callees)}.")
    parts = ["\n".join(lines)]
    extensions = [e.system_prompt.strip() for e in context.extensions]
    if extensions := [text for text in extensions if text]:
        parts.append("Instructions for you:\n" + "\n".join(extensions))
    if instructions := instructions_part(context.instructions):
        parts.append(instructions)
    if context.workspaces:
        parts.append("Files mounted for you: " + ", ".join(context.workspaces) + ".")
    parts.append(_source_part(context))
    return "\n\n".join(parts)


def _source_part(context: AgentContext) -> str:
    source = f"```python\n{context.shown_own_source()}\n```"
    if context.base is not None and context.base.status == ProposalStatus.PENDING:
        return (
            "Your source, with the change an earlier step proposed (pending "
            f"{context.base.id}; work on this, your proposal replaces it):\n{source}"
        )
    return f"Your current source:\n{source}"


TOOL_RULES = """Rules:
- You may change only yourself, with the rewrite_self tool: give your complete new source.
- To change other code, message its agent (message_node, send_message, ask_parent).
- Your parent may change you. Every edit is a proposal until a person accepts it.
- When you are done, answer in one or two sentences."""


TOOL_LOOK_RULES = (
    "To find code elsewhere in the project: search_nodes, then read_node and "
    "find_references with the ids it gives."
)


def turn_input(context: AgentContext) -> str:
    """The user message of this turn, from its triggering events."""
    graph = context.services.graph
    lines = [
        describe_event(stored.event, context.agent_id, graph, context)
        for stored in context.turn.events
    ]
    return "\n\n".join(line for line in lines if line) or "Check yourself."


def describe_event(
    event: Event, me: str, graph: CodeGraph, context: AgentContext
) -> str:
    """One triggering event, as the agent reads it."""
    fields = event.__dict__
    kind = event.type
    if kind == "human_chat":
        return str(fields["message"])
    if kind == "agent_message":
        sender = graph.get(str(fields["from_agent"]))
        name = _ref(sender) if sender else str(fields["from_agent"])
        if fields.get("reply_to"):
            return f"Answer from {name} to your request:\n{fields['message']}"
        if "request" in fields.get("tags", ()):
            return (
                f"Message from {name} (your answer goes back to it):\n"
                f"{fields['message']}"
            )
        return f"Message from {name}:\n{fields['message']}"
    if kind == "content_changed":
        changed = [graph.get(i) for i in fields["node_ids"] if i != me]
        if not changed:
            return "Your source was changed by a person."
        shown = [
            f"{_ref(n)} now reads:\n```python\n{context.services.shown_source(n)}\n```"
            for n in changed
            if n is not None
        ]
        return f"Code you watch was {fields['change']}:\n" + "\n".join(shown)
    if kind == "rewrite_rejected":
        rejected = context.services.proposals.get(str(fields["proposal_id"]))
        shown = _rejected(rejected)
        if fields.get("by") == "tests":
            return (
                f"{fields['feedback']}\n"
                f"Your proposed {shown}\n"
                "Try again: make the tests pass and keep doing what was asked."
            )
        if fields.get("members"):
            return _members_rejected(rejected, fields)
        return (
            "A person rejected your proposed rewrite.\n"
            f"Their feedback: {fields['feedback'] or '(none given)'}\n"
            f"The rejected {shown}\n"
            "Try again, following the feedback."
        )
    details = {k: v for k, v in fields.items() if k not in ("id", "timestamp", "depth")}
    return f"Event {kind}: {details}"


def _rejected(proposal: Proposal | None) -> str:
    """What a rejected proposal proposed, for the agent's next try: its
    source, or each file of a new file or change set.
    """
    if proposal is None:
        return "source was:\n```python\n(not available)\n```"
    if not proposal.members:
        return f"source was:\n```python\n{proposal.new_source}\n```"
    parts = [
        f"{member.path} ({member.kind}):\n```python\n{member.new_source}\n```"
        for member in proposal.members
    ]
    return "changes were:\n" + "\n".join(parts)


def _members_rejected(proposal: Proposal | None, fields: Mapping[str, Any]) -> str:
    """Part of a change set rejected: those members and the feedback; the
    rest is still waiting for the person.
    """
    dropped = list(proposal.rejected_members) if proposal is not None else []
    picked = [dropped[int(i)] for i in fields["members"] if 0 <= int(i) < len(dropped)]
    shown = [
        f"{member.path} ({member.kind}):\n```python\n{member.new_source}\n```"
        for member in picked
    ]
    rest = len(proposal.members) if proposal is not None else 0
    return (
        f"A person rejected part of your change set {fields['proposal_id']}.\n"
        f"Their feedback: {fields['feedback'] or '(none given)'}\n"
        "The rejected changes were:\n" + "\n".join(shown) + "\n"
        f"The other {rest} change(s) of the set still wait for the person's "
        "decision: do not propose them again. Propose only what replaces the "
        "rejected part, following the feedback (or nothing, if it asks for "
        "nothing)."
    )


def only_own_edits(turn: Turn) -> bool:
    """Whether every trigger of ``turn`` is a change of the agent's own code."""
    for stored in turn.events:
        event = stored.event
        if event.type != "content_changed":
            return False
        if turn.agent_id not in event.__dict__["node_ids"]:
            return False
    return True
