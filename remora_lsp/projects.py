"""Which app a URI belongs to.

Each workspace folder is its own project with its own store (DESIGN §5), held
as one :class:`~remora_core.front.app.RemoraApp`. A file outside every folder,
or excluded by a folder's discovery settings, or not on disk at all
(``untitled:`` buffers) is served from memory by the *loose* app, keyed by its
absolute path or its URI.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pygls.exceptions import JsonRpcInvalidParams
from remora_core.front.locations import file_uri, uri_path
from remora_core.model import NodeStatus

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from remora_core.front.app import RemoraApp

log = logging.getLogger(__name__)


class Projects:
    """The server's apps by root, plus the loose app."""

    def __init__(self, loose: RemoraApp) -> None:
        self.by_root: dict[Path, RemoraApp] = {}
        self.loose = loose

    def __iter__(self) -> Iterator[RemoraApp]:
        yield from self.by_root.values()
        yield self.loose

    def app_at(self, root: Path | None) -> RemoraApp | None:
        """The app serving ``root`` now (None: the loose app)."""
        return self.loose if root is None else self.by_root.get(root)

    async def all_loaded(self) -> list[RemoraApp]:
        """Every app once loaded; apps closed meanwhile are left out."""
        return [app for app in list(self) if await app.ready()]

    def add(self, app: RemoraApp) -> None:
        """Serve ``app`` (its root must be set), in place of the one it replaces."""
        assert app.root is not None
        self.by_root[app.root] = app

    def locate(self, uri: str) -> tuple[RemoraApp, str]:
        """The app serving ``uri`` and the file's path in it."""
        path = uri_path(uri)
        if path is None:
            return self.loose, uri
        for root in sorted(self.by_root, key=lambda r: len(r.parts), reverse=True):
            app = self.by_root[root]
            relative = app.documents.path_of(path)
            if relative is not None:
                return app, relative
        return self.loose, path.as_posix()

    def folder_of(self, uri: str) -> tuple[RemoraApp | None, str]:
        """The workspace folder's app holding ``uri`` (whatever its discovery
        settings say: folders match no glob) and the path in it.
        """
        path = uri_path(uri)
        if path is None:
            return None, uri
        for app in self.by_root.values():
            relative = app.documents.path_of(path, wanted=False)
            if relative is not None:
                return app, relative
        return None, path.as_posix()

    def known(self, uri: str) -> tuple[RemoraApp, str]:
        """Like :meth:`locate`, but the file must be open, indexed or on disk."""
        if not isinstance(uri, str) or not uri:
            raise JsonRpcInvalidParams("Invalid params: a document URI is required")
        app, path = self.locate(uri)
        file_node = app.nodes.file(path)
        if app.documents.get(path) is not None or (
            file_node is not None and file_node.status is NodeStatus.ACTIVE
        ):
            return app, path
        if app is self.loose:
            raise JsonRpcInvalidParams(
                f"Remora does not know {uri}: it is not open in the editor and not "
                "an indexed Python file of a workspace folder"
            )
        disk = uri_path(uri)
        if disk is not None and disk.is_file():
            return app, path
        raise JsonRpcInvalidParams(
            f"Remora does not know {uri}: it is not open in the editor and there "
            "is no such file on disk"
        )

    @staticmethod
    def uri(app: RemoraApp, path: str) -> str:
        """The URI of a path of ``app``."""
        return file_uri(app.root, path)
