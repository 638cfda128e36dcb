"""Proposals in the editor: code actions.

- A pending proposal is also a diagnostic on its node's definition line
  (``remora_lsp/diagnostics.py``).
- Code actions on that line: "Accept: …" (a versioned ``WorkspaceEdit``, built
  lazily through ``codeAction/resolve`` when the client can, plus the command
  ``remora.proposal.accept``), "Reject with feedback…" and "Show diff"; tagged
  ``LLMGenerated`` when the client supports code action tags. Code actions and
  diagnostics read stored state only — never a model.
- The text an action's edit produces is written down when the edit is built,
  so an acceptance the editor applies just before a crash is still recorded
  at the next start. In a server that only follows another server's store,
  the "Accept" action is disabled and carries no edit (an editor would apply
  it before the command fails, leaving an edit nobody records).

The commands themselves (accept, reject, diff, list) are the command table's
(``remora_core/front/proposal_commands.py``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types
from remora_core.front.errors import CannotApply

from remora_lsp.editor import workspace_edit
from remora_lsp.features.inline_ids import inline_id_action

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp
    from remora_core.review.proposals import Proposal

    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

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


def _accept_edit(
    ls: RemoraLanguageServer, app: RemoraApp, proposal: Proposal
) -> types.WorkspaceEdit:
    """The edit of an "Accept" action (its result is written down first)."""
    return workspace_edit(ls, app.root, [app.proposals.plan(proposal)])


def code_actions(
    ls: RemoraLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction] | None:
    """The proposal actions on the requested lines."""
    app, path = ls.projects.locate(params.text_document.uri)
    ids = inline_id_action(ls, app, path)
    pending = app.proposals.pending(path=path)
    if not pending:
        return [ids] if ids else None
    first, last = params.range.start.line, params.range.end.line
    tags = [types.CodeActionTag.LlmGenerated] if _client_takes_tags(ls) else None
    lazy = _client_resolves_edits(ls)
    actions: list[types.CodeAction] = []
    for proposal in pending:
        node = app.nodes.get(proposal.node_id)
        if node is None or not first <= node.name_span.start_line <= last:
            continue
        argument = {"proposal_id": proposal.id}
        accept_action = types.CodeAction(
            title=f"Accept: {app.proposals.headline(proposal)}",
            kind=types.CodeActionKind.QuickFix,
            is_preferred=True,
            command=types.Command(
                title="Accept", command="remora.proposal.accept", arguments=[argument]
            ),
            data=argument,
            tags=tags,
        )
        owner = app.owner
        if owner is not None:  # no edit: the editor would apply it unrecorded
            accept_action.disabled = types.CodeActionDisabled(
                reason=f"decided in the editor of the Remora server that owns "
                f"this project's store ({owner})"
            )
            accept_action.data = None
        elif not lazy:
            try:
                accept_action.edit = _accept_edit(ls, app, proposal)
            except CannotApply as problem:
                accept_action.disabled = types.CodeActionDisabled(reason=str(problem))
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
    proposal_id = data.get("proposal_id")
    if action.edit is not None or not isinstance(proposal_id, str):
        return action
    for app in ls.projects:
        proposal = app.proposals.get(proposal_id)
        if proposal is None:
            continue
        if app.read_only:
            return action  # never an edit the owner would not record
        try:
            action.edit = _accept_edit(ls, app, proposal)
        except CannotApply as problem:
            action.disabled = types.CodeActionDisabled(reason=str(problem))
        return action
    action.disabled = types.CodeActionDisabled(reason=f"no proposal {proposal_id}")
    return action


def register(server: RemoraLanguageServer) -> None:
    """Register code actions and their resolution."""

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
