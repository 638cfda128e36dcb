"""Questions agents ask people (``ask_user``), and their answers.

An agent asking blocks its turn: ``agent_blocked`` is emitted (with the
question id, the question and any options) and the node's status becomes
``blocked``. The question is answered by :meth:`Questions.respond` (the
``remora.agent.respond`` command), or by the editor directly when a presenter
is installed (the LSP adapter shows ``window/showMessageRequest`` or sends
``remora/askUser``); a presenter that gets no answer leaves the question
pending. The wait ends with ``agent_resumed`` whose ``outcome`` says whether it
was answered, timed out or was cancelled.

Questions an earlier process asked and nobody answered (it died first) are
*kept* (:meth:`Questions.keep`, found by ``resuming.unanswered`` at start):
waiting again, asked again through the editor (:meth:`Questions.ask_again`);
their answer goes to :attr:`Questions.resume`, which runs the agent again
with it (``resuming.py``).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from remora_core.events.models import AgentBlocked, AgentResumed
from remora_core.model import AgentStatus

if TYPE_CHECKING:
    from remora_core.swarm.turns import Turn

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Question:
    """One pending question."""

    id: str
    agent_id: str
    run_id: str
    question: str
    options: tuple[str, ...]


Presenter = Callable[[Question], Awaitable[str | None]]
"""Shows a question in the editor; returns the answer, or None if none came."""


class QuestionTimedOut(Exception):
    """Nobody answered in time."""


class Questions:
    """Pending questions of one project."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.presenter: Presenter | None = None
        self.pending: dict[str, tuple[Question, asyncio.Future[str]]] = {}
        self.kept: dict[str, Question] = {}
        """Questions of an earlier process nobody answered: waiting again."""
        self.resume: Callable[[Question, str], object] | None = None
        """What an answer to a kept question does (resumes its agent)."""
        self.closing = False
        """The server is stopping: a question cancelled now is not answered
        (no ``agent_resumed``), so the next start asks it again."""

    async def ask(self, turn: Turn, question: str, options: tuple[str, ...]) -> str:
        """Ask, wait for the answer; :class:`QuestionTimedOut` if none comes."""
        asked = Question(
            id=f"q_{uuid.uuid4().hex[:12]}",
            agent_id=turn.agent_id,
            run_id=turn.run_id,
            question=question,
            options=options,
        )
        answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.pending[asked.id] = (asked, answer)
        await turn.emit(
            AgentBlocked(
                agent_id=turn.agent_id,
                question_id=asked.id,
                question=question,
                options=options,
            )
        )
        turn.swarm.set_agent_status(turn.agent_id, AgentStatus.BLOCKED)
        shown = asyncio.ensure_future(self._present(asked))
        outcome, text = "answered", ""
        try:
            text = await asyncio.wait_for(asyncio.shield(answer), self.timeout_s)
            return text
        except TimeoutError:
            outcome = "timed_out"
            raise QuestionTimedOut(
                f"nobody answered within {self.timeout_s:g} s"
            ) from None
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            shown.cancel()
            self.pending.pop(asked.id, None)
            # A stop leaves it unanswered: the next start asks it again
            # (``resuming.unanswered``).
            if not (outcome == "cancelled" and self.closing):
                turn.swarm.set_agent_status(turn.agent_id, AgentStatus.RUNNING)
                await asyncio.shield(
                    turn.emit(
                        AgentResumed(
                            agent_id=turn.agent_id,
                            question_id=asked.id,
                            answer=text,
                            outcome=outcome,
                        )
                    )
                )

    async def _present(self, question: Question) -> None:
        if self.presenter is None:
            return
        try:
            answer = await self.presenter(question)
        except Exception as error:  # the editor failing leaves it pending
            log.info("question %s not shown: %s", question.id, error)
            return
        if answer is not None:
            self.respond(question.id, answer)

    def waiting(self, question_id: str) -> bool:
        """Whether the question is asked and not answered yet."""
        if question_id in self.kept:
            return True
        entry = self.pending.get(question_id)
        return entry is not None and not entry[1].done()

    def respond(self, question_id: str, answer: str) -> bool:
        """Answer a pending question; False if there is no such question."""
        kept = self.kept.get(question_id)
        if kept is not None and self.resume is not None:
            del self.kept[question_id]
            self.resume(kept, answer)
            return True
        entry = self.pending.get(question_id)
        if entry is None or entry[1].done():
            return False
        entry[1].set_result(answer)
        return True

    def for_run(self, run_id: str) -> list[Question]:
        """Questions a run is waiting on (kept ones included)."""
        asked = [q for q, _ in self.pending.values() if q.run_id == run_id]
        return asked + [q for q in self.kept.values() if q.run_id == run_id]

    def keep(self, questions: list[Question]) -> None:
        """Take up questions an earlier process asked: waiting again."""
        for question in questions:
            self.kept[question.id] = question

    def drop_kept(self, run_id: str) -> list[Question]:
        """Stop waiting on the kept questions of ``run_id``; them."""
        dropped = [q for q in self.kept.values() if q.run_id == run_id]
        for question in dropped:
            del self.kept[question.id]
        return dropped

    async def ask_again(self) -> None:
        """Ask the kept questions through the editor (all at once: a person
        may answer them in any order).
        """
        await asyncio.gather(*(self._present(q) for q in list(self.kept.values())))
