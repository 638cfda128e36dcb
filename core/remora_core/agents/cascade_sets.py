"""A cascade's proposals gathered into one change set (DESIGN §15).

A person's request sets agents in motion: the asked agent proposes, messages
its callers, and their agents propose too — all under the request's
correlation id. The person should see one item, not a proposal per agent:
as soon as a second agent proposes in the same cascade, every pending
proposal of that cascade becomes a member of one ``change_set`` — its id
derived from the correlation id, so later proposals of the cascade join the
same set — and the gathered proposals are ``superseded`` by it. The set
belongs to the agent that proposed first (the one the request started):
rejecting it sends the feedback there.

Not gathered: proposals of one agent alone (a rewrite and the helper it
calls stay two proposals, as before), a graph run's (its steps are accepted
per node: ``co_gr_…``), reverts, and a proposal whose code changed since or
that overlaps another member — those stay on their own. What each cascade
made is remembered in memory while the server runs, and read back from the
event log (its ``rewrite_proposed`` events, stored in one transaction with
their proposals) the first time this process meets a cascade: a restart
mid-cascade — a retried run, an agent still answering its messages — keeps
gathering into the same set.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from typing import TYPE_CHECKING

from remora_core.model import ProposalStatus
from remora_core.review.change_sets import (
    MAX_MEMBERS,
    dependencies,
    members_of,
    refuse_overlaps,
    set_diff,
)
from remora_core.review.source_checks import ProposalError

if TYPE_CHECKING:
    from remora_core.agents.context import AgentContext
    from remora_core.review.proposals import Member, Proposal

log = logging.getLogger(__name__)

MAX_READ = 1_000
"""A cascade's proposals read back from the event log at most."""
GRAPH_CORRELATION = "co_gr_"
"""A graph run's correlation ids start so: its proposals are not gathered."""


def set_id_of(correlation_id: str) -> str:
    """The id of a cascade's set: named by the request that started it."""
    return "pr_" + hashlib.sha256(correlation_id.encode("utf-8")).hexdigest()[:12]


async def gather(
    context: AgentContext, proposal: Proposal
) -> tuple[Proposal, list[str]]:
    """The proposal to store — ``proposal`` itself, or its cascade's set with
    it as a member — and the pending proposals that set gathers.
    """
    services, turn = context.services, context.turn
    correlation = turn.correlation_id
    cascades = services.cascades
    if correlation.startswith(GRAPH_CORRELATION) or proposal.kind == "revert":
        return proposal, []
    store = services.proposals
    pending = [
        found
        for i in await _made(context, correlation)
        if (found := store.get(i)) is not None
        and found.status == ProposalStatus.PENDING
    ]
    if not pending or {p.node_id for p in pending} == {proposal.node_id}:
        cascades.note(correlation, proposal.id)
        return proposal, []
    members: list[Member] = []
    for part in (*pending, proposal):
        found = members_of(part, services.read_text, services.graph)
        if found is None:
            cascades.note(correlation, proposal.id)
            return proposal, []
        members.extend(found)
    try:
        refuse_overlaps(members)
    except ProposalError as problem:
        log.info("%s not gathered into its cascade's set: %s", proposal.id, problem)
        cascades.note(correlation, proposal.id)
        return proposal, []
    gathered = await _set(context, pending, proposal, members[:MAX_MEMBERS])
    cascades.note(correlation, gathered.id)
    return gathered, [p.id for p in pending]


async def _made(context: AgentContext, correlation: str) -> list[str]:
    """The proposals the cascade made so far, oldest first: remembered, or
    (a cascade this process has not met: begun before a restart) read from
    the event log once.
    """
    cascades = context.services.cascades
    known = cascades.made.get(correlation)
    if known is not None:
        return list(known)
    events = context.turn.swarm.events
    stored = await events.of_correlation(correlation, "rewrite_proposed", MAX_READ)
    cascades.made.setdefault(correlation, [])
    for found in stored:
        proposal_id = found.event.__dict__.get("proposal_id")
        if isinstance(proposal_id, str):
            cascades.note(correlation, proposal_id)
    return list(cascades.made.get(correlation, []))


async def _set(
    context: AgentContext,
    pending: list[Proposal],
    proposal: Proposal,
    members: list[Member],
) -> Proposal:
    services, turn = context.services, context.turn
    first = pending[0]
    starter = services.graph.get(first.node_id)
    paths = {m.path for m in members}
    anchor = (
        starter.file_path
        if starter is not None and starter.file_path not in paths
        else None
    )
    checks = tuple(
        c for p in (*pending, proposal) for c in p.checks if c.name != "tests"
    )
    return dataclasses.replace(
        proposal,
        id=set_id_of(turn.correlation_id),
        node_id=first.node_id,
        run_id=first.run_id,
        kind="change_set",
        file_path=members[0].path,
        base_version=None,
        base_hash=members[0].base_hash,
        start_byte=0,
        end_byte=0,
        old_source="",
        new_source="",
        diff=set_diff(members, services.read_text),
        reasoning=await _request(context),
        created_at=first.created_at,
        checks=tuple(dict.fromkeys(checks)),
        members=tuple(members),
        depends_on=dependencies(members),
        anchor_path=anchor,
    )


async def _request(context: AgentContext) -> str:
    """The set's summary: the request that started the cascade."""
    correlation = context.turn.correlation_id
    events = await context.turn.swarm.events.for_correlation(correlation, 50)
    for stored in events:
        if stored.event.type == "human_chat":
            text = str(stored.event.__dict__.get("message") or "").strip()
            line = text.splitlines()[0] if text else ""
            if line:
                return line[:100]
    return f"changes of cascade {correlation}"
