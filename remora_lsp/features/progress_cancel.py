"""``window/workDoneProgress/cancel``: the person cancels a run from its progress.

Each agent run and each graph run shows as work-done progress
(``remora_lsp/event_views.py``), cancellable; cancelling the progress cancels
the run (and its model request) or the whole graph run, in whichever project
runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from remora_lsp.server import RemoraLanguageServer


def register(server: RemoraLanguageServer) -> None:
    """Register the progress cancel handler."""

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(
        ls: RemoraLanguageServer, params: types.WorkDoneProgressCancelParams
    ) -> None:
        run_id = ls.progress_runs.get(str(params.token))
        if run_id is None:
            return
        for app in ls.projects:
            if run_id.startswith("gr_"):  # a graph run's progress
                if app.graphs.cancel(run_id):
                    return
            elif app.runs.cancel(run_id):
                return
