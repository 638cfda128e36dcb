"""Bad input never crashes the server: clear errors, logged skips, partial results."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tests.lsp.helpers import flatten, open_file, raw_request, symbols, uri

pytestmark = pytest.mark.workspace("bad_input")

ANSWER_WAIT_S = 60.0

SKIPPED = {
    "latin1.py": "not valid UTF-8 (byte 0xe9 at offset 33)",
    "binary.py": "looks binary",
    "big.py": "larger than the limit of 4000 bytes",
}


async def test_syntax_errors_keep_the_nodes_that_can_be_recovered(client):
    outline = flatten(await symbols(client, uri(client, "broken.py")))
    assert {"before", "Survivor", "Survivor.method", "after"} <= set(outline)


async def test_unreadable_files_are_skipped_with_one_log_line_each(client):
    for name, reason in SKIPPED.items():
        lines = [m.message for m in client.log_messages if name in m.message]
        assert len(lines) == 1, (name, lines)
        assert reason in lines[0]
        assert (
            client.log_messages[
                [m.message for m in client.log_messages].index(lines[0])
            ].type
            == types.MessageType.Warning
        )
        assert await symbols(client, uri(client, name)) is None
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
    files = {s.location.uri.rsplit("/", 1)[-1] for s in found}
    assert files == {"good.py", "broken.py"}


async def test_a_huge_buffer_opened_in_the_editor_is_not_parsed(client):
    document = open_file(client, "big.py")
    assert await symbols(client, document) is None
    # The server is still fine afterwards.
    assert "fine" in flatten(await symbols(client, uri(client, "good.py")))


async def test_unknown_uris_get_a_readable_error(client):
    with pytest.raises(JsonRpcInvalidParams, match="Remora does not know"):
        await symbols(client, uri(client, "missing.py"))
    with pytest.raises(JsonRpcInvalidParams, match="not open in the editor"):
        await symbols(client, "untitled:Untitled-1")
    with pytest.raises(JsonRpcInvalidParams, match="Remora does not know"):
        await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri="file:///no/such.py"),
                position=types.Position(line=0, character=0),
            )
        )


async def test_malformed_params_get_an_error_naming_the_field(client):
    with pytest.raises(JsonRpcInvalidParams, match="textDocument"):
        await raw_request(client, "textDocument/documentSymbol", {"textDocument": 5})
    with pytest.raises(JsonRpcInvalidParams, match="position"):
        await raw_request(
            client,
            "textDocument/hover",
            {"textDocument": {"uri": uri(client, "good.py")}, "position": "top"},
        )
    # Still serving.
    assert "fine" in flatten(await symbols(client, uri(client, "good.py")))


async def test_a_change_to_a_document_never_opened_is_ignored(client):
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=uri(client, "good.py"), version=7
            ),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="x")],
        )
    )
    assert "fine" in flatten(await symbols(client, uri(client, "good.py")))


async def test_documents_outside_the_workspace_are_served_from_memory(client):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri="untitled:Untitled-1",
                language_id="python",
                version=1,
                text="class Draft:\n    def idea(self):\n        pass\n",
            )
        )
    )
    outline = flatten(await symbols(client, "untitled:Untitled-1"))
    assert list(outline) == ["Draft", "Draft.idea"]
    assert not (client.root / ".remora" / "untitled:Untitled-1").exists()


async def test_a_request_whose_params_nest_a_jsonrpc_object_is_answered(client):
    # Found by the fuzzer: pygls read any nested object with a "jsonrpc" key as
    # a message of its own, failed the whole frame and never answered it.
    stray = {"jsonrpc": "2.0", "method": "x", "id": 7}
    # A hang detector, not a timing: unanswered, the request waits forever.
    hover = await asyncio.wait_for(
        raw_request(
            client,
            "textDocument/hover",
            {
                "textDocument": {"uri": uri(client, "good.py")},
                "position": {"line": 0, "character": 5},
                "workDoneToken": None,
                "x-extension": stray,
            },
        ),
        ANSWER_WAIT_S,
    )
    assert "fine" in hover.contents.value  # the node card (pygls reads it as an object)
    with pytest.raises(JsonRpcInvalidParams, match="position"):
        await asyncio.wait_for(
            raw_request(
                client,
                "textDocument/hover",
                {"textDocument": stray, "x": {"jsonrpc": 1}},
            ),
            ANSWER_WAIT_S,
        )
