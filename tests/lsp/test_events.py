"""Events in the editor: edits become content_changed, agents react, all streamed.

Until agents have models (issue 4) the server runs the placeholder turn
(``acknowledge``): what is tested here is the pipeline — the event an edit
produces, the subscriber it triggers, the run's events and the notifications.
"""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tests.lsp.helpers import Buffer, eventually, node_id

pytestmark = pytest.mark.editor_settings(
    {"discovery": {"debounce_ms": 50}, "swarm": {"cooldown_ms": 0}}
)


def of_type(client, kind: str) -> list[dict]:
    return [e for e in client.events if e["type"] == kind]


async def test_a_body_edit_announces_that_function_and_runs_its_agent(client):
    buffer = Buffer(client, "pkg/service.py")
    outline = await buffer.outline()
    order = node_id(outline["order"])
    # Opening the file announced nothing.
    assert of_type(client, "content_changed") == []

    buffer.replace_text("item.total(quantity)", "item.total(quantity) * 2")
    (changed,) = await eventually(lambda: of_type(client, "content_changed"))
    assert changed["node_ids"] == [order]  # that function only
    assert changed["path"] == "pkg/service.py"
    assert changed["depth"] == 0 and isinstance(changed["seq"], int)

    # Its own agent is subscribed to content_changed of its node: a turn runs.
    completed = await eventually(
        lambda: [
            e for e in of_type(client, "agent_completed") if e["agent_id"] == order
        ]
    )
    started = [e for e in of_type(client, "agent_started") if e["agent_id"] == order]
    assert started[0]["trigger_ids"] == [changed["id"]]
    assert started[0]["correlation_id"] == changed["correlation_id"]
    assert completed[0]["run_id"] == started[0]["run_id"]
    assert "no model call" in completed[0]["result"]  # typing never runs a model
    seqs = [e["seq"] for e in client.events]
    assert seqs == sorted(seqs)


async def test_node_events_command_and_hover_show_history(client):
    buffer = Buffer(client, "pkg/service.py")
    order = node_id((await buffer.outline())["order"])
    buffer.replace_text("return item.total", "return 1 + item.total")
    await eventually(lambda: of_type(client, "agent_completed"))

    history = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="remora.node.events", arguments=[{"node_id": order, "limit": 10}]
        )
    )
    kinds = [e["type"] for e in history]
    assert kinds[:3] == ["agent_completed", "agent_started", "content_changed"]
    assert [e["seq"] for e in history] == sorted(
        (e["seq"] for e in history), reverse=True
    )

    line, character = buffer.position("def order", after=True)
    card = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=buffer.uri),
            position=types.Position(line=line, character=character - 1),
        )
    )
    assert "**recent events:** `agent_completed`" in card.contents.value


async def test_a_new_function_is_a_topology_change(client):
    buffer = Buffer(client, "pkg/service.py")
    await buffer.outline()
    buffer.insert("def unused", "def brand_new():\n    return 0\n\n\n")
    (topology,) = await eventually(lambda: of_type(client, "topology_changed"))
    new_id = node_id((await buffer.outline())["brand_new"])
    assert topology["added"] == [new_id]
    assert of_type(client, "content_changed") == []


async def test_lenses_are_refreshed_when_an_agent_runs(client):
    buffer = Buffer(client, "pkg/service.py")
    await buffer.outline()
    buffer.replace_text('return order("b", 2)', 'return order("b", 3)')
    await eventually(lambda: of_type(client, "agent_completed"))
    if client.editor == "visual-studio-code":  # advertises codeLens.refreshSupport
        await eventually(lambda: client.lens_refreshes > 0)
    else:
        assert client.lens_refreshes == 0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"node_id": "rm_zzzzzzzz"}, "no node with id rm_zzzzzzzz"),
        ({"node_id": "nope"}, "a node is named by its id"),
        (
            {"node_id": "rm_zzzzzzzz", "limit": 0},
            "limit: .* greater than or equal to 1",
        ),
    ],
)
async def test_node_events_bad_arguments(client, arguments, message):
    with pytest.raises(JsonRpcInvalidParams, match=message):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="remora.node.events", arguments=[arguments]
            )
        )
