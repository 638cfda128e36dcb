"""Proposals in the editor: code actions.

- A pending proposal is also a diagnostic on its node's definition line
  (``remora_lsp/diagnostics.py``).
- Code actions on that line (a change set's: on each of its members' nodes;
  a new file's: on the node that asked for it): "Accept: …" (a versioned
  ``WorkspaceEdit`` — across every file of a set, a new file as
  ``CreateFile`` plus its text, refused to a client that cannot create files, built
  lazily through ``codeAction/resolve`` when the client can, plus the command
  ``remora.proposal.accept {proposal_id, edit_applied: true}``: the editor
  applies the edit, so the command only waits for the ``didChange`` carrying
  it — which LSP lets arrive after the command — and records it), "Reject
  with feedback…", "Show diff" and, for each member of a change set on its
  own node (a new file's on the asking node), "Reject member 2 of the change
  set (rewrite make_item) with feedback…" (``members: [1]``: the rest stays
  pending). Every command carries :data:`~remora_lsp.commands.CODE_ACTION`,
  so a refusal (a member others need) reaches the person as a message. Code
  actions and diagnostics read stored state only — never a model.
- Only what the client announced (:class:`ActionSupport`): ``data``,
  ``isPreferred``, ``disabled``, the ``LLMGenerated`` tag each need their
  capability; an "Accept" that could only be shown disabled is left out for a
  client that cannot show that; a client without code action literals gets
  bare commands (its "Accept" makes the server send the edit).
- The text an action's edit produces is written down when the edit is built,
  so an acceptance the editor applies just before a crash is still recorded
  at the next start, and a change that brings it records the acceptance even
  before (or without) the command. In a server that only follows another
  server's store, the "Accept" action is disabled and carries no edit (an
  editor would apply it before the command fails, leaving an edit nobody
  records).

The commands themselves (accept, reject, diff, list) are the command table's
(``remora_core/front/proposal_commands.py``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from remora_core.front.errors import CannotApply

from remora_lsp.commands import CODE_ACTION
from remora_lsp.editor import NO_CREATE, can_create, refuse_creation, workspace_edit
from remora_lsp.features.inline_ids import inline_id_action

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp
    from remora_core.review.proposals import Proposal

    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

# ---- code actions ---------------------------------------------------------------


@dataclass(frozen=True)
class ActionSupport:
    """What the client announced of ``textDocument.codeAction`` (nothing it
    did not announce is sent: a client is free to choke on an unknown field).
    """

    literals: bool
    """``CodeAction`` objects at all (else bare commands)."""
    disabled: bool
    data: bool
    preferred: bool
    tags: bool
    resolves_edits: bool

    @classmethod
    def of(cls, ls: RemoraLanguageServer) -> ActionSupport:
        """The code action support ``ls``'s client announced."""
        document = ls.client_capabilities.text_document
        action = document.code_action if document else None
        if action is None:
            return cls(False, False, False, False, False, False)
        resolve = action.resolve_support
        tags = action.tag_support
        return cls(
            literals=action.code_action_literal_support is not None,
            disabled=bool(action.disabled_support),
            data=bool(action.data_support),
            preferred=bool(action.is_preferred_support),
            tags=bool(tags and types.CodeActionTag.LlmGenerated in tags.value_set),
            resolves_edits=bool(resolve and "edit" in resolve.properties),
        )


def _creates(proposal: Proposal) -> bool:
    """Whether accepting ``proposal`` creates a file."""
    return any(member.kind == "new_file" for member in proposal.members)


def _accept_edit(
    ls: RemoraLanguageServer, app: RemoraApp, proposal: Proposal
) -> types.WorkspaceEdit:
    """The edit of an "Accept" action (its result is written down first)."""
    if _creates(proposal):
        refuse_creation(ls)  # before planning: nothing written down for it
    return workspace_edit(ls, app.root, app.proposals.plan(proposal))


def _accept_action(
    ls: RemoraLanguageServer,
    app: RemoraApp,
    proposal: Proposal,
    support: ActionSupport,
    tags: list[types.CodeActionTag] | None,
) -> types.CodeAction | None:
    """The "Accept: …" action; None when it could only be shown disabled to a
    client that cannot show that.
    """
    proposal_id = {"proposal_id": proposal.id}
    action = types.CodeAction(
        title=f"Accept: {app.proposals.title(proposal)}",
        kind=types.CodeActionKind.QuickFix,
        is_preferred=True if support.preferred else None,
        tags=tags,
    )
    why_not: str | None = None
    owner = app.owner
    if owner is not None:  # no edit: the editor would apply it unrecorded
        why_not = (
            f"decided in the editor of the Remora server that owns "
            f"this project's store ({owner})"
        )
    elif _creates(proposal) and not can_create(ls):
        why_not = NO_CREATE  # said at once, before any resolve
    elif not support.resolves_edits:
        try:
            action.edit = _accept_edit(ls, app, proposal)
        except CannotApply as problem:
            why_not = str(problem)
    if why_not is not None:
        if not support.disabled:
            return None
        action.disabled = types.CodeActionDisabled(reason=why_not)
        return action
    # The edit comes with the action (now or through resolve): the editor
    # applies it, so the command only waits for it and records it.
    argument = {**proposal_id, "edit_applied": True}
    action.command = types.Command(
        title="Accept",
        command="remora.proposal.accept",
        arguments=[argument, CODE_ACTION],
    )
    if support.data:
        action.data = proposal_id
    return action


