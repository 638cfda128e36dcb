"""Token budgets a person sets: per run, per graph run, per day.

Before a turn calls the model, :func:`allowance` says how many tokens it may
use: the least of what its run may use (``agents.max_tokens_per_run``, or the
bundle's ``limits.max_tokens``), what is left of its graph run's budget
(``agents.max_tokens_per_graph_run``: its steps' runs and what they set off)
and of the day's
(``agents.max_tokens_per_day``), read from the stored totals
(``store/usage.py``). The turn hands that to pydantic-ai as its token limit;
at the limit the run ends with reason ``limit_reached`` and a message naming
the setting (:func:`limit_failure`). A budget already spent ends the run before
any request. Nothing is half-applied: a run that stops keeps no chat history
(``kernel.py`` saves it only after a turn that completed), and what it
proposed before the limit stays a proposal for a person to review — nothing
reaches a file without an accept.

Concurrent runs each see the same remainder, so a budget can be overshot by
what runs in parallel finish with (at most ``agents.max_concurrency`` runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from remora_core.events.models import LimitReached
from remora_core.store.usage import start_of_day
from remora_core.swarm.turns import TurnFailed

if TYPE_CHECKING:
    from remora_core.agents.bundles import Bundle
    from remora_core.config import AgentSettings
    from remora_core.swarm.turns import Turn

LIMIT_REACHED = "limit_reached"
"""The reason a run stopped by a budget ends with."""


@dataclass(frozen=True, slots=True)
class Allowance:
    """The tokens a turn may use, and the budget that bounds them."""

    tokens: int
    setting: str
    """Where that budget is set, e.g. ``agents.max_tokens_per_day``."""
    limit: int
    """That budget's value."""


async def allowance(turn: Turn, bundle: Bundle, agents: AgentSettings) -> Allowance:
    """The tokens ``turn`` may use (see the module docs)."""
    own = bundle.limits.max_tokens if bundle.limits else None
    per_run = own or agents.max_tokens_per_run
    setting = (
        f"limits.max_tokens of bundle {bundle.name}"
        if own
        else "agents.max_tokens_per_run"
    )
    found = [Allowance(per_run, setting, per_run)]
    usage = turn.swarm.usage
    graph = agents.max_tokens_per_graph_run
    graph_run_id = await _graph_run(turn) if graph is not None else None
    if graph is not None and graph_run_id is not None:
        spent = await usage.total(graph_run_id=graph_run_id)
        found.append(
            Allowance(graph - spent.tokens, "agents.max_tokens_per_graph_run", graph)
        )
    day = agents.max_tokens_per_day
    if day is not None:
        spent = await usage.total(since=start_of_day())
        found.append(Allowance(day - spent.tokens, "agents.max_tokens_per_day", day))
    return min(found, key=lambda a: a.tokens)


async def _graph_run(turn: Turn) -> str | None:
    """The graph run ``turn`` works for: its step's, or that of a step's run
    in its cascade.
    """
    for stored in turn.events:
        graph_run_id = stored.event.__dict__.get("graph_run_id")
        if isinstance(graph_run_id, str):
            return graph_run_id
    return await turn.swarm.usage.graph_of(turn.correlation_id)


def limit_failure(turn: Turn, allowed: Allowance, before: bool) -> TurnFailed:
    """The failure that ends a run at its budget (announced by a
    ``limit_reached`` event naming the setting).
    """
    what = f"{allowed.limit:,} tokens ({allowed.setting})"
    reason = (
        f"The budget of {what} is spent; the run did not call the model. Raise "
        "the limit or wait for it to renew."
        if before
        else f"The run stopped at its limit of {what} before the model "
        "finished; raise the limit or ask for less."
    )
    turn.emit_nowait(
        LimitReached(agent_id=turn.agent_id, limit=allowed.setting, reason=reason)
    )
    return TurnFailed(reason, LIMIT_REACHED)
