"""Logging for the server: stderr or a file, and warnings forwarded to the editor.

Nothing may be written to stdout (it carries the protocol), so logging goes to
stderr by default or to ``--log-file``. Records at WARNING and above are also
sent to the editor as ``window/logMessage`` once the session is up; pygls's own
records are not (they describe the transport itself and could recurse).

Every handler carries ``remora_core.redact.RedactingFilter``: no log line, in
the file or in the editor, shows a key, an ``Authorization`` value or a URL's
userinfo, at any verbosity.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING

from lsprotocol import types
from remora_core.redact import RedactingFilter

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

_LEVELS = {
    logging.CRITICAL: types.MessageType.Error,
    logging.ERROR: types.MessageType.Error,
    logging.WARNING: types.MessageType.Warning,
}


def configure(verbosity: int, log_file: str | None) -> None:
    """Set up the root logger: WARNING, -v INFO, -vv DEBUG (pygls too at -vv)."""
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8")
        if log_file
        else logging.StreamHandler()  # stderr
    )
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # pygls logs every message it sends at INFO: only useful when debugging.
    logging.getLogger("pygls").setLevel(level if verbosity >= 2 else logging.WARNING)


class ClientLogHandler(logging.Handler):
    """Forwards warnings and errors to the editor with ``window/logMessage``."""

    def __init__(self, server: LanguageServer) -> None:
        super().__init__(level=logging.WARNING)
        self.addFilter(RedactingFilter())
        self.server = server
        self.loop = asyncio.get_running_loop()
        self._local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        """Send ``record`` to the editor (from any thread)."""
        if record.name.startswith("pygls") or getattr(self._local, "busy", False):
            return
        try:
            message = record.getMessage()
        except Exception:  # a broken format string must not break the server
            return
        params = types.LogMessageParams(
            type=_LEVELS.get(record.levelno, types.MessageType.Warning),
            message=f"{record.name}: {message}",
        )
        if threading.current_thread() is threading.main_thread():
            self._send(params)
        else:
            self.loop.call_soon_threadsafe(self._send, params)

    def _send(self, params: types.LogMessageParams) -> None:
        self._local.busy = True
        try:
            self.server.window_log_message(params)
        except Exception:
            pass
        finally:
            self._local.busy = False


def forward_to_client(server: LanguageServer) -> ClientLogHandler:
    """Start forwarding warnings to the editor (call once the session is up)."""
    handler = ClientLogHandler(server)
    logging.getLogger().addHandler(handler)
    return handler
