"""Which project a URI belongs to.

Each workspace folder is its own project with its own store (DESIGN §5). A file
outside every folder, or excluded by a folder's discovery settings, or not on
disk at all (``untitled:`` buffers) is served from memory by the *loose*
project, keyed by its absolute path or its URI.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.uris import from_fs_path, to_fs_path
from remora_core.config import RemoraConfig
from remora_core.model import NodeStatus
from remora_core.project import Project

if TYPE_CHECKING:
    from collections.abc import Iterator

log = logging.getLogger(__name__)


def uri_to_path(uri: str) -> Path | None:
    """The filesystem path of a ``file:`` URI, else None."""
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(os.path.normpath(path)) if path else None


def path_to_uri(path: Path) -> str:
    """The ``file:`` URI of an absolute path."""
    return from_fs_path(str(path)) or path.as_uri()


class ProjectClosed(JsonRpcException):
    """The project closed (shutdown or restart) before it finished loading."""

    CODE = -32803  # LSP RequestFailed: a valid request the server could not serve


async def loaded(project: Project) -> Project:
    """``project`` once its stored graph is loaded; an error answer if it closed first.

    Every request that needs the graph waits here, so a shutdown or restart during
    start-up answers it (with this error) instead of leaving it unanswered.
    """
    if not await project.ready():
        where = project.root.name if project.root is not None else "loose files"
        raise ProjectClosed(
            f"Remora: the project {where} closed (shutdown or restart) before it "
            "finished loading; ask again"
        )
    return project


class Projects:
    """The server's projects by root, plus the loose project."""

    def __init__(self) -> None:
        self.by_root: dict[Path, Project] = {}
        self.loose = Project(None, RemoraConfig())

    def __iter__(self) -> Iterator[Project]:
        yield from self.by_root.values()
        yield self.loose

    async def all_loaded(self) -> list[Project]:
        """Every project once loaded; projects closed meanwhile are left out."""
        return [project for project in list(self) if await project.ready()]

    def add(self, project: Project) -> None:
        """Serve ``project`` (its root must be set)."""
        assert project.root is not None
        self.by_root[project.root] = project

    def locate(self, uri: str) -> tuple[Project, str]:
        """The project serving ``uri`` and the file's path in it."""
        path = uri_to_path(uri)
        if path is None:
            return self.loose, uri
        for root in sorted(self.by_root, key=lambda r: len(r.parts), reverse=True):
            project = self.by_root[root]
            relative = project.relative(path)
            if relative is not None and project.filter.wants(relative):
                return project, relative
        return self.loose, path.as_posix()

    def known(self, uri: str) -> tuple[Project, str]:
        """Like :meth:`locate`, but the file must be open, indexed or on disk."""
        if not isinstance(uri, str) or not uri:
            raise JsonRpcInvalidParams("Invalid params: a document URI is required")
        project, path = self.locate(uri)
        file_node = project.graph.file_node(path)
        if path in project.documents or (
            file_node is not None and file_node.status is NodeStatus.ACTIVE
        ):
            return project, path
        if project is self.loose:
            raise JsonRpcInvalidParams(
                f"Remora does not know {uri}: it is not open in the editor and not "
                "an indexed Python file of a workspace folder"
            )
        disk = uri_to_path(uri)
        if disk is not None and disk.is_file():
            return project, path
        raise JsonRpcInvalidParams(
            f"Remora does not know {uri}: it is not open in the editor and there "
            "is no such file on disk"
        )

    def uri(self, project: Project, path: str) -> str:
        """The URI of a project path."""
        if project.root is None:
            return path if ":" in path.split("/", 1)[0] else path_to_uri(Path(path))
        return path_to_uri(project.root / path)
