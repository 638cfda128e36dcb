"""Proposals in the editor: diagnostics, code actions, accept / reject / diff.

- A pending proposal is a diagnostic on its node's definition line (source
  ``remora``, severity Information, ``code`` the proposal id), republished when
  a proposal event arrives or the file changes.
- Code actions on that line: "Accept: …" (a versioned ``WorkspaceEdit``, built
  lazily through ``codeAction/resolve`` when the client can, plus the command
  ``remora.proposal.accept``), "Reject with feedback…" and "Show diff"; tagged
  ``LLMGenerated`` when the client supports code action tags. Code actions and
  diagnostics read stored state only — never a model.
- ``remora.proposal.accept {proposal_id}`` → ``{applied, reason?}``: when the
  document already holds the proposal (the client applied the code action's
  edit just before running its command) the acceptance is only recorded;
  otherwise the server sends ``workspace/applyEdit``. Either way it then checks
  the document holds the expected text (Neovim silently skips an edit made for
  an older version): only then is the proposal ``accepted`` and
  ``rewrite_applied`` emitted; if not, it stays pending with a
  ``rewrite_not_applied`` event. A proposal whose node changed is ``stale`` and
  never applied. The text the edit produces is written to the store before
  ``workspace/applyEdit`` is sent (and when a code action's edit is built), so
  a crash between the edit landing and the acceptance being recorded still
  ends ``accepted`` at the next start.
- ``remora.proposal.reject {proposal_id, feedback}`` → ``{run_id}``: the agent
  runs again with the feedback (asked with ``remora/askUser`` when missing).
  Accept and reject of one proposal take the same lock: sent together, one
  decides and the other answers that it is already decided.
- In a server that only follows another server's store, accept and reject
  answer an error naming the owner (``commands.ensure_owner``), and the
  "Accept" code action is disabled and carries no edit (an editor would apply
  it before the command fails, leaving an edit nobody records).
- What was checked (``Proposal.checks``: the intent guard it passed, the
  project's tests) follows the summary in the diagnostic ("— ✓ docstring-only:
  code unchanged except docstrings · … tests: running 2 selected…"), is
  republished when a ``proposal_checked`` event arrives, and is in the diff
  result and the node card.
- ``remora.proposal.diff {proposal_id}`` → ``{diff, old_source, new_source,
  status, checks}``; ``remora.proposals.list {uri?, status?}`` → proposals,
  newest first.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from remora_core.front.errors import FrontError
from remora_core.review.decisions import NotApplicable
from remora_core.review.hidden_chars import note, reveal

from remora_lsp.arguments import (
    ProposalArguments,
    ProposalsArguments,
    RejectArguments,
    parse,
)
from remora_lsp.editor import ASK_USER_REQUEST, workspace_edit
from remora_lsp.features.commands import ensure_owner
from remora_lsp.features.inline_ids import inline_id_action

if TYPE_CHECKING:
    from remora_core.events.store import StoredEvent
    from remora_core.project import Project
    from remora_core.review.decisions import PlannedEdit
    from remora_core.review.proposals import Proposal

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
APPLY_WAIT_S = 3.0
"""How long an accepted edit may take to reach the server as ``didChange``."""
PROPOSAL_ID = re.compile(r"^pr_[0-9a-f]{12}$")


# ---- finding things ---------------------------------------------------------------


def find_proposal(
    ls: RemoraLanguageServer, proposal_id: Any
) -> tuple[Project, Proposal]:
    """The project and proposal of ``proposal_id``; InvalidParams otherwise."""
    if not isinstance(proposal_id, str) or not PROPOSAL_ID.match(proposal_id):
        raise JsonRpcInvalidParams(
            f"proposal_id must look like pr_ followed by 12 hex digits, got "
            f"{proposal_id!r}"
        )
    for project in ls.projects:
        app = ls.app(project)
        if app.started and (proposal := app.proposals.get(proposal_id)) is not None:
            return project, proposal
    raise JsonRpcInvalidParams(f"no proposal {proposal_id} in any open project")


def summary(proposal: Proposal) -> str:
    """A short description of a proposal's change."""
    added = removed = 0
    for line in proposal.diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    what = "new definition" if proposal.kind == "new_node" else "rewrite"
    reason = proposal.reasoning.strip().splitlines()[0] if proposal.reasoning else ""
    text = f"{what} (+{added} −{removed})"
    if (hidden := note(proposal.new_source)) is not None:
        text = f"{text} ⚠ {hidden}"
    return f"{text}: {reveal(reason[:80])}" if reason else text


def checks_line(proposal: Proposal) -> str:
    """A proposal's checks in one line: ``✓ docstring-only: … · ✓ tests: 3 passed``."""
    return " · ".join(check.summary() for check in proposal.checks)


