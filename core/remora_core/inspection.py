"""White-box access to an app's parts, for the engine's own tests and
benchmarks only.

Consumers hold a :class:`~remora_core.front.app.RemoraApp` and call its
facades; they never reach its parts (``tests/lsp/test_allowed_imports.py``
refuses this module to ``remora_lsp`` and ``remora_cli``). A test of the swarm,
the index or the store needs to look inside: it does so here, in one place
that says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp
    from remora_core.index.code_index import CodeIndex
    from remora_core.index.disk import DiskSync
    from remora_core.index.document_sync import DocumentSync
    from remora_core.parts import ProjectParts
    from remora_core.tasks import TaskSet


def parts(app: RemoraApp) -> ProjectParts:
    """The app's parts on its store (the app must have started)."""
    found = app._startup.now()
    if found is None:
        raise RuntimeError("the app has not started")
    return found


def index(app: RemoraApp) -> CodeIndex:
    """The app's code index."""
    return app._index


def disk(app: RemoraApp) -> DiskSync:
    """The app's disk synchronisation."""
    return app._disk


def document_sync(app: RemoraApp) -> DocumentSync:
    """The app's open-document synchronisation."""
    return app._sync


def watchers(app: RemoraApp) -> TaskSet:
    """The loops that live as long as the app (keeping or following the store)."""
    return app._watchers
