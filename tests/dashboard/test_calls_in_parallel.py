"""A call that waits does not hold up the rest of the page: while an accept
waits for the editor to apply its edit (a person looking at a confirmation,
say), another node's page opens. Each call of the dashboard goes to the
editor's server on a connection of its own. Tested in Debian's Chromium.
"""

from __future__ import annotations

import asyncio

from lsprotocol import types

from remora_lsp.testing.buffers import apply_edits
from remora_lsp.testing.model_server import ModelServer
from tests.dashboard.support import browser, dashboard, painted
from tests.dashboard.test_page import open_node, socket_of
from tests.lsp.conftest import session
from tests.lsp.helpers import Buffer, eventually
from tests.lsp.test_agent_runs import DOCSTRING, NEW_HELPER, settings
from tests.lsp.test_command_line import HELPER, remora


class HeldEdits:
    """An editor that applies an edit only once the test lets it."""

    def __init__(self, client, buffer: Buffer) -> None:
        self.asked = asyncio.Event()
        self.release = asyncio.Event()
        converter = client.protocol._converter

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        async def apply_edit(params: types.ApplyWorkspaceEditParams):
            self.asked.set()
            await self.release.wait()
            apply_edits(buffer, converter.unstructure(params.edit))
            return types.ApplyWorkspaceEditResult(applied=True)


async def test_while_an_accept_waits_for_the_editor_another_node_opens(workspace):
    with ModelServer() as model:
        async with session("neovim", workspace, settings(model)) as client:
            await socket_of(workspace)
            buffer = Buffer(client, "pkg/service.py")
            edits = HeldEdits(client, buffer)
            model.reply_tool_call("rewrite_self", {"new_source": NEW_HELPER})
            model.reply_text("Added a docstring.")
            code, _, err = await remora(
                workspace, "ask", HELPER, "Docstring please", "--wait"
            )
            assert code == 0, err
            async with dashboard(workspace) as url, browser() as page:
                await page.goto(url)
                await painted(page)
                await open_node(page, "helper")
                await page.locator(".proposal.pending button.accept").click()
                await asyncio.wait_for(edits.asked.wait(), 60)

                # The accept waits for the editor; the page goes on.
                await open_node(page, "unused")
                assert await page.text_content(".card h2") == "unused"
                assert DOCSTRING not in buffer.text

                edits.release.set()
                await eventually(lambda: DOCSTRING in buffer.text)
                await page.wait_for_selector("#toast:has-text('applied')")
                assert not page.problems  # type: ignore[attr-defined]
