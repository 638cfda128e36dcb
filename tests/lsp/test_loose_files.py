"""Files outside every workspace folder (``untitled:`` buffers, a script opened
from elsewhere) are the person's own: their agents use the person's settings —
the editor's ``initializationOptions`` and later pushed configuration — not the
defaults (which would quietly start the embedded model instead of theirs).
"""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from remora_lsp.testing.actions import command, model_settings
from remora_lsp.testing.actions import wait_for_run as finished
from remora_lsp.testing.model_server import ModelServer
from tests.lsp.conftest import EDITORS, session
from tests.lsp.helpers import eventually

DRAFT = "untitled:Untitled-1"
LONG_S = 60.0


def open_draft(client) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=DRAFT,
                language_id="python",
                version=1,
                text="def draft():\n    return 1\n",
            )
        )
    )


async def draft_id(client) -> str:
    card = await command(
        client,
        "remora.node.at",
        {"uri": DRAFT, "position": {"line": 0, "character": 5}},
    )
    return card["id"]


async def ask(client, node_id: str, message: str) -> dict:
    """Ask a node's agent; the event that ended the run."""
    started = await command(
        client, "remora.agent.chat", {"node_id": node_id, "message": message}
    )
    return await finished(client, started["run_id"], timeout=LONG_S)


async def _fresh_id(client, old: str) -> str | None:
    """The draft's id once its project restarted (None while it restarts)."""
    try:
        found = await draft_id(client)
    except JsonRpcException:  # the old project closed, the new one not yet up
        return None
    return found if found != old else None


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_loose_file_asks_the_persons_model(editor, workspace):
    with ModelServer() as model, ModelServer() as other:
        model.reply_text("Hello from your own model.")
        async with session(editor, workspace, model_settings(model)) as client:
            open_draft(client)
            first = await draft_id(client)
            ended = await ask(client, first, "Say hello")
            assert ended["type"] == "agent_completed", ended
            assert ended["result"] == "Hello from your own model."
            assert len(model.requests) == 1

            # Settings the editor pushes later reach loose files too: their
            # project restarts (in memory only, so its nodes get new ids).
            other.reply_text("Hello from the other model.")
            client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings=model_settings(other))
            )
            again = await eventually(lambda: _fresh_id(client, first), timeout=LONG_S)
            ended = await ask(client, again, "Say hello again")
            assert ended["type"] == "agent_completed", ended
            assert ended["result"] == "Hello from the other model."
            assert len(other.requests) == 1
            assert len(model.requests) == 1
