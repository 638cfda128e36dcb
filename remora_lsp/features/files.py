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
    from remora_core.front.app import RemoraApp

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
        events: dict[RemoraApp, dict[types.FileChangeType, list[str]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for change in params.changes:
            app, path = ls.projects.locate(change.uri)
            if app.root is not None:
                events[app][change.type].append(path)
        for app, kinds in events.items():
            ls.run_task(
                app.files.changed(
                    created=kinds[types.FileChangeType.Created],
                    changed=kinds[types.FileChangeType.Changed],
                    deleted=kinds[types.FileChangeType.Deleted],
                ),
                name=f"watched files {app.root}",
            )

    @server.feature(types.WORKSPACE_DID_RENAME_FILES, _RENAME_FILTERS)
    def did_rename_files(
        ls: RemoraLanguageServer, params: types.RenameFilesParams
    ) -> None:
        pairs: dict[RemoraApp, list[tuple[str, str]]] = defaultdict(list)
        for rename in params.files:
            old_app, old = ls.projects.folder_of(rename.old_uri)
            new_app, new = ls.projects.folder_of(rename.new_uri)
            if old_app is not None and old_app is new_app:
                pairs[old_app].append((old, new))
            elif new_app is not None:  # moved into a project: a new file
                ls.run_task(new_app.files.changed(created=[new]))
        for app, moved in pairs.items():
            ls.run_task(app.files.renamed(moved), name=f"rename {app.root}")
