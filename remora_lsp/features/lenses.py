"""``textDocument/codeLens`` and ``codeLens/resolve``: one lens per node.

Lenses sit on each definition's name line and are resolved lazily (the title
reads the node's agent status and pending proposal count from stored state; a
lens never calls a model). Clients that cannot resolve get titled lenses at
once. Clicking a lens runs ``remora.node.get`` for the node.

Each pending proposal has a second lens saying what was checked ("Remora
proposal: ✓ docstring-only: code unchanged except docstrings · … tests:
running 2 selected…"); clicking it runs ``remora.proposal.diff``. It sits on
the first line of the node's body — the line under the one carrying the node's
own lens — so the node's lens keeps its one-line form (Neovim joins the lenses
of a line into one virtual text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from remora_lsp.convert import needs_lines, to_range

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp
    from remora_core.model import CodeNode
    from remora_core.review.proposals import Proposal

    from remora_lsp.server import RemoraLanguageServer


def lens_command(node: CodeNode, pending: int) -> types.Command:
    """The command (and title) a node's lens shows."""
    noun = "proposal" if pending == 1 else "proposals"
    return types.Command(
        title=f"remora · {node.agent_status.value} · {pending} pending {noun}",
        command="remora.node.get",
        arguments=[{"node_id": node.id}],
    )


def proposal_lens_command(app: RemoraApp, proposal: Proposal) -> types.Command:
    """The command (and title) of a pending proposal's lens."""
    checks = app.proposals.checks_line(proposal)
    return types.Command(
        title=f"Remora proposal: {checks or 'nothing checked'}",
        command="remora.proposal.diff",
        arguments=[{"proposal_id": proposal.id}],
    )


def _proposal_lenses(app: RemoraApp, nodes: list[CodeNode]) -> list[types.CodeLens]:
    """One lens per pending proposal, on the line under its node's name."""
    lenses = []
    for node in nodes:
        line = min(node.name_span.start_line + 1, node.span.end_line)
        for proposal in app.proposals.pending(node_id=node.id):
            where = types.Position(line=line, character=0)
            lenses.append(
                types.CodeLens(
                    range=types.Range(start=where, end=where),
                    command=proposal_lens_command(app, proposal),
                )
            )
    return lenses


def _can_resolve(ls: RemoraLanguageServer) -> bool:
    text = ls.client_capabilities.text_document
    lens = text.code_lens if text else None
    support = getattr(lens, "resolve_support", None)
    # VS Code resolves lenses without advertising resolveSupport.
    return support is None or "command" in (support.properties or [])


def register(server: RemoraLanguageServer) -> None:
    """Register the code lens handlers."""

    @server.feature(
        types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True)
    )
    async def code_lens(
        ls: RemoraLanguageServer, params: types.CodeLensParams
    ) -> list[types.CodeLens] | None:
        app, path = ls.projects.known(params.text_document.uri)
        await app.loaded()
        nodes = app.nodes.outline(path)
        if not nodes:
            return None
        spans = [n.name_span for n in nodes]
        lines = app.documents.lines(path) if needs_lines(spans, ls.encoding) else None
        resolve = _can_resolve(ls)
        return [
            *(
                types.CodeLens(
                    range=to_range(node.name_span, ls.encoding, lines),
                    data={"node_id": node.id, "uri": params.text_document.uri},
                    command=None
                    if resolve
                    else lens_command(
                        node, len(app.proposals.pending(node_id=node.id))
                    ),
                )
                for node in nodes
            ),
            *_proposal_lenses(app, nodes),
        ]

    @server.feature(types.CODE_LENS_RESOLVE)
    def resolve_code_lens(
        ls: RemoraLanguageServer, lens: types.CodeLens
    ) -> types.CodeLens:
        data: Any = lens.data if isinstance(lens.data, dict) else {}
        node_id = data.get("node_id")
        for app in ls.projects:
            node = app.nodes.get(node_id) if isinstance(node_id, str) else None
            if node is not None:
                pending = len(app.proposals.pending(node_id=node.id))
                lens.command = lens_command(node, pending)
                return lens
        lens.command = types.Command(title="remora · node no longer exists", command="")
        return lens
