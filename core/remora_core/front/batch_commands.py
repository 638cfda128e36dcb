"""Batch commands (DESIGN §10): graph runs, checkpoints, attribution.

Graphs and checkpoints need the project's store and its ownership; a project
without one answers why (``app.graphs`` / ``app.checkpoints``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, StrictBool

from remora_core.front import answers
from remora_core.front.arguments import (
    CheckpointIdField,
    Empty,
    GraphRunIdField,
    RequiredFileArgs,
    limit_field,
)
from remora_core.front.errors import InvalidArguments
from remora_core.front.locations import project_path
from remora_core.front.table import Arguments, Door, Route, command

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp


class GraphRunArgs(Arguments):
    """A graph: a name under ``.remora/graphs`` or the object of DESIGN §10."""

    graph: str | dict[str, Any]


class GraphRunIdArgs(Arguments):
    """A graph run."""

    graph_run_id: GraphRunIdField


class RecentArgs(Arguments):
    """How many of the latest to list."""

    limit: int = limit_field(20, 200)


class LabelArgs(Arguments):
    """An optional checkpoint label."""

    label: str | None = Field(default=None, max_length=200)


class CheckpointArgs(Arguments):
    """A checkpoint."""

    checkpoint_id: CheckpointIdField


class RestoreArgs(CheckpointArgs):
    """A checkpoint, and whether to propose its files back too."""

    files: StrictBool = Field(
        default=False,
        description="true: also propose each file that differs back to its "
        "content at the checkpoint (revert proposals, reviewed as usual)",
    )


@command("remora.graph.run", GraphRunArgs, answers.GraphRunId, Route.WORKSPACE)
async def graph_run(app: RemoraApp, a: GraphRunArgs, door: Door) -> Any:
    """Start a batch graph; a graph that cannot run lists every problem and
    nothing runs.
    """
    return {"graph_run_id": await app.graphs.run(a.graph)}


@command("remora.graphs.list", Empty, list[answers.GraphListing], Route.WORKSPACE)
async def graphs_list(app: RemoraApp, a: Empty, door: Door) -> Any:
    """The project's graphs under `.remora/graphs`, each with its steps or
    the problems that keep it from running (checked, not run).
    """
    return await app.graphs.available()


@command("remora.graph.runs", RecentArgs, list[answers.GraphRunRow], Route.WORKSPACE)
async def graph_runs(app: RemoraApp, a: RecentArgs, door: Door) -> Any:
    """The project's latest graph runs, newest first: status, outcome counts,
    proposals, start time.
    """
    return await app.graphs.recent(a.limit)


@command("remora.graph.status", GraphRunIdArgs, answers.GraphStatus, Route.GRAPH_RUN)
async def graph_status(app: RemoraApp, a: GraphRunIdArgs, door: Door) -> Any:
    """A graph run's steps × nodes with outcomes (also of past runs)."""
    return await app.graphs.status(a.graph_run_id)


@command("remora.graph.resume", GraphRunIdArgs, answers.GraphRunId, Route.GRAPH_RUN)
async def graph_resume(app: RemoraApp, a: GraphRunIdArgs, door: Door) -> Any:
    """Go on with a graph run a restart interrupted (same id): finished steps
    are skipped (their proposals stay), the others run.
    """
    return {"graph_run_id": await app.graphs.resume(a.graph_run_id)}


@command("remora.graph.cancel", GraphRunIdArgs, answers.Cancelled, Route.GRAPH_RUN)
async def graph_cancel(app: RemoraApp, a: GraphRunIdArgs, door: Door) -> Any:
    """Cancel a graph run as a whole."""
    return {"cancelled": app.graphs.cancel(a.graph_run_id)}


@command("remora.checkpoint.create", LabelArgs, answers.CheckpointId, Route.WORKSPACE)
async def checkpoint_create(app: RemoraApp, a: LabelArgs, door: Door) -> Any:
    """Snapshot every agent's state and the project files' hashes."""
    return {"checkpoint_id": await app.checkpoints.create(a.label)}


@command("remora.checkpoint.list", Empty, list[answers.CheckpointRow], Route.WORKSPACE)
async def checkpoint_list(app: RemoraApp, a: Empty, door: Door) -> Any:
    """Checkpoints, newest first."""
    return await app.checkpoints.list()


@command("remora.checkpoint.restore", RestoreArgs, answers.Restored, Route.WORKSPACE)
async def checkpoint_restore(app: RemoraApp, a: RestoreArgs, door: Door) -> Any:
    """Bring agents' state back; which files differ. With ``files``, propose
    those files back as they were (nothing is written before a person
    accepts).
    """
    restored = await app.checkpoints.restore(a.checkpoint_id)
    if a.files:
        restored.update(await app.reverts.checkpoint(a.checkpoint_id))
    return restored


@command(
    "remora.attribution",
    RequiredFileArgs,
    list[answers.AttributedRange],
    Route.DOCUMENT,
)
async def attribution(app: RemoraApp, a: RequiredFileArgs, door: Door) -> Any:
    """Line ranges of the file's current text still written by an accepted
    proposal, with its agent (edited lines no longer count).
    """
    path = project_path(app.root, a.uri, a.path)
    assert path is not None  # the model wants uri or path
    ranges = await app.attribution.ranges(path)
    if ranges is None:
        raise InvalidArguments(f"{path} cannot be read")
    return ranges


def _join_trailers(found: list[Any]) -> Any:
    return {"trailers": [line for answer in found for line in answer["trailers"]]}


@command("remora.trailers", Empty, answers.Trailers, Route.EVERY, _join_trailers)
async def trailer_lines(app: RemoraApp, a: Empty, door: Door) -> Any:
    """``Remora-Agent: rm_… (pr_…)`` commit trailers for accepted proposals
    not yet in a commit.
    """
    return {"trailers": await app.attribution.trailers()}


BATCH_COMMANDS = [
    graph_run,
    graphs_list,
    graph_runs,
    graph_status,
    graph_resume,
    graph_cancel,
    checkpoint_create,
    checkpoint_list,
    checkpoint_restore,
    attribution,
    trailer_lines,
]
