"""Batch graphs and accepting many proposals, over LSP (DESIGN §10, §11).

- ``remora.graph.run {graph}`` → ``{graph_run_id}``: ``graph`` is a name under
  ``.remora/graphs`` or the object of §10; a graph that cannot run answers
  InvalidParams listing every problem, and nothing runs.
- ``remora.graph.status {graph_run_id}`` → steps × nodes with outcomes, of a
  run of this session or a past one (from the event log);
  ``remora.graph.cancel {graph_run_id}`` → ``{cancelled}``.
- ``remora.proposals.accept {proposal_ids}`` → ``[{proposal_id, applied,
  reason?}]``: one ``workspace/applyEdit`` covering every file.
- One work-done progress per graph run, "Remora: <name>" with "k/N" reports,
  cancellable (cancelling it cancels the graph run).

Handlers stay thin: parse, call the core use case, convert.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from remora_core.graphs.spec import GraphInvalid
from remora_core.text import LineIndex

from remora_lsp.arguments import single_object
from remora_lsp.features.commands import ensure_owner
from remora_lsp.progress import LspProgress, supports_progress

if TYPE_CHECKING:
    from remora_core.events.store import StoredEvent
    from remora_core.project import Project
    from remora_core.review.accept_many import FileEdit

    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

GRAPH_RUN_ID = re.compile(r"^gr_[0-9a-f]{12}$")
PROPOSAL_ID = re.compile(r"^pr_[0-9a-f]{12}$")
MAX_BATCH = 10_000


def _graph_run_id(arguments: dict[str, Any], command: str) -> str:
    value = arguments.get("graph_run_id")
    if not isinstance(value, str) or not GRAPH_RUN_ID.match(value):
        raise JsonRpcInvalidParams(
            f"{command} needs graph_run_id like gr_ and 12 hex digits, got {value!r}"
        )
    return value


def _owner_of(ls: RemoraLanguageServer, graph_run_id: str) -> Project | None:
    for project in ls.projects:
        app = ls.app(project)
        if app.started and app.graphs.knows(graph_run_id):
            return project
    return None


async def run_graph(ls: RemoraLanguageServer, graph: Any) -> dict[str, str]:
    """Start a graph in the (first) workspace project."""
    await ls.projects.all_loaded()
    project = next((p for p in ls.projects if p.root is not None), None)
    if project is None:
        raise JsonRpcInvalidParams("remora.graph.run needs an open workspace folder")
    ensure_owner(project, "run graphs")
    app = ls.app(project)
    if not app.started:
        raise JsonRpcInvalidParams("the project is not ready to run graphs yet")
    try:
        run = await app.graphs.run(graph)
    except GraphInvalid as invalid:
        raise JsonRpcInvalidParams(str(invalid)) from None
    return {"graph_run_id": run.id}


# ---- accepting many proposals -------------------------------------------------------


def _workspace_edit(
    ls: RemoraLanguageServer, project: Project, files: list[FileEdit]
) -> types.WorkspaceEdit:
    changes = []
    for file in files:
        lines = LineIndex(file.before)
        edits = []
        for edit in file.edits:
            start = lines.position(edit.start_byte, ls.encoding)
            end = lines.position(edit.end_byte, ls.encoding)
            edits.append(
                types.TextEdit(
                    range=types.Range(
                        start=types.Position(line=start[0], character=start[1]),
                        end=types.Position(line=end[0], character=end[1]),
                    ),
                    new_text=edit.new_text,
                )
            )
        document = types.OptionalVersionedTextDocumentIdentifier(
            uri=ls.projects.uri(project, file.path), version=file.version
        )
        changes.append(types.TextDocumentEdit(text_document=document, edits=edits))
    return types.WorkspaceEdit(document_changes=changes)


def _applier(ls: RemoraLanguageServer, project: Project) -> Any:
    """Apply a batch's file edits through the editor: None, or why not."""

    async def apply(files: list[FileEdit]) -> str | None:
        count = sum(len(file.edits) for file in files)
        try:
            result = await ls.workspace_apply_edit_async(
                types.ApplyWorkspaceEditParams(
                    edit=_workspace_edit(ls, project, files),
                    label=f"Remora: accept {count} proposal(s)",
                )
            )
        except Exception as error:  # the editor answered with an error
            return f"the editor could not apply the edit: {error}"
        if not result.applied:
            return result.failure_reason or "the editor did not apply the edit"
        return None

    return apply


