"""Pending proposals as diagnostics.

A pending proposal is a diagnostic on its node's definition line (source
``remora``, severity Information, ``code`` the proposal id; a new file's on
the node that asked for it, a change set's on that node and on each member's
node, every one naming the set), republished when a
proposal event arrives or the file changes. Its message ends with what was
checked ("— ✓ docstring-only: code unchanged except docstrings · … tests:
running 2 selected…"). Diagnostics read stored state only — never a model.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from pathlib import Path

    from remora_core.events.store import StoredEvent
    from remora_core.front.app import RemoraApp

    from remora_lsp.editor import EventView
    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

SOURCE = "remora"
PROPOSAL_EVENTS = frozenset(
    {
        "rewrite_proposed",
        "rewrite_applied",
        "rewrite_rejected",
        "rewrite_stale",
        "rewrite_not_applied",
        "proposal_checked",
    }
)


def _definition_line(
    ls: RemoraLanguageServer, app: RemoraApp, node_id: str, path: str
) -> types.Range | None:
    node = app.nodes.get(node_id)
    lines = app.documents.lines(path)
    if node is None or lines is None:
        return None
    line = node.name_span.start_line
    end = lines.position(lines.line_content_end(line), ls.encoding)[1]
    return types.Range(
        start=types.Position(line=line, character=0),
        end=types.Position(line=line, character=end),
    )


def publish(ls: RemoraLanguageServer, app: RemoraApp, path: str) -> None:
    """Send the diagnostics of ``path``'s pending proposals."""
    diagnostics = []
    for proposal in app.proposals.pending(path=path):
        checked = app.proposals.checks_line(proposal)
        message = app.proposals.describe(proposal) + (
            f" — {checked}" if checked else ""
        )
        # A change set shows on each of its members' nodes, all naming it.
        for node_id in app.proposals.anchors(proposal, path):
            where = _definition_line(ls, app, node_id, path)
            if where is None:
                continue
            diagnostics.append(
                types.Diagnostic(
                    range=where,
                    message=message,
                    severity=types.DiagnosticSeverity.Information,
                    source=SOURCE,
                    code=proposal.id,
                )
            )
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(
            uri=ls.projects.uri(app, path), diagnostics=diagnostics
        )
    )


def follow_proposals(ls: RemoraLanguageServer, root: Path | None) -> EventView:
    """A view republishing a file's diagnostics whenever one of its proposals
    changes (every open file's after a checkpoint is restored).
    """

    def on_event(stored: StoredEvent) -> None:
        app = ls.projects.app_at(root)
        if app is None:
            return
        if stored.event.type == "checkpoint_restored":  # any proposal may differ
            for path in app.documents.paths():
                publish(ls, app, path)
            return
        if stored.event.type not in PROPOSAL_EVENTS:
            return
        proposal = app.proposals.get(stored.event.__dict__["proposal_id"])
        if proposal is not None:
            for path in proposal.paths():
                if app.documents.lines(path) is not None:
                    publish(ls, app, path)

    return on_event


def show_proposals(ls: RemoraLanguageServer, app: RemoraApp, path: str) -> None:
    """Keep pending proposals' diagnostics on their (possibly moved) lines."""
    if app.proposals.pending(path=path):
        publish(ls, app, path)
