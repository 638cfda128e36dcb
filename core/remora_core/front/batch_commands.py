"""The batch commands of DESIGN §11 for non-LSP consumers (CLI, control socket).

``remora.graph.run/status/cancel``, ``remora.checkpoint.create/list/restore``,
``remora.attribution`` and ``remora.trailers``, each one argument model and one
handler over the project's ``graphs`` / ``checkpoints`` / attribution, merged
into :data:`remora_core.front.commands.COMMANDS`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from pydantic import BaseModel, ConfigDict, Field

from remora_core.front.errors import InvalidArguments, NotFound
from remora_core.graphs.spec import GraphInvalid

if TYPE_CHECKING:
    from remora_core.editor import Editor
    from remora_core.front.app import RemoraApp

log = logging.getLogger(__name__)


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GraphRunArgs(_Args):
    """A graph: a name under ``.remora/graphs`` or the object of §10."""

    graph: str | dict[str, Any]


class GraphRunIdArgs(_Args):
    """A graph run."""

    graph_run_id: str = Field(pattern=r"^gr_")


class LabelArgs(_Args):
    """An optional checkpoint label."""

    label: str | None = Field(default=None, max_length=200)


class CheckpointArgs(_Args):
    """A checkpoint."""

    checkpoint_id: str = Field(pattern=r"^cp_")


class FileArgs(_Args):
    """A file: ``uri`` or project ``path``."""

    uri: str | None = None
    path: str | None = None


class NoArgs(_Args):
    """No arguments."""


def _graphs(app: RemoraApp) -> Any:
    if app.read_only:
        raise InvalidArguments(
            "this project cannot run graphs (its store is read-only)"
        )
    return app.graphs


def _checkpoints(app: RemoraApp) -> Any:
    if not app.keeps_checkpoints:
        raise InvalidArguments("this project has no writable store for checkpoints")
    return app.checkpoints


async def graph_run(app: RemoraApp, a: GraphRunArgs, editor: Editor | None) -> Any:
    """``remora.graph.run`` → ``{graph_run_id}``."""
    try:
        run = await _graphs(app).run(a.graph)
    except GraphInvalid as invalid:
        raise InvalidArguments(str(invalid)) from None
    return {"graph_run_id": run.id}


async def graph_status(app: RemoraApp, a: GraphRunIdArgs, editor: Editor | None) -> Any:
    """``remora.graph.status`` → steps × nodes with outcomes."""
    found = await _graphs(app).status(a.graph_run_id)
    if found is None:
        raise NotFound(f"no graph run {a.graph_run_id}")
    return found


async def graph_cancel(app: RemoraApp, a: GraphRunIdArgs, editor: Editor | None) -> Any:
    """``remora.graph.cancel`` → ``{cancelled}``."""
    return {"cancelled": _graphs(app).cancel(a.graph_run_id)}


async def checkpoint_create(app: RemoraApp, a: LabelArgs, editor: Editor | None) -> Any:
    """``remora.checkpoint.create`` → ``{checkpoint_id}``."""
    return {"checkpoint_id": await _checkpoints(app).create(a.label)}


async def checkpoint_list(app: RemoraApp, a: NoArgs, editor: Editor | None) -> Any:
    """``remora.checkpoint.list`` → checkpoints, newest first."""
    return await _checkpoints(app).list()


async def checkpoint_restore(
    app: RemoraApp, a: CheckpointArgs, editor: Editor | None
) -> Any:
    """``remora.checkpoint.restore`` → ``{restored, files_differing}``."""
    try:
        return await _checkpoints(app).restore(a.checkpoint_id)
    except KeyError:
        raise InvalidArguments(f"no checkpoint {a.checkpoint_id}") from None


def _path(app: RemoraApp, a: FileArgs) -> str:
    root = app.root
    if a.path is not None:
        given = Path(a.path)
        if given.is_absolute() and root is not None:
            try:
                return given.resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                raise InvalidArguments(
                    f"not a file of this project: {a.path}"
                ) from None
        return given.as_posix().strip("/")
    if a.uri is None or root is None or urlparse(a.uri).scheme != "file":
        raise InvalidArguments("remora.attribution needs a uri or a path")
    try:
        return Path(unquote(urlparse(a.uri).path)).relative_to(root).as_posix()
    except ValueError:
        raise InvalidArguments(f"not a file of this project: {a.uri}") from None


async def attribution(app: RemoraApp, a: FileArgs, editor: Editor | None) -> Any:
    """``remora.attribution`` → attributed line ranges (0-based lines)."""
    path = _path(app, a)
    ranges = await app.attribution.ranges(path)
    if ranges is None:
        raise InvalidArguments(f"{path} cannot be read")
    return ranges


async def trailer_lines(app: RemoraApp, a: NoArgs, editor: Editor | None) -> Any:
    """``remora.trailers`` → ``{trailers}``."""
    return {"trailers": await app.attribution.trailers()}


Handler = Callable[[Any, Any, Any], Awaitable[Any]]

BATCH_COMMANDS: dict[str, tuple[type[BaseModel], Handler]] = {
    "remora.graph.run": (GraphRunArgs, graph_run),
    "remora.graph.status": (GraphRunIdArgs, graph_status),
    "remora.graph.cancel": (GraphRunIdArgs, graph_cancel),
    "remora.checkpoint.create": (LabelArgs, checkpoint_create),
    "remora.checkpoint.list": (NoArgs, checkpoint_list),
    "remora.checkpoint.restore": (CheckpointArgs, checkpoint_restore),
    "remora.attribution": (FileArgs, attribution),
    "remora.trailers": (NoArgs, trailer_lines),
}
"""Command name → (argument model, handler)."""