def _member_rejects(
    app: RemoraApp, proposal: Proposal, path: str, first: int, last: int
) -> list[tuple[str, str, dict[str, Any]]]:
    """The "Reject member 2 of the change set (rewrite make_item)…" of each
    member of a set shown on lines ``first``-``last`` of ``path``: the same
    command as "Reject with feedback…" (the person is asked for it), with
    that member's index; a member that others need is refused, said to the
    person (``CODE_ACTION``).
    """
    found = []
    for index, node_id, label in app.proposals.member_anchors(proposal, path):
        node = app.nodes.get(node_id)
        if node is None or not first <= node.name_span.start_line <= last:
            continue
        # Numbered from 1, as every text and editor shows members.
        number = index + 1
        title = f"Reject member {number} of the change set ({label}) with feedback…"
        argument = {"proposal_id": proposal.id, "members": [index]}
        found.append((title, "remora.proposal.reject", argument))
    return found


def code_actions(
    ls: RemoraLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction | types.Command] | None:
    """The proposal actions on the requested lines."""
    app, path = ls.projects.locate(params.text_document.uri)
    support = ActionSupport.of(ls)
    ids = inline_id_action(ls, app, path) if support.literals else None
    pending = app.proposals.pending(path=path)
    if not pending:
        return [ids] if ids else None
    first, last = params.range.start.line, params.range.end.line
    tags = [types.CodeActionTag.LlmGenerated] if support.tags else None
    actions: list[types.CodeAction | types.Command] = []
    for proposal in pending:
        lines = [
            node.name_span.start_line
            for node_id in app.proposals.anchors(proposal, path)
            if (node := app.nodes.get(node_id)) is not None
        ]
        if not any(first <= line <= last for line in lines):
            continue
        argument = {"proposal_id": proposal.id}
        titled = [
            ("Reject with feedback…", "remora.proposal.reject", argument),
            ("Show diff", "remora.proposal.diff", argument),
            *_member_rejects(app, proposal, path, first, last),
        ]
        if not support.literals:  # commands only: the server applies the edit
            title = f"Accept: {app.proposals.title(proposal)}"
            titled.insert(0, (title, "remora.proposal.accept", argument))
            actions += [
                types.Command(title=t, command=c, arguments=[a, CODE_ACTION])
                for t, c, a in titled
            ]
            continue
        accept = _accept_action(ls, app, proposal, support, tags)
        if accept is not None:
            actions.append(accept)
        for title, command, arguments in titled:
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=types.CodeActionKind.QuickFix,
                    command=types.Command(
                        title=title,
                        command=command,
                        arguments=[arguments, CODE_ACTION],
                    ),
                    tags=tags,
                )
            )
    if ids is not None:
        actions.append(ids)
    return actions or None


def _proposal_id(action: types.CodeAction) -> str | None:
    """The proposal an "Accept" action is about: its ``data``, else its
    command's; None for any other action ("Show diff" and "Reject with
    feedback…" name the proposal too, and must never get its edit).
    """
    command = action.command.command if action.command else None
    if command is not None and command != "remora.proposal.accept":
        return None
    if isinstance(action.data, dict):
        found = action.data.get("proposal_id")
        return found if isinstance(found, str) else None
    arguments = action.command.arguments if action.command else None
    first = arguments[0] if arguments else None
    found = first.get("proposal_id") if isinstance(first, dict) else None
    return found if isinstance(found, str) else None


def resolve(ls: RemoraLanguageServer, action: types.CodeAction) -> types.CodeAction:
    """Fill in the edit of an "Accept" action."""
    proposal_id = _proposal_id(action)
    if action.edit is not None or proposal_id is None:
        return action
    disabled = ActionSupport.of(ls).disabled
    for app in ls.projects:
        proposal = app.proposals.get(proposal_id)
        if proposal is None:
            continue
        if app.read_only:
            return action  # never an edit the owner would not record
        try:
            action.edit = _accept_edit(ls, app, proposal)
        except CannotApply as problem:
            if disabled:
                action.disabled = types.CodeActionDisabled(reason=str(problem))
        return action
    if disabled:
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
    ) -> list[types.CodeAction | types.Command] | None:
        return code_actions(ls, params)

    @server.feature(types.CODE_ACTION_RESOLVE)
    def code_action_resolve(
        ls: RemoraLanguageServer, action: types.CodeAction
    ) -> types.CodeAction:
        return resolve(ls, action)