async def accept_proposals(
    ls: RemoraLanguageServer, proposal_ids: Any
) -> list[dict[str, Any]]:
    """Accept proposals together, per project; results in the order given."""
    if (
        not isinstance(proposal_ids, list)
        or not proposal_ids
        or len(proposal_ids) > MAX_BATCH
        or not all(isinstance(i, str) and PROPOSAL_ID.match(i) for i in proposal_ids)
    ):
        raise JsonRpcInvalidParams(
            "remora.proposals.accept needs proposal_ids: a non-empty list of ids "
            "like pr_ and 12 hex digits"
        )
    results: dict[str, dict[str, Any]] = {}
    for project in ls.projects:
        app = ls.app(project)
        if not app.started:
            continue
        mine = [i for i in proposal_ids if app.proposals.get(i)]
        if not mine:
            continue
        ensure_owner(project, "accept proposals")
        for item in await app.proposals.accept_many(mine, _applier(ls, project)):
            results[item["proposal_id"]] = item
    return [
        results.get(i)
        or {"proposal_id": i, "applied": False, "reason": "there is no such proposal"}
        for i in proposal_ids
    ]


# ---- progress -----------------------------------------------------------------------


class GraphProgress:
    """One work-done progress per graph run of one project."""

    def __init__(self, ls: RemoraLanguageServer, project: Project) -> None:
        self.ls = ls
        self.project = project
        self.by_run: dict[str, tuple[LspProgress, str, int, int]] = {}
        """Graph run id → (its progress, its name, steps done, steps in all)."""

    def on_event(self, stored: StoredEvent) -> None:
        """Begin, report or end the progress of a graph run."""
        kind = stored.event.type
        if not kind.startswith("graph_"):
            return
        fields = stored.event.__dict__
        graph_run_id = fields["graph_run_id"]
        if kind == "graph_started":
            progress = LspProgress(self.ls)
            self.ls.progress_runs[progress.token] = graph_run_id
            progress.begin(f"Remora: {fields['name']}", "starting", cancellable=True)
            # The event says what the run will do: its N needs nothing else.
            total = sum(len(nodes) for nodes in fields["targets"].values())
            self.by_run[graph_run_id] = (progress, fields["name"], 0, total)
            return
        entry = self.by_run.get(graph_run_id)
        if entry is None:
            return
        progress, name, done, total = entry
        if kind == "graph_step_finished":
            self.by_run[graph_run_id] = (progress, name, done + 1, total)
            progress.report(f"{name} {done + 1}/{total}", force=True)
        elif kind == "graph_completed":
            self.by_run.pop(graph_run_id, None)
            self.ls.progress_runs.pop(progress.token, None)
            progress.end(str(fields["outcome"]))


def follow_graphs(ls: RemoraLanguageServer, project: Project) -> None:
    """Show ``project``'s graph runs as progress."""
    if supports_progress(ls):
        project.event_listeners.append(GraphProgress(ls, project).on_event)


def cancel_from_progress(ls: RemoraLanguageServer, graph_run_id: str) -> None:
    """The person cancelled a graph run's progress."""
    project = _owner_of(ls, graph_run_id)
    if project is not None:
        ls.app(project).graphs.cancel(graph_run_id)


# ---- commands -----------------------------------------------------------------------


def register(server: RemoraLanguageServer) -> None:
    """Register the graph commands and ``remora.proposals.accept``."""

    @server.command("remora.graph.run")
    async def graph_run(ls, *args: Any) -> dict[str, str]:
        arguments = single_object(args, "remora.graph.run")
        return await run_graph(ls, arguments.get("graph"))

    @server.command("remora.graph.status")
    async def graph_status(ls, *args: Any) -> dict[str, Any]:
        graph_run_id = _graph_run_id(
            single_object(args, "remora.graph.status"), "remora.graph.status"
        )
        await ls.projects.all_loaded()
        for project in ls.projects:
            app = ls.app(project)
            found = await app.graphs.status(graph_run_id) if app.started else None
            if found is not None:
                return found
        raise JsonRpcInvalidParams(f"no graph run {graph_run_id}")

    @server.command("remora.graph.cancel")
    async def graph_cancel(ls, *args: Any) -> dict[str, bool]:
        graph_run_id = _graph_run_id(
            single_object(args, "remora.graph.cancel"), "remora.graph.cancel"
        )
        project = _owner_of(ls, graph_run_id)
        cancelled = project is not None and ls.app(project).graphs.cancel(graph_run_id)
        return {"cancelled": cancelled}

    @server.command("remora.proposals.accept")
    async def proposals_accept(ls, *args: Any) -> list[dict[str, Any]]:
        arguments = single_object(args, "remora.proposals.accept")
        return await accept_proposals(ls, arguments.get("proposal_ids"))
