"""Any standards-following LSP client, with no Remora code of its own.

Emacs eglot, Helix, Kate or Sublime LSP get the outline, hover, diagnostics
and the "Accept" code action from the server alone. What is asserted is what
such an editor would do and see:

- The order of the accept protocol: LSP lets a client apply a code action's
  edit, run its command, and send the ``didChange`` carrying the edit a moment
  later (or before the command; ``didSave`` may follow). Whatever the order,
  the proposal ends accepted, its diagnostic goes, the docstring is in the
  buffer once, and the server never sends the edit a second time
  (``workspace/applyEdit`` with the old version, which the editor refuses).
- Capabilities honoured exactly: a minimal LSP 3.17 client (code action
  literals, ``workspace/applyEdit``, versioned edits, nothing else) gets no
  ``disabled``, ``data``, ``isPreferred`` or ``tags`` on its code actions, no
  work-done progress, no ``window/showDocument``, no code lens refresh.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from lsprotocol import types

from remora_lsp.testing.buffers import apply_workspace_edits, edit, to_index
from remora_lsp.testing.client import initialize_params, launch
from remora_lsp.testing.model_server import ModelServer
from tests.lsp.conftest import EDITORS, plain, session
from tests.lsp.helpers import Buffer, eventually, raw_request
from tests.lsp.test_agent_runs import (
    DOCSTRING,
    LONG_S,
    NEW_HELPER,
    code_actions,
    command,
    node_of,
    of_type,
    propose,
    remora_diagnostics,
    settings,
)

CHANGE_DELAY_S = 0.5
"""How long after running the action's command such a client sends its change."""
MINIMAL = "minimal"
"""A minimal LSP 3.17 client (see :func:`minimal_capabilities`)."""


def minimal_capabilities() -> types.ClientCapabilities:
    """What a plain LSP 3.17 client announces to use Remora's code actions:
    code action literals, server-applied edits, versioned edits, save
    notifications, diagnostics — no resolve, data, disabled, preferred or tag
    support, no work-done progress, no ``showDocument``, no code lens refresh,
    no position encodings (UTF-16).
    """
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
            execute_command=types.ExecuteCommandClientCapabilities(),
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(),
            document_symbol=types.DocumentSymbolClientCapabilities(
                hierarchical_document_symbol_support=True
            ),
            code_action=types.CodeActionClientCapabilities(
                code_action_literal_support=types.ClientCodeActionLiteralOptions(
                    code_action_kind=types.ClientCodeActionKindOptions(
                        value_set=[types.CodeActionKind.QuickFix]
                    )
                )
            ),
        ),
    )


@contextlib.asynccontextmanager
async def any_session(editor: str, workspace, model: ModelServer):
    """A session as ``editor`` (one of EDITORS, or MINIMAL) with ``applyEdit``
    answered like an editor: refused when the edit names another version than
    the buffer's. Yields the client and the edits the server sent.
    """
    if editor != MINIMAL:
        async with session(editor, workspace, settings(model)) as client:
            yield client, apply_workspace_edits(client)
        return
    async with launch() as client:
        client.editor = "visual-studio-code"  # UTF-16 positions, the default
        client.root = workspace
        received = apply_workspace_edits(client)
        params = initialize_params(
            "neovim", workspace, initialization_options=settings(model)
        )
        params.capabilities = minimal_capabilities()
        await client.initialize_session(params)
        yield client, received
        await client.shutdown_session()


async def accept_action(client, buffer: Buffer, line: int) -> dict:
    """The "Accept: …" code action on ``line``, resolved if it came without edit."""
    actions = await code_actions(client, buffer.uri, line)
    accept = next(a for a in actions if a["title"].startswith("Accept: "))
    if "edit" not in accept:
        accept = plain(await raw_request(client, "codeAction/resolve", accept))
    return accept


def apply_unsent(buffer: Buffer, workspace_edit: dict):
    """Apply the action's edit to the buffer as the editor does; its
    ``didChange`` goes out only when the returned function is called.
    """
    (change,) = workspace_edit["documentChanges"]
    assert change["textDocument"]["version"] == buffer.version
    (text_edit,) = change["edits"]
    where = text_edit["range"]
    start = (where["start"]["line"], where["start"]["character"])
    end = (where["end"]["line"], where["end"]["character"])
    a = to_index(buffer.text, *start, buffer.client.editor)
    b = to_index(buffer.text, *end, buffer.client.editor)
    buffer.text = buffer.text[:a] + text_edit["newText"] + buffer.text[b:]
    buffer.version += 1
    version = buffer.version

    def send() -> None:
        edit(buffer.client, buffer.uri, version, start, end, text_edit["newText"])

    return send


