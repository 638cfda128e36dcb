"""``remora mcp`` tried as an MCP host uses it: the SDK's own client spawns
``remora mcp`` over stdio, lists the tools, calls each (``node_history`` gives
the node's conversation), reads a node resource, and asks a node's agent (a
scripted model at its HTTP boundary) for a rewrite that comes back as a
pending proposal with its diff — the file on disk untouched, nothing accepted.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from remora_lsp.testing import (
    Buffer,
    eventually,
    model_settings,
    rewrite,
    start_session,
    wait_for_event,
)
from remora_lsp.testing.model_server import ModelServer

REMORA = Path(sys.executable).with_name("remora")
HELPER = "pkg/service.py::Service.helper"
NEW_HELPER = '''def helper(self):
        """Order two b's."""
        return order("b", 2)'''
TOOLS = {
    "search_nodes",
    "node_card",
    "node_history",
    "ask_node",
    "list_proposals",
    "proposal_diff",
    "usage",
}


def host_client(workspace: Path) -> Client:
    """What an MCP host's configuration starts: ``remora mcp --project DIR``."""
    env = {
        key: os.environ[key]
        for key in ("REMORA_CONFIG_HOME", "REMORA_STATE_HOME", "PATH", "HOME")
        if key in os.environ
    }
    return Client(
        StdioServerParameters(
            command=str(REMORA),
            args=["mcp", "--project", str(workspace)],
            env=env,
        )
    )


def result_of(called) -> object:
    """The JSON a tool returned (its structured content, or its text)."""
    assert not called.is_error, called.content
    if called.structured_content is not None:
        content = called.structured_content
        return content.get("result", content) if set(content) == {"result"} else content
    return json.loads(called.content[0].text)


async def test_an_mcp_host_finds_reads_and_asks_nodes_but_never_writes(
    workspace, person_files
):
    before = (workspace / "pkg/service.py").read_text(encoding="utf-8")
    with ModelServer() as model:
        config = person_files / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.yaml").write_text(yaml.safe_dump(model_settings(model)))
        model.on("docstring", rewrite(NEW_HELPER))

        async with host_client(workspace) as client:
            tools = await client.list_tools()
            assert {tool.name for tool in tools.tools} == TOOLS

            found = result_of(
                await client.call_tool("search_nodes", {"query": "helper"})
            )
            helper = next(n for n in found if n["qualified_name"] == "Service.helper")
            card = result_of(await client.call_tool("node_card", {"node": HELPER}))
            assert card["id"] == helper["id"] and card["kind"] == "method"

            resource = await client.read_resource(f"remora://node/{helper['id']}")
            shown = json.loads(resource.contents[0].text)
            assert shown["source"] == (
                '    def helper(self):\n        return order("b", 2)'
            )

            asked = result_of(
                await client.call_tool(
                    "ask_node",
                    {"node": helper["id"], "message": "Add a docstring", "wait_s": 120},
                )
            )
            assert asked["outcome"] == "completed", asked
            [proposal] = asked["proposals"]
            assert proposal["status"] == "pending"
            assert '+        """Order two b\'s."""' in proposal["diff"].splitlines()

            listed = result_of(await client.call_tool("list_proposals", {}))
            assert [p["id"] for p in listed] == [proposal["proposal_id"]]
            diff = result_of(
                await client.call_tool(
                    "proposal_diff", {"proposal": proposal["proposal_id"]}
                )
            )
            assert diff["new_source"] == NEW_HELPER
            # The node's conversation, oldest first: the request, then what
            # the agent proposed (not the raw event stream).
            history = result_of(
                await client.call_tool("node_history", {"node": HELPER})
            )
            first = history[0]
            assert (first["role"], first["kind"], first["text"]) == (
                "person",
                "message",
                "Add a docstring",
            )
            assert first["run_id"] == asked["run_id"]
            [made] = [e for e in history if e["kind"] == "proposal"]
            assert made["role"] == "agent"
            assert made["proposal_id"] == proposal["proposal_id"]
            assert made["text"] == proposal["diff"]
            assert "type" not in first  # entries, not events

            # What the run cost, as the server stored it (10 + 5 per answer).
            spent = result_of(await client.call_tool("usage", {"since": "today"}))
            assert spent["total"]["runs"] == 1
            assert spent["total"]["tokens"] == 15 * len(model.requests)
            assert [r["key"] for r in spent["by_node"]] == [helper["id"]]

            unknown = await client.call_tool("node_card", {"node": "rm_zzzzzzzz"})
            assert unknown.is_error
            assert "rm_zzzzzzzz" in unknown.content[0].text

    # Nothing through MCP writes a file or accepts a proposal.
    assert (workspace / "pkg/service.py").read_text(encoding="utf-8") == before


async def test_with_an_editor_open_the_proposal_goes_through_its_server(
    workspace, person_files
):
    before = (workspace / "pkg/service.py").read_text(encoding="utf-8")
    with ModelServer() as model:
        model.on("docstring", rewrite(NEW_HELPER))
        editor_settings = model_settings(model)
        async with start_session(
            "visual-studio-code", workspace, editor_settings
        ) as editor:
            buffer = Buffer(editor, "pkg/service.py")
            async with host_client(workspace) as client:
                asked = result_of(
                    await client.call_tool(
                        "ask_node", {"node": HELPER, "message": "Add a docstring"}
                    )
                )
            [made] = asked["proposals"]

            # The editor's server ran it: its stream and diagnostics show it.
            proposed = await wait_for_event(
                editor, "rewrite_proposed", proposal_id=made["proposal_id"]
            )
            assert proposed["run_id"] == asked["run_id"]
            shown = await eventually(
                lambda: [
                    d
                    for d in editor.diagnostics.get(buffer.uri, [])
                    if d.code == made["proposal_id"]
                ]
            )
            assert shown[0].source == "remora"
            assert buffer.text == before
    assert (workspace / "pkg/service.py").read_text(encoding="utf-8") == before


async def test_a_new_file_asked_through_mcp_is_listed_never_created(
    workspace, person_files
):
    from remora_lsp.testing.replies import text, tool_call

    content = "def test_helper():\n    assert True\n"
    with ModelServer() as model:
        model.on(
            "write a test",
            tool_call(
                "create_file",
                {"path": "tests/test_helper.py", "content": content, "reason": "t"},
            ),
            text("Proposed."),
        )
        async with (
            start_session("neovim", workspace, model_settings(model)),
            host_client(workspace) as client,
        ):
            asked = result_of(
                await client.call_tool(
                    "ask_node", {"node": HELPER, "message": "write a test"}
                )
            )
            [made] = asked["proposals"]
            listed = result_of(await client.call_tool("list_proposals", {}))
            [shown] = [p for p in listed if p["id"] == made["proposal_id"]]
            assert shown["kind"] == "new_file"
            assert shown["title"] == "create tests/test_helper.py (+2)"
            assert "+def test_helper():" in made["diff"]
    assert not (workspace / "tests" / "test_helper.py").exists()
