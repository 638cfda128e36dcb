"""Revert commands (DESIGN §15): undo accepted work, as proposals.

Each answers the revert proposals it made (one per file) for a person to
review and accept like any other — nothing is written here — and the lines it
refused because they were edited after the accept (``front/reverts.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remora_core.front import answers
from remora_core.front.arguments import GraphRunIdField, ProposalArgs
from remora_core.front.table import Arguments, Door, Route, command

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp


class GraphRunRef(Arguments):
    """A graph run."""

    graph_run_id: GraphRunIdField


@command("remora.proposal.revert", ProposalArgs, answers.Reverted, Route.PROPOSAL)
async def proposal_revert(app: RemoraApp, a: ProposalArgs, door: Door) -> Any:
    """Propose undoing an accepted proposal: what it replaced comes back,
    later edits elsewhere stay, overlapping ones are refused by line.
    """
    return await app.reverts.proposal(a.proposal_id)


@command("remora.graph.revert", GraphRunRef, answers.Reverted, Route.GRAPH_RUN)
async def graph_revert(app: RemoraApp, a: GraphRunRef, door: Door) -> Any:
    """Propose undoing every accepted proposal of a graph run, one proposal
    per file (accept them together with ``remora.proposals.accept``).
    """
    return await app.reverts.graph(a.graph_run_id)


REVERT_COMMANDS = [proposal_revert, graph_revert]
