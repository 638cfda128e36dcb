"""Work a restart interrupted, taken up again (DESIGN §15, resume).

- **Questions survive a restart.** An agent's question is in the event log
  (``agent_blocked``); the one nobody answered before the process died has no
  ``agent_resumed``. :func:`unanswered` finds them at the next start: they are
  pending again (:meth:`~remora_core.agents.questions.Questions.keep`), listed
  as ``waiting``, asked again through the editor, and answered with
  ``remora.agent.respond`` as before.
- **An answer resumes the work** (:func:`resume`): the question is recorded
  answered (``agent_resumed``), and the agent runs a new turn whose request
  holds the original request, its question and the person's answer — so both
  are in its history from then on.
- **A run the restart interrupted can be retried** (:func:`retry`): the same
  trigger again — a person's request is sent again as it was (same message,
  same bundle); any other trigger (a message, a change) is given to the same
  agent again. Its question, if it had one, is withdrawn.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from remora_core.agents.questions import Question
from remora_core.events.models import AgentResumed, HumanChat
from remora_core.model import RunStatus

if TYPE_CHECKING:
    from remora_core.events.models import Event
    from remora_core.swarm.pipeline import Swarm

log = logging.getLogger(__name__)

MAX_KEPT = 200
"""The latest questions looked at for being unanswered."""


class CannotRetry(ValueError):
    """A run that cannot be retried; the message says why."""


class UnknownRun(CannotRetry):
    """No such run in this project's store."""


async def unanswered(swarm: Swarm) -> list[Question]:
    """Questions whose asker's process died before anyone answered, oldest
    first (at start, before any turn runs: none of them is being asked now).
    """
    asked = await swarm.events.of_type("agent_blocked", limit=MAX_KEPT)
    if not asked:
        return []
    ended = await swarm.events.of_type("agent_resumed", limit=4 * MAX_KEPT)
    done = {stored.event.__dict__["question_id"] for stored in ended}
    found: list[Question] = []
    for stored in reversed(asked):
        fields = stored.event.__dict__
        agent = fields["agent_id"]
        if fields["question_id"] in done or not stored.event.run_id:
            continue
        if swarm.graph.get(agent) is None:
            continue  # its node is gone: nobody to resume
        found.append(
            Question(
                id=fields["question_id"],
                agent_id=agent,
                run_id=stored.event.run_id,
                question=fields["question"],
                options=tuple(fields["options"]),
            )
        )
    return found


async def resume(swarm: Swarm, question: Question, answer: str) -> str:
    """Record the answer to a kept question and start the agent's new turn
    with the request, the question and the answer; its run id.
    """
    trigger = await _trigger_of(swarm, question.run_id)
    await swarm.emit(
        AgentResumed(
            agent_id=question.agent_id,
            question_id=question.id,
            answer=answer,
            outcome="answered",
            run_id=question.run_id,
        )
    )
    asked = trigger.__dict__.get("message") if trigger is not None else None
    lines = [
        f"(Your run {question.run_id} was interrupted by a restart while you "
        "waited for the person's answer; carry on from there.)",
        *([f"The request was: {asked}"] if asked else []),
        f"You asked the person: {question.question}",
        f"The person answered: {answer}",
    ]
    bundle = trigger.__dict__.get("bundle") if trigger is not None else None
    request = HumanChat(
        to_agent=question.agent_id, message="\n".join(lines), bundle=bundle
    )
    run_id = swarm.runner.reserve(request.id)
    await swarm.emit(request)
    return run_id


async def withdraw(swarm: Swarm, question: Question) -> None:
    """Record that a kept question is no longer asked (its run was retried)."""
    await swarm.emit(
        AgentResumed(
            agent_id=question.agent_id,
            question_id=question.id,
            answer="",
            outcome="cancelled",
            run_id=question.run_id,
        )
    )


async def retry(swarm: Swarm, run_id: str) -> str:
    """Run an interrupted run's trigger again; the new run's id
    (:class:`CannotRetry` saying why not).
    """
    row = await swarm.runs.one(run_id)
    if row is None:
        raise UnknownRun(f"no run {run_id} in this project")
    if row.status is not RunStatus.INTERRUPTED:
        raise CannotRetry(
            f"run {run_id} is {row.status}: only a run a restart interrupted "
            "is retried (ask the agent again)"
        )
    if swarm.graph.get(row.node_id) is None:
        raise CannotRetry(f"the node of run {run_id} no longer exists")
    found = await swarm.events.by_ids([row.trigger_event_id or ""])
    if not found:
        raise CannotRetry(f"the event that started run {run_id} is no longer kept")
    stored = found[0]
    trigger = stored.event
    if isinstance(trigger, HumanChat):
        again = HumanChat(
            to_agent=row.node_id,
            message=trigger.message,
            bundle=trigger.bundle,
            base_proposal_id=trigger.base_proposal_id,
        )
        new_run = swarm.runner.reserve(again.id)
        await swarm.emit(again)
        return new_run
    # Any other trigger goes to the same agent again (not to every subscriber).
    new_run = swarm.runner.reserve(trigger.id)
    swarm.runner.trigger(row.node_id, stored)
    return new_run


async def _trigger_of(swarm: Swarm, run_id: str) -> Event | None:
    """The event that started ``run_id`` (None when not kept)."""
    row = await swarm.runs.one(run_id)
    if row is None or not row.trigger_event_id:
        return None
    found = await swarm.events.by_ids([row.trigger_event_id])
    return found[0].event if found else None
