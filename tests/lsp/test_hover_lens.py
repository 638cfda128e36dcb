"""Code lenses, hover cards and the read-only node commands."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tests.lsp.helpers import Buffer, flatten, node_id, symbols, uri


def position(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


async def hover(client, document_uri: str, line: int, character: int):
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=document_uri),
            position=position(line, character),
        )
    )


async def test_code_lenses_show_status_and_pending_proposals(client):
    document = uri(client, "pkg/service.py")
    outline = flatten(await symbols(client, document))
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=document))
    )
    assert len(lenses) == len(outline)
    by_line = {lens.range.start.line: lens for lens in lenses}
    helper = outline["Service.helper"]
    lens = by_line[helper.selection_range.start.line]
    assert lens.range == helper.selection_range
    if lens.command is None:  # the client resolves lazily
        lens = await client.code_lens_resolve_async(lens)
    assert lens.command.title == "remora · idle · 0 pending proposals"
    assert lens.command.command == "remora.node.get"
    assert list(lens.command.arguments) == [{"node_id": node_id(helper)}]


async def test_hover_on_a_definition_shows_its_card(client):
    document = uri(client, "pkg/service.py")
    outline = flatten(await symbols(client, document))
    helper = outline["Service.helper"]
    line = helper.selection_range.start.line
    result = await hover(client, document, line, helper.selection_range.start.character)
    text = result.contents.value
    assert result.range == helper.selection_range
    assert f"**method** `Service.helper` · `{node_id(helper)}`" in text
    assert "agent **idle**" in text
    assert f"`pkg/service.py` lines {line + 1}–{helper.range.end.line + 1}" in text
    assert f"parent class `Service` ({node_id(outline['Service'])})" in text
    assert f"**callers (1):** `Service.run` ({node_id(outline['Service.run'])})" in text
    assert f"**callees (1):** `order` ({node_id(outline['order'])})" in text


async def test_hover_lists_callers_across_files(client):
    document = uri(client, "pkg/models.py")
    outline = flatten(await symbols(client, document))
    make_item = outline["make_item"]
    result = await hover(client, document, make_item.selection_range.start.line, 5)
    text = result.contents.value
    assert "**callers (1):** `order`" in text
    assert f"**callees (1):** `Item` ({node_id(outline['Item'])})" in text


async def test_hover_inside_a_body_is_left_to_other_servers(client):
    document = uri(client, "pkg/service.py")
    outline = flatten(await symbols(client, document))
    body_line = outline["order"].range.start.line + 1
    assert await hover(client, document, body_line, 8) is None
    assert await hover(client, document, 0, 0) is None


async def test_hover_follows_the_buffer_not_the_disk(client):
    buffer = Buffer(client, "pkg/service.py")
    buffer.insert("def order", "def first():\n    return order('q', 1)\n\n\n")
    outline = await buffer.outline()
    first = outline["first"]
    result = await hover(client, buffer.uri, first.selection_range.start.line, 5)
    assert "`first`" in result.contents.value

    # Edges follow after the document settles (debounced).
    async def callers_listed():
        order = (await buffer.outline())["order"]
        card = await hover(client, buffer.uri, order.selection_range.start.line, 5)
        return "`first`" in card.contents.value

    from tests.lsp.helpers import eventually

    await eventually(callers_listed)


async def test_node_commands_return_cards(client):
    document = uri(client, "pkg/service.py")
    outline = flatten(await symbols(client, document))
    helper = outline["Service.helper"]
    card = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="remora.node.get", arguments=[{"node_id": node_id(helper)}]
        )
    )
    assert card["qualified_name"] == "Service.helper"
    assert card["kind"] == "method"
    assert card["uri"] == document
    assert card["parent"]["qualified_name"] == "Service"
    assert [c["qualified_name"] for c in card["callers"]] == ["Service.run"]
    assert [c["qualified_name"] for c in card["callees"]] == ["order"]
    at = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="remora.node.at",
            arguments=[
                {
                    "uri": document,
                    "position": {"line": helper.range.end.line, "character": 8},
                }
            ],
        )
    )
    assert at["id"] == node_id(helper)


@pytest.mark.parametrize(
    ("command", "arguments", "message"),
    [
        (
            "remora.node.get",
            [{"node_id": "rm_zzzzzzzz"}],
            "no node with id rm_zzzzzzzz",
        ),
        ("remora.node.get", [{"node_id": 42}], "node_id: Input should be a valid"),
        ("remora.node.get", [], "takes one JSON object argument"),
        ("remora.node.get", ["rm_abc"], "takes one JSON object argument"),
        ("remora.node.at", [{"uri": "file:///nowhere/x.py"}], "position"),
        (
            "remora.node.at",
            [{"uri": "file:///nowhere/x.py", "position": {"line": 0, "character": 0}}],
            "Remora does not know file:///nowhere/x.py",
        ),
        ("remora.nothing", [{}], "not defined"),
    ],
)
async def test_bad_command_arguments_get_readable_errors(
    client, command, arguments, message
):
    with pytest.raises(JsonRpcInvalidParams, match=message):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=arguments)
        )
