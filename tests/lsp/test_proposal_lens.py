"""A pending proposal shows in the node's code lens, hover and card."""

from __future__ import annotations

import pytest
from lsprotocol import types

from remora_lsp.testing.model_server import ModelServer
from tests.lsp.conftest import EDITORS, plain, session
from tests.lsp.helpers import Buffer, eventually, raw_request

NEW_HELPER = '''def helper(self):
        """Order two b's."""
        return order("b", 2)'''


async def run(client, name, argument):
    return plain(
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=[argument])
        )
    )


@pytest.mark.parametrize("editor", EDITORS)
async def test_lens_hover_and_card_count_pending_proposals(editor, workspace):
    with ModelServer() as model:
        settings = {
            "model": {"base_url": model.url, "name": "scripted", "protocol": "tools"},
            "swarm": {"cooldown_ms": 0},
        }
        async with session(editor, workspace, settings) as client:
            buffer = Buffer(client, "pkg/service.py")
            line, character = buffer.position("def helper")
            position = {"line": line, "character": character}
            card = await run(
                client, "remora.node.at", {"uri": buffer.uri, "position": position}
            )
            assert card["pending_proposals"] == 0
            model.reply_tool_call("rewrite_self", {"new_source": NEW_HELPER})
            model.reply_text("Done.")
            await run(
                client,
                "remora.agent.chat",
                {"node_id": card["id"], "message": "Docstring please"},
            )
            await eventually(
                lambda: [e for e in client.events if e["type"] == "agent_completed"]
            )

            card = await run(client, "remora.node.get", {"node_id": card["id"]})
            assert card["pending_proposals"] == 1
            assert card["proposals"][0]["new_source"] == NEW_HELPER
            lenses = await client.text_document_code_lens_async(
                types.CodeLensParams(
                    text_document=types.TextDocumentIdentifier(uri=buffer.uri)
                )
            )
            lens = next(item for item in lenses if item.range.start.line == line)
            if lens.command is None:
                lens = await client.code_lens_resolve_async(lens)
            assert lens.command.title == "remora · idle · 1 pending proposal"
            hover = await client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=buffer.uri),
                    position=types.Position(line=line, character=character),
                )
            )
            assert "1 pending proposal ·" in hover.contents.value


def with_tag_support(capabilities: types.ClientCapabilities) -> None:
    capabilities.text_document.code_action.tag_support = types.CodeActionTagOptions(
        value_set=[types.CodeActionTag.LlmGenerated]
    )


@pytest.mark.parametrize("tags", [False, True], ids=["no-tag-support", "tag-support"])
async def test_proposal_actions_are_tagged_llm_generated_when_supported(
    tags, workspace
):
    with ModelServer() as model:
        settings = {
            "model": {"base_url": model.url, "name": "scripted", "protocol": "tools"},
            "swarm": {"cooldown_ms": 0},
        }
        adjust = with_tag_support if tags else None
        async with session(
            "visual-studio-code", workspace, settings, adjust=adjust
        ) as client:
            buffer = Buffer(client, "pkg/service.py")
            line, character = buffer.position("def helper")
            position = {"line": line, "character": character}
            card = await run(
                client, "remora.node.at", {"uri": buffer.uri, "position": position}
            )
            model.reply_tool_call("rewrite_self", {"new_source": NEW_HELPER})
            model.reply_text("Done.")
            await run(
                client,
                "remora.agent.chat",
                {"node_id": card["id"], "message": "Docstring please"},
            )
            await eventually(
                lambda: [e for e in client.events if e["type"] == "rewrite_proposed"]
            )
            start = {"line": line, "character": 0}
            actions = plain(
                await raw_request(
                    client,
                    "textDocument/codeAction",
                    {
                        "textDocument": {"uri": buffer.uri},
                        "range": {"start": start, "end": start},
                        "context": {"diagnostics": []},
                    },
                )
            )
            assert len(actions) == 3
            for action in actions:
                assert action.get("tags") == ([1] if tags else None)
