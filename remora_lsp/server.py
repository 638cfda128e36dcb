"""The Remora language server class.

``RemoraLanguageServer`` holds the apps (one :class:`~remora_core.front.app.
RemoraApp` per workspace folder, plus one for loose files), the negotiated
position encoding, the editor's settings, the trust decisions and the
background task set; every handler receives it as ``ls``. It imports no
feature module (they refer to it): features live one per module in
``features/`` and ``assembly.py`` registers them in order and passes in how
apps are made and restarted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from remora_core.tasks import TaskSet
from remora_core.text import PositionEncoding

from remora_lsp import __version__
from remora_lsp.projects import Projects
from remora_lsp.protocol import RemoraProtocol
from remora_lsp.pygls_private import stop_transport
from remora_lsp.trust import EditorTrust

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp
    from remora_core.front.editor_pause import EditorFirst, ModelPause

log = logging.getLogger(__name__)


class RemoraLanguageServer(LanguageServer):
    """The server instance every handler receives as ``ls``."""

    def __init__(
        self,
        *,
        loose: Callable[[RemoraLanguageServer], RemoraApp],
        restart: Callable[[RemoraLanguageServer, Path], Awaitable[object]],
    ) -> None:
        """``loose`` makes the app of files outside every workspace folder;
        ``restart`` replaces a folder's app by a fresh one (trust changed).
        """
        super().__init__(
            "remora-lsp",
            __version__,
            protocol_cls=RemoraProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.encoding = PositionEncoding.UTF16
        """Position encoding negotiated at ``initialize``."""
        self.initialization_settings: dict[str, Any] | None = None
        """The ``remora`` settings sent as ``initializationOptions``."""
        self.editor_settings: dict[str, Any] | None = None
        """Effective editor settings: initialization options + pulled/pushed."""
        self.tasks = TaskSet("server")
        self.polling = False
        """Whether projects poll the disk (the editor cannot watch files)."""
        self.closing: asyncio.Future[None] | None = None
        """Closing every project (started by shutdown, exit or a lost editor)."""
        self.progress_runs: dict[str, str] = {}
        """Progress token → the agent run it shows (for cancelling)."""
        self.lens_refresh_pending = False
        """A ``workspace/codeLens/refresh`` is scheduled."""
        self.exit_code = 1
        """0 once a ``shutdown`` request preceded ``exit``."""
        self.trust = EditorTrust(self, lambda root: restart(self, root))
        """Whether each project is trusted, and the questions about it."""
        self.starting: dict[Path, asyncio.Task[None]] = {}
        """The start-up of each workspace folder's project (a restart waits
        for it: two stores of one project opening at once race)."""
        self._told: set[str] = set()
        self.projects = Projects(loose(self))
        """Workspace folders' apps and the loose app (made last: it takes the
        server's trust decisions)."""

    def run_task(self, coroutine: Coroutine[Any, Any, Any], name: str | None = None):
        """Run a background task that is kept and whose failure is logged."""
        return self.tasks.spawn(coroutine, name=name)

    def tell_user(
        self, message: str, kind: types.MessageType = types.MessageType.Warning
    ) -> None:
        """Show ``message`` in the editor, once per session."""
        if message in self._told:
            return
        self._told.add(message)
        log.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def shutdown(self) -> None:
        """Stop the transport without waiting for the thread blocked on stdin;
        let a paused model go on.
        """
        self.model_pause.close()
        stop_transport(self)

    @property
    def model_pause(self) -> ModelPause:
        """Stops the embedded model while the editor's messages are handled."""
        protocol = self.protocol
        assert isinstance(protocol, RemoraProtocol)  # protocol_cls above
        return protocol.model_pause

    @property
    def editor_first(self) -> EditorFirst:
        """Agents' turns give way while the editor's messages wait."""
        protocol = self.protocol
        assert isinstance(protocol, RemoraProtocol)  # protocol_cls above
        return protocol.editor_first
