"""The kit hands users real ``CodeAction`` objects.

lsprotocol 2025.0.0's structure hook for ``Command | CodeAction`` picks
``Command`` whenever a ``command`` key is present, so Remora's "Accept: …"
action (a code action with an edit *and* a command) became a ``Command``
whose ``command`` was the stringified command object. The kit's client
converter tells them apart by the type of ``command``.
"""

from __future__ import annotations

from lsprotocol import types
from lsprotocol.converters import get_converter

from remora_lsp.testing import (
    code_actions,
    model_settings,
    proposal,
    remora_converter,
    rewrite,
    start_session,
)
from remora_lsp.testing.actions import ask
from remora_lsp.testing.client import plain
from remora_lsp.testing.model_server import ModelServer

ACCEPT = {
    "title": "Accept: rewrite (+1 −0)",
    "kind": "quickfix",
    "command": {
        "title": "Accept",
        "command": "remora.proposal.accept",
        "arguments": [{"proposal_id": "pr_0123456789ab"}],
    },
}
SHOW_DIFF = {
    "title": "Show diff",
    "command": "remora.proposal.diff",
    "arguments": [{"proposal_id": "pr_0123456789ab"}],
}
NEW_HELPER = '''def helper(self):
        """Order two b's."""
        return order("b", 2)'''


def structure(converter, items):
    return [
        converter.structure(item, types.Command | types.CodeAction) for item in items
    ]


def test_a_code_action_with_a_command_stays_a_code_action():
    action, command = structure(remora_converter(), [ACCEPT, SHOW_DIFF])

    assert isinstance(action, types.CodeAction)
    assert action.kind == types.CodeActionKind.QuickFix
    assert action.command is not None
    assert action.command.command == "remora.proposal.accept"
    assert list(action.command.arguments or []) == [{"proposal_id": "pr_0123456789ab"}]
    assert isinstance(command, types.Command)
    assert command.command == "remora.proposal.diff"


def test_lsprotocol_alone_still_turns_it_into_a_command():
    """When this fails, lsprotocol fixed its hook and the kit's can go."""
    (action,) = structure(get_converter(), [ACCEPT])
    assert isinstance(action, types.Command)
    assert action.command.startswith("{")


async def test_the_kit_client_gets_the_accept_action_as_a_code_action(workspace):
    with ModelServer() as model:
        model.on("docstring", rewrite(NEW_HELPER))
        async with start_session("neovim", workspace, model_settings(model)) as client:
            end = await ask(client, "pkg/service.py::Service.helper", "A docstring")
            made = await proposal(client, run_id=end["run_id"])
            uri = (workspace / "pkg/service.py").as_uri()
            line = client.buffers[uri].text.splitlines().index("    def helper(self):")

            actions = await code_actions(client, uri, line)

    accept = actions[0]
    assert isinstance(accept, types.CodeAction)
    assert accept.title.startswith("Accept: ")
    assert accept.command is not None
    assert accept.command.command == "remora.proposal.accept"
    # The second argument marks the command as a code action's (a refusal is
    # then shown as a message: remora_lsp/commands.py).
    assert plain(accept.command.arguments) == [
        {"proposal_id": made["id"], "edit_applied": True},
        {"origin": "codeAction"},
    ]
