"""Work-done progress in the editor for long work (start-up indexing, agent runs).

The engine reports through the sync :class:`~remora_core.progress.ProgressSink`
interface; here each sink owns one token and a small queue, so ``create`` is
awaited before ``begin`` is sent and messages keep their order. Reports are
throttled to a few per second. Clients that do not support work-done progress
get no sink at all.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

REPORT_INTERVAL_S = 0.2


class LspProgress:
    """One work-done progress token, fed by the engine."""

    def __init__(self, server: RemoraLanguageServer) -> None:
        self.server = server
        self.token = f"remora/{uuid.uuid4()}"
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._last_report = 0.0
        server.run_task(self._send_all(), name=f"progress {self.token}")

    def begin(
        self, title: str, message: str | None = None, *, cancellable: bool = False
    ) -> None:
        """Queue the begin message."""
        self._queue.put_nowait(
            types.WorkDoneProgressBegin(
                title=title,
                message=message,
                percentage=None if cancellable else 0,
                cancellable=cancellable or None,
            )
        )

    def report(
        self, message: str, percentage: int | None = None, *, force: bool = False
    ) -> None:
        """Queue a report, unless one went out very recently (and not ``force``)."""
        now = time.monotonic()
        if not force and now - self._last_report < REPORT_INTERVAL_S:
            return
        self._last_report = now
        self._queue.put_nowait(
            types.WorkDoneProgressReport(message=message, percentage=percentage)
        )

    def end(self, message: str | None = None) -> None:
        """Queue the end message."""
        self._queue.put_nowait(types.WorkDoneProgressEnd(message=message))

    async def _send_all(self) -> None:
        progress = self.server.work_done_progress
        try:
            await progress.create_async(self.token)
        except Exception as error:  # the client refused: nothing to show
            log.info("client refused a progress token: %s", error)
            return
        while True:
            value = await self._queue.get()
            if isinstance(value, types.WorkDoneProgressBegin):
                progress.begin(self.token, value)
            elif isinstance(value, types.WorkDoneProgressReport):
                progress.report(self.token, value)
            elif isinstance(value, types.WorkDoneProgressEnd):
                progress.end(self.token, value)
                return


def supports_progress(server: RemoraLanguageServer) -> bool:
    """Whether the client accepts server-initiated work-done progress."""
    window = server.client_capabilities.window
    return bool(window and window.work_done_progress)
