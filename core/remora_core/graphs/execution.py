"""Running batch graphs on the swarm (DESIGN §10).

A graph run is no second scheduler: each step on a node is a person's request
(``human_chat`` with the step's bundle and instruction) given to the swarm's
runner, which runs it with its own concurrency, cascade rules, cancellation and
events; the engine waits for that run's last event. What the engine adds:

- per node, its steps one after the other, in dependency order; at most
  ``max_concurrency`` nodes in flight;
- a later step on a node an earlier step changed works on that pending source
  (``base_proposal_id``) and its proposal supersedes the earlier one, so a
  person reviews one combined proposal per node;
- ``retries`` further attempts per node after a failed run; then the error
  policy: ``stop_graph`` cancels everything, ``skip_downstream`` skips the
  node's later steps, ``continue`` goes on;
- the events ``graph_started``, ``graph_step_finished``, ``graph_completed``,
  all with the graph run's correlation id (``co_<graph_run_id>``), so the log
  tells a run's story; a checkpoint is taken first.

A run is kept in memory while it runs; once its last event is written, what
``remora.graph.status`` says of it is read from the log (:mod:`.story`), the
same before and after a restart.

After a crash, :meth:`GraphEngine.recover` announces each graph run that never
completed as ``interrupted``, with the nodes that had finished; nothing is run
again unless a person asks: :meth:`GraphEngine.resume` (``remora.graph.resume``)
then goes on under the same id from the graph its ``graph_started`` recorded —
steps that finished are skipped (their proposals stay), the others run.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from remora_core.events.models import (
    GraphCompleted,
    GraphStarted,
    GraphStepFinished,
    HumanChat,
)
from remora_core.graphs.spec import GraphPlan, GraphSpec, Step, resumed_plan
from remora_core.graphs.story import (
    MAX_STORY,
    correlation_of,
    finished_steps,
    resumable,
    status_of,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from remora_core.events.store import StoredEvent
    from remora_core.swarm.pipeline import Swarm

log = logging.getLogger(__name__)

DEFAULT_INSTRUCTION = "Apply your instructions to yourself; propose the result."

StepOutcome = Literal["completed", "failed", "cancelled", "skipped"]
"""How a step ended on a node (``graph_step_finished``)."""
GraphStatus = Literal["running", "completed", "stopped", "cancelled"]
"""Where a graph run is; ``graph_completed`` tells the last three."""

RUN_ENDS: dict[str, StepOutcome] = {
    "agent_completed": "completed",
    "agent_failed": "failed",
    "agent_cancelled": "cancelled",
    "run_interrupted": "failed",
    "trigger_refused": "failed",
}


def _log_failure(done: asyncio.Future[StoredEvent]) -> None:
    if not done.cancelled() and done.exception() is not None:
        log.error("a graph event could not be stored", exc_info=done.exception())


@dataclass
class GraphRun:
    """One run of a graph, and how far it got."""

    id: str
    plan: GraphPlan
    outcomes: dict[tuple[str, str], StepOutcome] = field(default_factory=dict)
    """(step id, node id) → outcome of that step on that node."""
    proposals: dict[str, str] = field(default_factory=dict)
    """Node id → the pending proposal this run made for it (the latest)."""
    status: GraphStatus = "running"
    task: asyncio.Task[None] | None = None

    @property
    def correlation_id(self) -> str:
        """The correlation id of the graph's own events."""
        return correlation_of(self.id)

    def counts(self) -> dict[str, int]:
        """Steps × nodes per outcome (not yet run ones as ``pending``)."""
        counts: Counter[str] = Counter(self.outcomes.values())
        counts["pending"] = self.plan.total - len(self.outcomes)
        return {key: value for key, value in counts.items() if value}

    def finished_nodes(self) -> list[str]:
        """Nodes all of whose steps have an outcome."""
        return [
            node
            for node, steps in self.plan.nodes.items()
            if all((step.id, node) in self.outcomes for step in steps)
        ]

    def to_json(self) -> dict[str, Any]:
        """Steps × nodes with outcomes (``remora.graph.status``)."""
        return {
            "graph_run_id": self.id,
            "name": self.plan.spec.name,
            "status": self.status,
            "counts": self.counts(),
            "steps": [
                {
                    "step": step_id,
                    "nodes": {
                        node: self.outcomes.get((step_id, node), "pending")
                        for node in nodes
                    },
                }
                for step_id, nodes in self.plan.targets().items()
            ],
            "proposals": dict(self.proposals),
        }


