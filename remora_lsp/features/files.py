"""Files changed outside the editor: watched-file events and renames.

``workspace/didChangeWatchedFiles`` (registered dynamically for ``**/*.py`` when
the client supports it; otherwise projects poll the disk) re-indexes created
and changed files and orphans deleted ones. ``workspace/didRenameFiles`` moves
files and whole directories, keeping every node's id.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from remora_core.project import Project

    from remora_lsp.server import RemoraLanguageServer

_RENAME_FILTERS = types.FileOperationRegistrationOptions(
    filters=[
        types.FileOperationFilter(
            scheme="file",
            pattern=types.FileOperationPattern(
                glob="**/*.{py,pyi}", matches=types.FileOperationPatternKind.File
            ),
        ),
        types.FileOperationFilter(
            scheme="file",
            pattern=types.FileOperationPattern(
                glob="**", matches=types.FileOperationPatternKind.Folder
            ),
        ),
    ]
)


def register(server: RemoraLanguageServer) -> None:
    """Register the file event handlers."""

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(
        ls: RemoraLanguageServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        events: dict[Project, dict[types.FileChangeType, list[str]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for change in params.changes:
            project, path = ls.projects.locate(change.uri)
            if project.root is not None:
                events[project][change.type].append(path)
        for project, kinds in events.items():
            ls.run_task(
                project.disk.files_changed(
                    created=kinds[types.FileChangeType.Created],
                    changed=kinds[types.FileChangeType.Changed],
                    deleted=kinds[types.FileChangeType.Deleted],
                ),
                name=f"watched files {project.root}",
            )

    @server.feature(types.WORKSPACE_DID_RENAME_FILES, _RENAME_FILTERS)
    def did_rename_files(
        ls: RemoraLanguageServer, params: types.RenameFilesParams
    ) -> None:
        pairs: dict[Project, list[tuple[str, str]]] = defaultdict(list)
        for rename in params.files:
            old_project, old = _project_path(ls, rename.old_uri)
            new_project, new = _project_path(ls, rename.new_uri)
            if old_project is not None and old_project is new_project:
                pairs[old_project].append((old, new))
            elif new_project is not None:  # moved into a project: a new file
                ls.run_task(new_project.disk.files_changed(created=[new]))
        for project, moved in pairs.items():
            ls.run_task(project.disk.rename(moved), name=f"rename {project.root}")


def _project_path(ls: RemoraLanguageServer, uri: str) -> tuple[Project | None, str]:
    """Project (by root, ignoring include/exclude: folders match no glob) and path."""
    from remora_lsp.projects import uri_to_path

    path = uri_to_path(uri)
    if path is None:
        return None, uri
    for project in ls.projects.by_root.values():
        relative = project.relative(path)
        if relative is not None:
            return project, relative
    return None, path.as_posix()
