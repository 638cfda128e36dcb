"""Inline id comments are offered as one code action edit, never written behind
the editor; once in the buffer they keep a node's id across a rename.
"""

from __future__ import annotations

import pytest

from tests.lsp.conftest import plain
from tests.lsp.helpers import Buffer, eventually, flatten, node_id, raw_request, symbols


async def actions_on(client, document_uri: str) -> list[dict]:
    start = {"line": 0, "character": 0}
    found = await raw_request(
        client,
        "textDocument/codeAction",
        {
            "textDocument": {"uri": document_uri},
            "range": {"start": start, "end": start},
            "context": {"diagnostics": []},
        },
    )
    return plain(found) or []


@pytest.mark.editor_settings({"ids": {"inline_comments": True}})
async def test_missing_id_comments_are_one_code_action(client):
    buffer = Buffer(client, "pkg/models.py")
    before = flatten(await symbols(client, buffer.uri))
    disk = (client.root / "pkg/models.py").read_text(encoding="utf-8")

    actions = [
        a for a in await actions_on(client, buffer.uri) if "id comments" in a["title"]
    ]
    assert len(actions) == 1
    change = actions[0]["edit"]["documentChanges"][0]
    assert change["textDocument"]["version"] == buffer.version
    for text_edit in sorted(
        change["edits"],
        key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
        reverse=True,
    ):
        start = text_edit["range"]["start"]
        buffer.replace(
            (start["line"], start["character"]),
            (start["line"], start["character"]),
            text_edit["newText"],
        )
    assert (client.root / "pkg/models.py").read_text(encoding="utf-8") == disk
    for name, symbol in before.items():
        assert f"# {node_id(symbol)}" in buffer.text, name

    # Nothing left to offer, and a renamed definition keeps its id.
    await eventually(lambda: _no_id_action(client, buffer.uri))
    buffer.replace_text("class Item:", "class Article:")
    after = await eventually(lambda: _renamed(client, buffer.uri, "Article"))
    assert node_id(after) == node_id(before["Item"])


async def _no_id_action(client, document_uri):
    actions = await actions_on(client, document_uri)
    return not [a for a in actions if "id comments" in a["title"]]


async def _renamed(client, document_uri, name):
    return flatten(await symbols(client, document_uri)).get(name)