class GraphEngine:
    """Graph runs of one project, on its swarm."""

    def __init__(
        self,
        swarm: Swarm,
        *,
        pending_proposal: Callable[[str], bool],
        checkpoint: Callable[[str], Awaitable[object]] | None = None,
    ) -> None:
        self.swarm = swarm
        self.pending_proposal = pending_proposal
        """Whether a proposal id is still pending (a base for the next step)."""
        self.checkpoint = checkpoint
        self.runs: dict[str, GraphRun] = {}
        self._waiting: dict[str, asyncio.Future[tuple[StepOutcome, str]]] = {}
        """Run id of a step → its (outcome, detail) once its last event is in."""
        self._step_of_run: dict[str, tuple[GraphRun, str]] = {}
        swarm.bus.subscribe(
            "graphs", self._on_event, types=(*RUN_ENDS, "rewrite_proposed")
        )

    # ---- starting and stopping --------------------------------------------------

    async def start(self, plan: GraphPlan) -> GraphRun:
        """Take a checkpoint, announce the run and start it; the run."""
        run = GraphRun(id=f"gr_{uuid.uuid4().hex[:12]}", plan=plan)
        self.runs[run.id] = run
        if self.checkpoint is not None:
            await self.checkpoint(f"before graph {plan.spec.name} ({run.id})")
        await self._begin(run)
        return run

    async def _begin(self, run: GraphRun, *, resumed: bool = False) -> None:
        """Announce ``run`` (with its spec, to go on after an interruption)
        and start it.
        """
        plan = run.plan
        await self.swarm.emit(
            GraphStarted(
                graph_run_id=run.id,
                name=plan.spec.name,
                steps=plan.order,
                node_count=len(plan.nodes),
                targets=plan.targets(),
                spec=plan.spec.model_dump(mode="json"),
                resumed=resumed,
                correlation_id=run.correlation_id,
            )
        )
        run.task = asyncio.ensure_future(self._run(run))

    async def resume(self, graph_run_id: str) -> GraphRun:
        """Go on with a run a crash interrupted, under the same id: steps that
        finished are not run again (their proposals stay), those in flight and
        not begun run now. ValueError saying why a run cannot go on.
        """
        if graph_run_id in self.runs:
            raise ValueError(f"graph run {graph_run_id} is running")
        story = await self.swarm.events.for_correlation(
            correlation_of(graph_run_id), MAX_STORY
        )
        begun, outcomes, proposals = resumable(story)
        if begun.get("spec") is None:
            raise ValueError(
                "it was started before graph runs recorded their graph: run "
                "the graph again"
            )
        plan = resumed_plan(GraphSpec.model_validate(begun["spec"]), begun["targets"])
        run = GraphRun(
            id=graph_run_id,
            plan=plan,
            outcomes=cast("dict[tuple[str, str], StepOutcome]", outcomes),
            proposals=proposals,
        )
        self.runs[run.id] = run
        await self._begin(run, resumed=True)
        return run

    def cancel(self, graph_run_id: str) -> bool:
        """Cancel a graph run as a whole; False if it is not running."""
        run = self.runs.get(graph_run_id)
        if run is None or run.task is None or run.task.done():
            return False
        run.status = "cancelled"
        run.task.cancel()
        return True

    async def close(self) -> None:
        """Cancel every graph run (the process is stopping: they end interrupted
        only if the process dies before their last event).
        """
        tasks = [r.task for r in self.runs.values() if r.task and not r.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # ---- running ------------------------------------------------------------------

    async def _run(self, run: GraphRun) -> None:
        limit = asyncio.Semaphore(run.plan.spec.max_concurrency)
        nodes = [
            asyncio.ensure_future(self._node(run, node, steps, limit))
            for node, steps in run.plan.nodes.items()
        ]
        try:
            await asyncio.gather(*nodes)
        except asyncio.CancelledError:
            if run.status == "running":
                run.status = "cancelled"
        finally:
            for task in nodes:
                task.cancel()
            await asyncio.gather(*nodes, return_exceptions=True)
            await asyncio.shield(self._finish(run))
            # Its story is in the log now (remora.graph.status reads it from
            # there): a long session does not keep every run's outcomes.
            self.runs.pop(run.id, None)

    async def _finish(self, run: GraphRun) -> None:
        for node, steps in run.plan.nodes.items():
            for step in steps:
                if (step.id, node) not in run.outcomes:
                    run.outcomes[(step.id, node)] = "cancelled"
        if run.status == "running":
            run.status = "completed"
        await self.swarm.emit(
            GraphCompleted(
                graph_run_id=run.id,
                outcome=run.status,
                counts=run.counts(),
                finished_nodes=tuple(run.finished_nodes()),
                correlation_id=run.correlation_id,
            )
        )

    async def _node(
        self,
        run: GraphRun,
        node: str,
        steps: tuple[Step, ...],
        limit: asyncio.Semaphore,
    ) -> None:
        async with limit:
            failed = False
            for step in steps:
                last = step is steps[-1]
                before = run.outcomes.get((step.id, node))
                if before is not None:  # finished before an interruption
                    failed = failed or before == "failed"
                    continue
                if failed and run.plan.spec.error_policy == "skip_downstream":
                    await self._finished(
                        run, step, node, ("skipped", "an earlier step failed"), last
                    )
                    continue
                outcome, detail = await self._attempts(run, step, node)
                await self._finished(run, step, node, (outcome, detail), last)
                if outcome == "failed":
                    failed = True
                    if run.plan.spec.error_policy == "stop_graph":
                        run.status = "stopped"
                        assert run.task is not None
                        run.task.cancel()
                        return

    async def _attempts(
        self, run: GraphRun, step: Step, node: str
    ) -> tuple[StepOutcome, str]:
        outcome: StepOutcome = "failed"
        detail = ""
        for _attempt in range(step.retries + 1):
            outcome, detail = await self._step(run, step, node)
            if outcome != "failed":
                break
        return outcome, detail

    async def _step(
        self, run: GraphRun, step: Step, node: str
    ) -> tuple[StepOutcome, str]:
        """One run of ``step`` on ``node`` through the swarm; its outcome."""
        base = run.proposals.get(node)
        request = HumanChat(
            to_agent=node,
            message=step.instruction or DEFAULT_INSTRUCTION,
            bundle=step.bundle,
            graph_run_id=run.id,
            base_proposal_id=base if base and self.pending_proposal(base) else None,
        )
        runner = self.swarm.runner
        run_id = runner.reserve(request.id)
        done = self._waiting[run_id] = asyncio.get_running_loop().create_future()
        self._step_of_run[run_id] = (run, node)
        try:
            await self.swarm.emit(request)
            return await done
        except asyncio.CancelledError:
            runner.cancel_run(run_id)
            raise
        finally:
            self._waiting.pop(run_id, None)
            self._step_of_run.pop(run_id, None)

    async def _finished(
        self,
        run: GraphRun,
        step: Step,
        node: str,
        result: tuple[StepOutcome, str],
        last: bool,
    ) -> None:
        outcome, detail = result
        run.outcomes[(step.id, node)] = outcome
        proposal = run.proposals.get(node) if outcome == "completed" else None
        # Not awaited: the node's slot goes to the next node at once (as when
        # runs are started one by one); the log keeps the order, and the
        # graph's last event is awaited after every step's.
        self.swarm.emit_nowait(
            GraphStepFinished(
                graph_run_id=run.id,
                step=step.id,
                node_id=node,
                outcome=outcome,
                detail=detail[:500],
                proposal_id=proposal,
                last=last,
                correlation_id=run.correlation_id,
            )
        ).add_done_callback(_log_failure)

    def _on_event(self, stored: StoredEvent) -> None:
        event = stored.event
        run_id = event.run_id
        if run_id is None:
            return
        if event.type == "rewrite_proposed":
            found = self._step_of_run.get(run_id)
            if found is not None:
                graph_run, node = found
                graph_run.proposals[node] = event.__dict__["proposal_id"]
            return
        waiting = self._waiting.get(run_id)
        if waiting is not None and not waiting.done():
            fields = event.__dict__
            # Why it failed, or what the agent answered (a step that ends
            # without a proposal says so in the agent's words).
            detail = (
                fields.get("error")
                or fields.get("reason")
                or fields.get("result")
                or ""
            )
            waiting.set_result((RUN_ENDS[event.type], str(detail)))

    async def status(self, graph_run_id: str) -> dict[str, Any] | None:
        """Steps × nodes with outcomes of a graph run: a live one of this
        process, else what the log tells (a past run, one a crash interrupted);
        None for a run the store does not know.
        """
        run = self.runs.get(graph_run_id)
        if run is not None:
            return run.to_json()
        return await status_of(self.swarm.events, graph_run_id)

    # ---- after a crash --------------------------------------------------------------

    async def recover(self) -> list[str]:
        """Announce graph runs a dead process left unfinished as interrupted;
        their ids. Nothing is run again.
        """
        events = self.swarm.events
        started = await events.of_type("graph_started", limit=200)
        ended = await events.of_type("graph_completed", limit=400)
        # Ended after its (last) start: a resumed run starts again.
        last_end: dict[str, int] = {}
        for stored in ended:
            graph_run_id = stored.event.__dict__["graph_run_id"]
            last_end[graph_run_id] = max(last_end.get(graph_run_id, 0), stored.seq)
        interrupted = []
        for stored in started:
            graph_run_id = stored.event.__dict__["graph_run_id"]
            if (
                last_end.get(graph_run_id, -1) > stored.seq
                or graph_run_id in self.runs
                or graph_run_id in interrupted
            ):
                continue
            story = await events.for_correlation(stored.event.correlation_id, 100_000)
            counts, finished = finished_steps(story)
            await self.swarm.emit(
                GraphCompleted(
                    graph_run_id=graph_run_id,
                    outcome="interrupted",
                    counts=dict(counts),
                    finished_nodes=tuple(finished),
                    correlation_id=stored.event.correlation_id,
                )
            )
            interrupted.append(graph_run_id)
        return interrupted
