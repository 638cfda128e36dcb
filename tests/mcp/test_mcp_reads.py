"""What an MCP host may read (issue 25 class 2): only files inside the
project, never a secret one, checked when it reads.

- A file swapped for a link out of the project after it was indexed:
  ``remora://node/{id}`` gave the file outside (a store naming an absolute
  path too: ``tests/core/test_project_reads.py``). Every read of a project
  path now goes through one safe reader (``remora_core/project_paths.py``)
  that resolves it at the moment of reading.
- The secrets the person set in the editor's settings: the MCP server read
  the repository's list only. It now asks the project's backend for the
  source, so it uses the same resolved settings as the editor's server.
"""

from __future__ import annotations

import json

from remora_lsp.testing import start_session
from tests.mcp.test_mcp_server import host_client, result_of

HELPER = "pkg/service.py::Service.helper"


async def read_node(workspace, node: str) -> dict:
    async with host_client(workspace) as client:
        card = result_of(await client.call_tool("node_card", {"node": node}))
        resource = await client.read_resource(f"remora://node/{card['id']}")
    return json.loads(resource.contents[0].text)


async def test_a_file_swapped_for_a_link_out_is_not_read(
    workspace, person_files, tmp_path
):
    secret = tmp_path / "home" / "service.py"
    secret.parent.mkdir()
    secret.write_text("TOKEN = 'the-persons-token'\n" * 20)
    async with start_session("neovim", workspace):  # owns and indexed it
        module = workspace / "pkg" / "service.py"
        module.unlink()
        module.symlink_to(secret)  # after indexing; read before it notices
        shown = await read_node(workspace, HELPER)
    assert "the-persons-token" not in json.dumps(shown)


async def test_the_editors_secrets_hold_for_an_mcp_host(workspace, person_files):
    settings = {"secrets": {"exclude": ["service.py"]}}
    async with start_session("visual-studio-code", workspace, settings):
        shown = await read_node(workspace, HELPER)
    assert shown["source"] is None
    assert "secrets.exclude" in shown["source_withheld"]
