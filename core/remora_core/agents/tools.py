"""The core tools of every agent (DESIGN §8).

Each tool validates its arguments and, when it cannot do what was asked,
returns an error text the model can act on ("Error: no node with id …; ids
look like rm_xxxxxxxx") instead of failing the turn. Every call is recorded as
``tool_called`` and ``tool_result`` events. The same implementations serve both
turn protocols: pydantic-ai calls them as tools (``tools``), the kernel calls
them for the actions it reads in a reply (``fenced``).

Nothing here reads or writes a file: sources come from the graph and the
project's current text, edits become proposals a person decides on. The tools
that look around the project (search, read, references) are in ``looking.py``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from remora_core.agents.cascade_sets import gather
from remora_core.agents.change_tools import change_set_proposal, new_file_proposal
from remora_core.agents.context import AgentContext
from remora_core.agents.guarding import check_rewrite, refuse_new_node
from remora_core.agents.looking import LOOKING_TOOLS
from remora_core.agents.questions import QuestionTimedOut
from remora_core.agents.workspace import MemoryFull
from remora_core.events.models import (
    LimitReached,
    RewriteProposed,
    ToolCalled,
    ToolResult,
)
from remora_core.events.subscriptions import Pattern
from remora_core.index.cards import node_ref
from remora_core.model import NodeKind, ProposalStatus
from remora_core.review.checks import Check
from remora_core.review.indentation import indent_at
from remora_core.review.proposals import (
    Proposal,
    ProposalError,
    prepare_new_node,
    prepare_rewrite,
    text_hash,
)
from remora_core.review.unused_parameters import unused_new_parameters

if TYPE_CHECKING:
    import sqlite3

    from remora_core.model import CodeNode

log = logging.getLogger(__name__)

MAX_SUMMARY = 300
MAX_QUESTION_CHARS = 2_000
MAX_OPTIONS = 10
MAX_OPTION_CHARS = 200


_KEEP_ARGUMENTS = "INSERT OR IGNORE INTO tool_arguments (hash, body) VALUES (?, ?)"
KEPT_ARGUMENT_CHARS = 16_384
"""The most of one call's arguments (JSON) the store keeps: the first 16 KiB.
A model's reply is untrusted input and a refused 10 MB argument must not cost
10 MB of store; the event says how long the whole was and its sha256."""


@dataclasses.dataclass(frozen=True, slots=True)
class ArgumentsKept:
    """A tool call's arguments, too long for its ``tool_called`` event,
    stored once by hash (table ``tool_arguments``) in that event's transaction
    (``EventStore.also_write``): their first :data:`KEPT_ARGUMENT_CHARS`.
    """

    digest: str
    """sha256 of the whole arguments (UTF-8 JSON): what the event names."""
    body: str
    """The arguments as JSON, cut at :data:`KEPT_ARGUMENT_CHARS`."""

    def write(self, db: sqlite3.Connection) -> None:
        """Insert the body unless that hash is stored (in the database thread)."""
        db.execute(_KEEP_ARGUMENTS, (self.digest, self.body))


class ToolError(Exception):
    """A tool could not do what was asked; the message is for the model."""


# ---- calling a tool ------------------------------------------------------------


async def call_tool(
    context: AgentContext,
    name: str,
    arguments: dict[str, Any],
    implementation: Callable[..., Awaitable[str]],
) -> tuple[bool, str]:
    """Run one tool with its events; (ok, text for the model)."""
    turn = context.turn
    limit = context.services.config.limits.tool_calls_per_run
    context.record.tool_calls += 1
    if context.record.tool_calls > limit:
        # One event for the first refused call; the rest of a flood of calls
        # costs neither events nor store (limits.tool_calls_per_run).
        if context.record.tool_calls == limit + 1:
            refuse(
                context,
                "limits.tool_calls_per_run",
                f"this run made {limit} tool calls; further calls are refused",
            )
        return False, (
            f"Error: this run already made {limit} tool calls (the limit); "
            "give your answer now."
        )
    turn.emit_nowait(
        ToolCalled(
            agent_id=turn.agent_id,
            tool=name,
            arguments=_bounded(context, _loggable(arguments)),
        )
    )
    try:
        text, ok = await implementation(context, **arguments), True
    except (ToolError, ProposalError, ValueError, QuestionTimedOut) as error:
        text, ok = f"Error: {error}", False
    except TypeError as error:  # wrong argument names from the fenced protocol
        text, ok = f"Error: bad arguments for {name}: {error}", False
    turn.emit_nowait(
        ToolResult(agent_id=turn.agent_id, tool=name, ok=ok, summary=text[:MAX_SUMMARY])
    )
    return ok, text


def refuse(context: AgentContext, limit: str, reason: str) -> None:
    """Tell the person (a ``limit_reached`` event) that a bound refused something."""
    turn = context.turn
    turn.emit_nowait(LimitReached(agent_id=turn.agent_id, limit=limit, reason=reason))


def _check_size(context: AgentContext, setting: str, what: str, text: Any) -> None:
    """Refuse ``text`` longer than the ``limits`` setting named ``setting``."""
    limit = getattr(context.services.config.limits, setting.rsplit(".", 1)[1])
    if isinstance(text, str) and len(text) > limit:
        refuse(
            context,
            setting,
            f"{what} of {len(text):,} chars was refused (the limit is {limit:,})",
        )
        raise ToolError(
            f"{what} has at most {limit:,} characters; this one has {len(text):,}"
        )


def _bounded(context: AgentContext, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` as a ``tool_called`` event shows them: whole when small;
    else their first kilobytes stored once by hash (``tool_arguments``, in the
    event's transaction) and each value cut short, so one reply can neither
    send megabytes to the editor nor keep them in the store.
    """
    limit = context.services.config.limits.event_argument_chars
    body = json.dumps(arguments, ensure_ascii=False)
    if len(body) <= limit:
        return arguments
    digest = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()
    kept = body[:KEPT_ARGUMENT_CHARS]
    context.turn.swarm.events.also_write(
        ArgumentsKept(digest, kept.encode("utf-8", "replace").decode("utf-8"))
    )
    keys = list(arguments)[:20]  # a fenced reply may invent any number of names
    share = max(40, (limit - 200) // max(1, len(keys)))
    shown: dict[str, Any] = {}
    for key in keys:
        value = arguments[key]
        text = (
            value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        )
        shown[str(key)[:100]] = (
            text if len(text) <= share else f"{text[:share]}… ({len(text):,} chars)"
        )
    shown["truncated_arguments"] = {
        "chars": len(body),
        "stored": digest,
        "kept_chars": len(kept),
    }
    return shown


def _loggable(arguments: dict[str, Any]) -> dict[str, Any]:
    try:
        json.dumps(arguments)
        return arguments
    except (TypeError, ValueError):
        return {key: repr(value) for key, value in arguments.items()}


# ---- implementations -------------------------------------------------------------


def _node(context: AgentContext, node_id: str) -> CodeNode:
    node = context.services.graph.get(node_id) if isinstance(node_id, str) else None
    if node is None:
        raise ToolError(f"no node with id {node_id!r}; node ids look like rm_xxxxxxxx")
    return node


def _file_text(context: AgentContext, node: CodeNode) -> bytes:
    text = context.services.read_text(node.file_path)
    if text is None:
        raise ToolError(f"the file {node.file_path} cannot be read right now")
    return text


async def propose(context: AgentContext, proposal: Proposal) -> str:
    """Store ``proposal`` (with its ``rewrite_proposed``) and start its tests;
    what the model is told.
    """
    services, turn = context.services, context.turn
    made = proposal
    # A second agent proposing in the same cascade: one set for the person.
    proposal, gathered = await gather(context, proposal)
    verifier = services.verifier
    first = verifier.first_check(proposal) if verifier is not None else None
    if first is not None:  # "tests running…" (or why none run) from the start
        proposal = dataclasses.replace(proposal, checks=(*proposal.checks, first))
    # The proposal's rows ride in the transaction of its ``rewrite_proposed``.
    superseded = await services.proposals.add(
        proposal, write=turn.swarm.events.also_write, replaces=gathered
    )
    context.record.proposals.append(proposal)
    turn.emit_nowait(
        RewriteProposed(
            agent_id=turn.agent_id,
            proposal_id=proposal.id,
            node_id=proposal.node_id,
            diff=proposal.diff,
            checks=[check.to_json() for check in proposal.checks],
        )
    )
    if verifier is not None:
        verifier.submit(proposal)
    checked = "".join(f" {c.summary()}." for c in proposal.checks if c.ok)
    if proposal.id != made.id:
        return (
            f"Proposal made; it joined change set {proposal.id}, which gathers "
            f"this request's proposals; a person will review it.{checked}"
        )
    note = f" It replaces {', '.join(superseded)}." if superseded else ""
    return f"Proposal {proposal.id} created; a person will review it.{checked}{note}"


def _proposal(
    context: AgentContext,
    node: CodeNode,
    *,
    kind: str,
    span: tuple[int, int],
    old: str,
    new: str,
    diff: str,
    base_hash: str,
    reasoning: str,
    checks: tuple[Check, ...] = (),
) -> Proposal:
    return Proposal(
        id=f"pr_{uuid.uuid4().hex[:12]}",
        node_id=node.id,
        run_id=context.turn.run_id,
        kind=kind,
        file_path=node.file_path,
        base_version=context.services.document_version(node.file_path),
        base_hash=base_hash,
        start_byte=span[0],
        end_byte=span[1],
        old_source=old,
        new_source=new,
        diff=diff,
        reasoning=reasoning,
        status=ProposalStatus.PENDING,
        feedback=None,
        created_at=time.time(),
        decided_at=None,
        checks=checks,
    )


async def rewrite_self(
    context: AgentContext, new_source: str, reasoning: str = ""
) -> str:
    """Propose new source for the agent's own node."""
    _check_size(context, "limits.proposal_chars", "new source", new_source)
    node = context.node
    text = _file_text(context, node)
    replacement, diff = prepare_rewrite(node, text, new_source)
    old = text[node.span.start_byte : node.span.end_byte].decode("utf-8", "replace")
    # A graph step after another works on that step's pending source: its guard
    # judges what *this* step changed (the docstring step may not touch code,
    # but the hints the step before it added are not its doing).
    base = context.base
    before = (
        base.new_source
        if base is not None and base.status == ProposalStatus.PENDING
        else old
    )
    guarded = check_rewrite(context, text, node.span.start_byte, before, replacement)
    checks = [guarded] if guarded is not None else []
    if unused := _unused_parameters(context, text, before, replacement):
        checks.append(unused)
    proposal = _proposal(
        context,
        node,
        kind="rewrite",
        span=(node.span.start_byte, node.span.end_byte),
        old=old,
        new=replacement,
        diff=diff,
        base_hash=text_hash(old),
        reasoning=reasoning,
        checks=tuple(checks),
    )
    return await propose(context, proposal)


def _unused_parameters(
    context: AgentContext, text: bytes, old: str, new: str
) -> Check | None:
    """A near miss: new parameters the code never uses (``unused_parameters``).

    Refused once per turn with their names (:class:`ToolError`: the model gets
    one more attempt); after that the rewrite goes through with a failed
    ``parameters-used`` check, for the person to see.
    """
    node = context.node
    unused = unused_new_parameters(old, new, indent_at(text, node.span.start_byte))
    if not unused:
        return None
    names = " and ".join(f"`{name}`" for name in unused)
    one = len(unused) == 1
    record = context.record
    if not record.warned_unused:
        record.warned_unused = True
        raise ToolError(
            f"you added the parameter{'' if one else 's'} {names} but your code "
            f"never uses {'it' if one else 'them'}; use {'it' if one else 'them'} "
            f"as the request says, or leave {'it' if one else 'them'} out"
        )
    return Check(
        "parameters-used",
        False,
        f"the new parameter{'' if one else 's'} {names} "
        f"{'is' if one else 'are'} never used",
    )


async def propose_new_node(
    context: AgentContext,
    kind: str,
    name: str,
    source: str,
    insert_after: str | None = None,
) -> str:
    """Propose a new definition next to (or inside) the agent's node."""
    _check_size(context, "limits.proposal_chars", "new source", source)
    refuse_new_node(context)
    node = context.node
    if kind not in ("function", "class", "method"):
        raise ToolError("kind must be 'function', 'class' or 'method'")
    inside = node.kind in (NodeKind.FILE, NodeKind.CLASS)
    anchor = node if inside else _node(context, node.parent_id or node.id)
    after = _node(context, insert_after) if insert_after else (None if inside else node)
    if after is not None and after.parent_id != anchor.id:
        raise ToolError(f"{insert_after} is not a definition directly in {anchor.name}")
    text = _file_text(context, node)
    offset, inserted, diff = prepare_new_node(
        text, node.file_path, anchor, kind, name, source, after
    )
    proposal = _proposal(
        context,
        node,
        kind="new_node",
        span=(offset, offset),
        old="",
        new=inserted,
        diff=diff,
        base_hash=text_hash(text),
        reasoning="",
    )
    return await propose(context, proposal)


async def create_file(
    context: AgentContext, path: str, content: str, reason: str = ""
) -> str:
    """Propose a new file of the project (``change_tools.py``)."""
    _check_size(context, "limits.proposal_chars", "the file's content", content)
    return await propose(context, new_file_proposal(context, path, content, reason))


async def propose_changes(
    context: AgentContext, changes: list[dict[str, Any]], summary: str
) -> str:
    """Propose several edits reviewed and accepted as one (``change_tools.py``)."""
    total = (
        sum(
            len(str(c.get("new_source") or c.get("content") or ""))
            for c in changes
            if isinstance(c, dict)
        )
        if isinstance(changes, list)
        else 0
    )
    limit = context.services.config.limits.proposal_chars
    if total > limit:
        refuse(
            context,
            "limits.proposal_chars",
            f"changes of {total:,} chars were refused (the limit is {limit:,})",
        )
        raise ToolError(
            f"the changes have at most {limit:,} characters; these have {total:,}"
        )
    return await propose(context, change_set_proposal(context, changes, summary))


async def get_my_callers(context: AgentContext) -> str:
    """The nodes that call the agent's node."""
    callers = context.services.graph.callers(context.agent_id)
    return json.dumps([node_ref(n) for n in callers]) if callers else "No callers."


async def get_my_callees(context: AgentContext) -> str:
    """The nodes the agent's node calls."""
    callees = context.services.graph.callees(context.agent_id)
    return json.dumps([node_ref(n) for n in callees]) if callees else "No callees."


async def send_message(context: AgentContext, to: str, content: str) -> str:
    """Message a node id, "parent", "broadcast:children" or "broadcast:siblings"."""
    return await _send(context, to, content, ask=False)


async def _send(context: AgentContext, to: str, content: str, *, ask: bool) -> str:
    """Send a message, or (``ask``) a request whose answer comes back."""
    if not content or not content.strip():
        raise ToolError("the message is empty")
    if to == context.agent_id:
        raise ToolError("you cannot message yourself")
    _check_size(context, "limits.message_chars", "a message", content)
    turn = context.turn
    recipients = await (turn.ask if ask else turn.send_message)(to, content)
    context.record.messages_sent.extend(recipients)
    if not recipients:
        return f"Nobody received it: {to} has no members."
    return f"Sent to {', '.join(recipients)}."


async def message_node(context: AgentContext, node_id: str, request: str) -> str:
    """Ask another node's agent to do something; its answer comes back."""
    _node(context, node_id)
    return await _send(context, node_id, request, ask=True)


async def ask_parent(context: AgentContext, request: str) -> str:
    """Ask the parent node's agent; its answer comes back."""
    return await _send(context, "parent", request, ask=True)


async def subscribe(
    context: AgentContext,
    event_types: list[str] | None = None,
    from_agents: list[str] | None = None,
    path_glob: str | None = None,
    tags: list[str] | None = None,
    nodes: list[str] | None = None,
) -> str:
    """Be triggered by matching events from now on."""
    try:
        pattern = Pattern(
            event_types=tuple(event_types) if event_types else None,
            from_agents=tuple(from_agents) if from_agents else None,
            path_glob=path_glob,
            tags=tuple(tags) if tags else None,
            nodes=tuple(nodes) if nodes else None,
        )
    except ValidationError as error:
        raise ToolError(f"bad pattern: {error.errors()[0]['msg']}") from None
    if pattern == Pattern():
        raise ToolError(
            "give at least one of event_types, from_agents, path_glob, tags, nodes"
        )
    limit = context.services.config.limits.subscriptions_per_agent
    held = context.turn.swarm.index.of_agent(context.agent_id)
    if sum(not s.default for s in held) >= limit:
        refuse(
            context,
            "limits.subscriptions_per_agent",
            f"{context.agent_id} holds {limit} subscriptions; a new one was refused",
        )
        raise ToolError(
            f"you hold {limit} subscriptions (the limit); unsubscribe from one first"
        )
    subscription_id = await context.turn.subscribe(pattern)
    return f"Subscribed ({subscription_id})."


async def unsubscribe(context: AgentContext, subscription_id: str) -> str:
    """Remove one of the agent's subscriptions."""
    if not await context.turn.unsubscribe(subscription_id):
        raise ToolError(f"you have no subscription {subscription_id!r}")
    return "Unsubscribed."


async def kv_get(context: AgentContext, key: str) -> str:
    """Read a value from the agent's memory."""
    value = await context.services.kv.get(context.agent_id, key)
    return "null" if value is None else json.dumps(value)


async def kv_set(context: AgentContext, key: str, value: Any) -> str:
    """Remember a value under a key."""
    budget = context.services.config.limits.kv_bytes_per_agent
    try:
        await context.services.kv.set(context.agent_id, key, value, budget=budget)
    except MemoryFull as error:
        refuse(context, "limits.kv_bytes_per_agent", str(error))
        raise ToolError(f"{error}; remove or shorten other keys first") from None
    return f"Stored {key!r}."


async def ask_user(
    context: AgentContext, question: str, options: list[str] | None = None
) -> str:
    """Ask the person a question and wait for the answer."""
    if not question or not question.strip():
        raise ToolError("the question is empty")
    choices = tuple(o for o in (options or []) if isinstance(o, str) and o.strip())
    # Each question is a dialog in the editor: one open per agent, and small
    # enough to read (a reply asking 40 at once must not open 40 dialogs).
    waiting = [
        q
        for q, _ in context.services.questions.pending.values()
        if q.agent_id == context.agent_id
    ]
    if waiting:
        refuse(
            context,
            "limits.open_questions_per_agent",
            f"{context.agent_id} already waits for an answer to "
            f"{waiting[0].question[:80]!r}; another question was refused",
        )
        raise ToolError(
            "you already asked the person a question that is not answered yet; "
            "ask one question at a time"
        )
    if len(question) > MAX_QUESTION_CHARS or len(choices) > MAX_OPTIONS:
        refuse(
            context,
            "limits.open_questions_per_agent",
            f"a question of {len(question):,} chars with {len(choices)} options "
            "was refused",
        )
        raise ToolError(
            f"a question has at most {MAX_QUESTION_CHARS:,} characters and "
            f"{MAX_OPTIONS} options"
        )
    choices = tuple(o[:MAX_OPTION_CHARS] for o in choices)
    loop = asyncio.get_running_loop()
    asked = loop.time()
    try:
        answer = await context.services.questions.ask(context.turn, question, choices)
    finally:
        context.extend_deadline(loop.time() - asked)
    return f"The person answered: {answer}"


IMPLEMENTATIONS: dict[str, Callable[..., Awaitable[str]]] = {
    "rewrite_self": rewrite_self,
    "propose_new_node": propose_new_node,
    "create_file": create_file,
    "propose_changes": propose_changes,
    "get_my_callers": get_my_callers,
    "get_my_callees": get_my_callees,
    "message_node": message_node,
    "ask_parent": ask_parent,
    "send_message": send_message,
    "subscribe": subscribe,
    "unsubscribe": unsubscribe,
    "kv_get": kv_get,
    "kv_set": kv_set,
    "ask_user": ask_user,
    **LOOKING_TOOLS,  # search_nodes, read_node, find_references (looking.py)
}
"""Every core tool by name."""
