"""Putting the server together: the ordered feature list and the Editor.

Features live one per module in ``features/``, each with ``register(server)``;
they are registered in the order of :data:`FEATURES`. This is the only module
that imports both the server class and every feature, so neither imports the
other (``tests/core/test_import_cycles.py``).
"""

from __future__ import annotations

import logging

from remora_core.front.app import RemoraApp

from remora_lsp.editor import LspEditor
from remora_lsp.features import (
    agents,
    attribution,
    checkpoints,
    commands,
    events,
    files,
    graphs,
    history,
    hover,
    lenses,
    lifecycle,
    proposals,
    symbols,
    sync,
    trust,
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
    commands,
    events,
    history,
    agents,
    proposals,
    graphs,
    attribution,
    checkpoints,
    trust,
]
"""Feature modules, each with ``register(server)``, in registration order."""


def create_server() -> RemoraLanguageServer:
    """A server with every feature registered, whose projects' facades use
    the editor over LSP.
    """
    server = RemoraLanguageServer()
    server.make_app = lambda project: RemoraApp.serving(
        project, LspEditor(server, project)
    )
    for feature in FEATURES:
        feature.register(server)
    return server