def _definition_line(
    ls: RemoraLanguageServer, project: Project, proposal: Proposal
) -> types.Range | None:
    node = project.graph.get(proposal.node_id)
    lines = project.line_index(proposal.file_path)
    if node is None or lines is None:
        return None
    line = node.name_span.start_line
    end = lines.position(lines.line_content_end(line), ls.encoding)[1]
    return types.Range(
        start=types.Position(line=line, character=0),
        end=types.Position(line=line, character=end),
    )


# ---- diagnostics --------------------------------------------------------------------


def publish(ls: RemoraLanguageServer, project: Project, path: str) -> None:
    """Send the diagnostics of ``path``'s pending proposals."""
    app = ls.app(project)
    if not app.started:
        return
    diagnostics = []
    for proposal in app.proposals.pending(path=path):
        where = _definition_line(ls, project, proposal)
        if where is None:
            continue
        checked = checks_line(proposal)
        diagnostics.append(
            types.Diagnostic(
                range=where,
                message=f"Remora proposes a {summary(proposal)}"
                + (f" — {checked}" if checked else ""),
                severity=types.DiagnosticSeverity.Information,
                source=SOURCE,
                code=proposal.id,
            )
        )
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(
            uri=ls.projects.uri(project, path), diagnostics=diagnostics
        )
    )


def follow_proposals(ls: RemoraLanguageServer, project: Project) -> None:
    """Republish a file's diagnostics whenever one of its proposals changes
    (every open file's after a checkpoint is restored).
    """

    def on_event(stored: StoredEvent) -> None:
        app = ls.app(project)
        if not app.started:
            return
        if stored.event.type == "checkpoint_restored":  # any proposal may differ
            for path in list(project.documents):
                publish(ls, project, path)
            return
        if stored.event.type not in PROPOSAL_EVENTS:
            return
        proposal = app.proposals.get(stored.event.__dict__["proposal_id"])
        if proposal is not None:
            publish(ls, project, proposal.file_path)

    project.event_listeners.append(on_event)


# ---- edits ---------------------------------------------------------------------------


def _plan(
    ls: RemoraLanguageServer, project: Project, proposal: Proposal
) -> PlannedEdit:
    """The edit of a code action; the text it produces is written down (in the
    background) so an acceptance the editor applies just before a crash is
    still recorded at the next start.
    """
    return ls.app(project).proposals.plan(proposal)


async def accept(
    ls: RemoraLanguageServer, project: Project, proposal: Proposal
) -> dict[str, Any]:
    """Accept through the editor: the core use case (decide → apply → verify →
    record, once per proposal).
    """
    return await ls.app(project).proposals.accept(proposal.id)


# ---- code actions ---------------------------------------------------------------


def _client_resolves_edits(ls: RemoraLanguageServer) -> bool:
    document = ls.client_capabilities.text_document
    action = document.code_action if document else None
    support = action.resolve_support if action else None
    return bool(support and "edit" in support.properties)


def _client_takes_tags(ls: RemoraLanguageServer) -> bool:
    document = ls.client_capabilities.text_document
    action = document.code_action if document else None
    support = getattr(action, "tag_support", None) if action else None
    return bool(support and types.CodeActionTag.LlmGenerated in support.value_set)


def code_actions(
    ls: RemoraLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    """The proposal actions on the requested lines."""
    project, path = ls.projects.locate(params.text_document.uri)
    ids = inline_id_action(ls, project, path)
    app = ls.app(project)
    if not app.started:
        return [ids] if ids else None
    pending = app.proposals.pending(path=path)
    if not pending:
        return [ids] if ids else None
    first, last = params.range.start.line, params.range.end.line
    tags = [types.CodeActionTag.LlmGenerated] if _client_takes_tags(ls) else None
    lazy = _client_resolves_edits(ls)
    actions: list[types.CodeAction] = []
    for proposal in pending:
        node = project.graph.get(proposal.node_id)
        if node is None or not first <= node.name_span.start_line <= last:
            continue
        argument = {"proposal_id": proposal.id}
        accept_action = types.CodeAction(
            title=f"Accept: {summary(proposal)}",
            kind=types.CodeActionKind.QuickFix,
            is_preferred=True,
            command=types.Command(
                title="Accept", command="remora.proposal.accept", arguments=[argument]
            ),
            data=argument,
            tags=tags,
        )
        owner = project.store_owner
        if owner is not None:  # no edit: the editor would apply it unrecorded
            accept_action.disabled = types.CodeActionDisabled(
                reason=f"decided in the editor of the Remora server that owns "
                f"this project's store ({owner.describe()})"
            )
            accept_action.data = None
        elif not lazy:
            try:
                accept_action.edit = workspace_edit(
                    ls, project, _plan(ls, project, proposal)
                )
            except NotApplicable as problem:
                accept_action.disabled = types.CodeActionDisabled(reason=problem.reason)
        actions.append(accept_action)
        for title, command in (
            ("Reject with feedback…", "remora.proposal.reject"),
            ("Show diff", "remora.proposal.diff"),
        ):
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    command=types.Command(
                        title=title, command=command, arguments=[argument]
                    ),
                    tags=tags,
                )
            )
    if ids is not None:
        actions.append(ids)
    return actions or None