def save(client, buffer: Buffer) -> None:
    """Write the buffer to disk and say so (``didSave``), as an editor saves."""
    (client.root / "pkg/service.py").write_text(buffer.text, encoding="utf-8")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=buffer.uri)
        )
    )


async def proposed_on_helper(client, model: ModelServer) -> tuple[Buffer, str, int]:
    """Service.helper's agent proposes a docstring: (buffer, proposal id, line)."""
    buffer = Buffer(client, "pkg/service.py")
    helper = await eventually(
        lambda: node_of(client, buffer, "def helper"), timeout=LONG_S
    )
    _run, proposal_id = await propose(client, model, helper, NEW_HELPER)
    line, _ = buffer.position("def helper")
    await eventually(lambda: remora_diagnostics(client, buffer.uri))
    return buffer, proposal_id, line


async def assert_accepted_once(client, buffer: Buffer, proposal_id: str, received):
    """What the person sees after Accept: the docstring once, no diagnostic,
    the proposal accepted; and the server never sent the edit itself.
    """
    await eventually(
        lambda: of_type(client, "rewrite_applied", proposal_id=proposal_id)
    )
    await eventually(lambda: not remora_diagnostics(client, buffer.uri))
    assert buffer.text.count(DOCSTRING) == 1
    accepted = await command(client, "remora.proposals.list", {"status": "accepted"})
    assert [p["id"] for p in accepted] == [proposal_id]
    assert await command(client, "remora.proposals.list", {"status": "pending"}) == []
    assert received == []  # no second applyEdit: the editor applied it once
    assert not of_type(client, "rewrite_not_applied")


# ---- the order of executeCommand and didChange ---------------------------------------


@pytest.mark.parametrize("editor", [*EDITORS, MINIMAL])
async def test_accept_command_sent_before_the_change_carrying_the_edit(
    editor, workspace
):
    with ModelServer() as model:
        async with any_session(editor, workspace, model) as (client, received):
            buffer, proposal_id, line = await proposed_on_helper(client, model)
            accept = await accept_action(client, buffer, line)

            send_change = apply_unsent(buffer, accept["edit"])
            running = asyncio.ensure_future(
                command(
                    client, "remora.proposal.accept", accept["command"]["arguments"][0]
                )
            )
            await asyncio.sleep(CHANGE_DELAY_S)  # the editor sends its change later
            send_change()
            save(client, buffer)

            assert await running == {"applied": True}
            await assert_accepted_once(client, buffer, proposal_id, received)


@pytest.mark.parametrize("editor", EDITORS)
async def test_resolving_show_diff_or_reject_never_brings_the_edit(editor, workspace):
    """A client resolves whichever action the person picks when it came without
    an edit (Neovim does): "Show diff" and "Reject with feedback…" name the
    proposal too, and resolving them once brought the Accept edit, which the
    editor applied — choosing "Show diff" accepted the proposal.
    """
    with ModelServer() as model:
        async with any_session(editor, workspace, model) as (client, received):
            buffer, proposal_id, line = await proposed_on_helper(client, model)
            actions = await code_actions(client, buffer.uri, line)
            for title in ("Show diff", "Reject with feedback…"):
                action = next(a for a in actions if a["title"] == title)
                resolved = plain(
                    await raw_request(client, "codeAction/resolve", action)
                )
                assert "edit" not in resolved, title
                assert resolved["command"] == action["command"]
            (pending,) = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            assert pending["id"] == proposal_id
            assert received == []  # nor did the server send it itself


@pytest.mark.parametrize("editor", [EDITORS[0], MINIMAL])
async def test_accept_command_sent_after_the_change_and_the_save(editor, workspace):
    with ModelServer() as model:
        async with any_session(editor, workspace, model) as (client, received):
            buffer, proposal_id, line = await proposed_on_helper(client, model)
            accept = await accept_action(client, buffer, line)

            apply_unsent(buffer, accept["edit"])()
            save(client, buffer)
            await asyncio.sleep(CHANGE_DELAY_S)  # the change has been taken in
            result = await command(
                client, "remora.proposal.accept", accept["command"]["arguments"][0]
            )

            assert result == {"applied": True}
            await assert_accepted_once(client, buffer, proposal_id, received)


