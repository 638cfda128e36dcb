"""Putting the server together: the ordered feature list, the command table,
and how apps are made.

Features live one per module in ``features/``, each with ``register(server)``;
they are registered in the order of :data:`FEATURES`, then every command of
the table (``commands.py``). This is the only module that imports both the
server class and every feature, so neither imports the other
(``tests/core/test_import_cycles.py``).
"""

from __future__ import annotations

import logging

from remora_core.config import RemoraConfig

from remora_lsp import commands
from remora_lsp.features import (
    files,
    hover,
    lenses,
    lifecycle,
    progress_cancel,
    proposals,
    symbols,
    sync,
)
from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

FEATURES = [
    lifecycle,
    sync,
    symbols,
    lenses,
    hover,
    files,
    proposals,
    progress_cancel,
    commands,
]
"""Feature modules, each with ``register(server)``, in registration order."""


def create_server() -> RemoraLanguageServer:
    """A server with every feature and command registered."""
    server = RemoraLanguageServer(
        loose=lambda ls: lifecycle.make_app(ls, None, RemoraConfig()),
        restart=lifecycle.restart_app,
    )
    for feature in FEATURES:
        feature.register(server)
    return server