def resolve(ls: RemoraLanguageServer, action: types.CodeAction) -> types.CodeAction:
    """Fill in the edit of an "Accept" action."""
    data = action.data if isinstance(action.data, dict) else {}
    if action.edit is not None or "proposal_id" not in data:
        return action
    project, proposal = find_proposal(ls, data["proposal_id"])
    if project.following:
        return action  # never an edit the owner would not record
    try:
        action.edit = workspace_edit(ls, project, _plan(ls, project, proposal))
    except NotApplicable as problem:
        action.disabled = types.CodeActionDisabled(reason=problem.reason)
    return action


# ---- registration ---------------------------------------------------------------


async def _feedback(ls: RemoraLanguageServer, proposal: Proposal) -> str:
    """Ask the person for feedback on a rejection ('' if the client cannot)."""
    try:
        reply = await asyncio.wait_for(
            ls.protocol.send_request_async(
                ASK_USER_REQUEST,
                {
                    "question_id": f"feedback_{proposal.id}",
                    "question": "What should the agent do differently?",
                },
            ),
            timeout=600,
        )
    except Exception as error:  # no such request in this client, or no answer
        log.info("no feedback for %s: %s", proposal.id, error)
        return ""
    answer = getattr(reply, "answer", None)
    if answer is None and isinstance(reply, dict):
        answer = reply.get("answer")
    return answer if isinstance(answer, str) else ""


def register(server: RemoraLanguageServer) -> None:
    """Register code actions and the proposal commands.

    Command handlers leave ``ls`` unannotated (see ``commands.py``).
    """

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[
                types.CodeActionKind.QuickFix,
                types.CodeActionKind.RefactorRewrite,
            ],
            resolve_provider=True,
        ),
    )
    def code_action(
        ls: RemoraLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        return code_actions(ls, params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    def code_action_resolve(
        ls: RemoraLanguageServer, action: types.CodeAction
    ) -> types.CodeAction:
        return resolve(ls, action)

    @server.command("remora.proposal.accept")
    async def proposal_accept(ls, *args: Any) -> dict[str, Any]:
        arguments = parse(ProposalArguments, args, "remora.proposal.accept")
        project, proposal = find_proposal(ls, arguments.proposal_id)
        ensure_owner(project, "accept proposals")
        return await accept(ls, project, proposal)

    @server.command("remora.proposal.reject")
    async def proposal_reject(ls, *args: Any) -> dict[str, Any]:
        arguments = parse(RejectArguments, args, "remora.proposal.reject")
        project, proposal = find_proposal(ls, arguments.proposal_id)
        ensure_owner(project, "reject proposals")
        feedback = arguments.feedback
        if proposal.status != "pending":
            raise JsonRpcInvalidParams(
                f"proposal {proposal.id} is already {proposal.status}"
            )
        if feedback is None:
            feedback = await _feedback(ls, proposal)
        try:
            run_id = await ls.app(project).proposals.reject(proposal.id, feedback)
        except FrontError as error:  # decided while the person wrote feedback
            raise JsonRpcInvalidParams(str(error)) from None
        return {"run_id": run_id}

    @server.command("remora.proposal.diff")
    async def proposal_diff(ls, *args: Any) -> dict[str, Any]:
        arguments = parse(ProposalArguments, args, "remora.proposal.diff")
        _project, proposal = find_proposal(ls, arguments.proposal_id)
        return {
            "diff": proposal.diff,
            "old_source": proposal.old_source,
            "new_source": proposal.new_source,
            "status": proposal.status,
            "checks": [check.to_json() for check in proposal.checks],
        }

    @server.command("remora.proposals.list")
    async def proposals_list(ls, *args: Any) -> list[dict[str, Any]]:
        arguments = parse(ProposalsArguments, args, "remora.proposals.list")
        uri, status = arguments.uri, arguments.status
        found: list[dict[str, Any]] = []
        projects = (
            [ls.projects.locate(uri)] if uri else [(p, None) for p in ls.projects]
        )
        for project, path in projects:
            app = ls.app(project)
            if not app.started:
                continue
            listed = app.proposals.list(path=path, status=status)
            for proposal in listed:
                item = proposal.to_json()
                item["uri"] = ls.projects.uri(project, proposal.file_path)
                found.append(item)
        return found