async def test_the_change_carrying_the_action_edit_accepts_without_the_command(
    workspace,
):
    """A client that applies the action's edit and never runs its command (or
    runs it much later): the change that shows the proposal's text records it.
    """
    with ModelServer() as model:
        async with any_session(MINIMAL, workspace, model) as (client, received):
            buffer, proposal_id, line = await proposed_on_helper(client, model)
            accept = await accept_action(client, buffer, line)

            apply_unsent(buffer, accept["edit"])()

            await assert_accepted_once(client, buffer, proposal_id, received)
            late = await command(
                client, "remora.proposal.accept", accept["command"]["arguments"][0]
            )
            assert late == {"applied": True}


async def test_an_action_edit_whose_change_never_comes_is_not_sent_again(workspace):
    """The editor ran the command but never applied the edit (it refused it):
    the server says so after a short wait and does not apply it itself.
    """
    with ModelServer() as model:
        async with any_session(MINIMAL, workspace, model) as (client, received):
            buffer, proposal_id, line = await proposed_on_helper(client, model)
            accept = await accept_action(client, buffer, line)

            result = await asyncio.wait_for(
                command(
                    client, "remora.proposal.accept", accept["command"]["arguments"][0]
                ),
                timeout=LONG_S,
            )

            assert result["applied"] is False
            assert "did not arrive" in result["reason"]
            assert received == []
            assert DOCSTRING not in buffer.text
            pending = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            assert [p["id"] for p in pending] == [proposal_id]


# ---- capabilities --------------------------------------------------------------------


async def test_a_minimal_client_gets_only_fields_and_requests_it_announced(workspace):
    with ModelServer() as model:
        async with any_session(MINIMAL, workspace, model) as (client, received):
            buffer, proposal_id, line = await proposed_on_helper(client, model)
            actions = await code_actions(client, buffer.uri, line)

            assert [a["title"].split(":")[0] for a in actions] == [
                "Accept",
                "Reject with feedback…",
                "Show diff",
            ]
            for action in actions:
                unannounced = {"disabled", "data", "isPreferred", "tags"} & set(action)
                assert not unannounced, action
            accept = actions[0]
            assert "edit" in accept  # no resolve support: the edit comes with it

            apply_unsent(buffer, accept["edit"])()
            result = await command(
                client, "remora.proposal.accept", accept["command"]["arguments"][0]
            )
            assert result == {"applied": True}
            await assert_accepted_once(client, buffer, proposal_id, received)
            assert client.progress_reports == {}  # no workDoneProgress/create
            assert client.shown_documents == []
            assert client.lens_refreshes == 0
            assert client.registrations == []  # no dynamic registration announced


def bare_capabilities() -> types.ClientCapabilities:
    """An LSP 3.17 client announcing hardly anything: no code action literals,
    no hierarchical outline, no hover format, no ``workspace/applyEdit``.
    """
    return types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(),
            code_action=types.CodeActionClientCapabilities(),
        ),
    )


async def test_a_bare_client_gets_plain_symbols_text_hover_and_commands(workspace):
    with ModelServer() as model:
        async with launch() as client:
            client.editor = "visual-studio-code"
            client.root = workspace
            params = initialize_params(
                "neovim", workspace, initialization_options=settings(model)
            )
            params.capabilities = bare_capabilities()
            await client.initialize_session(params)
            buffer, proposal_id, line = await proposed_on_helper(client, model)

            outline = plain(
                await raw_request(
                    client,
                    "textDocument/documentSymbol",
                    {"textDocument": {"uri": buffer.uri}},
                )
            )
            helper = next(s for s in outline if s["name"] == "helper")
            assert "children" not in helper and "location" in helper  # flat
            assert helper["containerName"].startswith("Service")
            hover = await client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=buffer.uri),
                    position=types.Position(line=line, character=8),
                )
            )
            assert hover is not None
            assert isinstance(hover.contents, types.MarkupContent)
            assert hover.contents.kind == types.MarkupKind.PlainText
            assert "**" not in hover.contents.value
            assert "Service.helper" in hover.contents.value

            actions = await code_actions(client, buffer.uri, line)
            assert [a["command"] for a in actions] == [
                "remora.proposal.accept",
                "remora.proposal.reject",
                "remora.proposal.diff",
            ]  # bare commands: the client announced no code action literals
            result = await command(
                client, "remora.proposal.accept", actions[0]["arguments"][0]
            )
            assert result["applied"] is False
            assert "workspace.applyEdit" in result["reason"]
            assert DOCSTRING not in buffer.text
            pending = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            assert [p["id"] for p in pending] == [proposal_id]
            await client.shutdown_session()
