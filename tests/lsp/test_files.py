"""Files changed outside the editor: on disk, deleted, created, renamed.

VS Code watches files for the server (dynamic registration) and reports
changes with ``workspace/didChangeWatchedFiles``; Neovim 0.11 does not, so the
server polls the disk (here every 100 ms). Each test does what the editor would.
"""

from __future__ import annotations

import shutil

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tests.lsp.helpers import Buffer, eventually, flatten, node_id, symbols, uri

pytestmark = pytest.mark.editor_settings(
    {"discovery": {"poll_interval_ms": 100, "debounce_ms": 50}}
)

CREATED, CHANGED, DELETED = (
    types.FileChangeType.Created,
    types.FileChangeType.Changed,
    types.FileChangeType.Deleted,
)


def watched(client, *changes: tuple[str, types.FileChangeType]) -> None:
    """Report disk changes the way the editor would (Neovim: it does not)."""
    if client.editor == "neovim":
        return  # the server notices by polling
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(uri=uri(client, path), type=kind)
                for path, kind in changes
            ]
        )
    )


async def outline_of(client, relative: str):
    try:
        return flatten(await symbols(client, uri(client, relative)))
    except JsonRpcInvalidParams:
        return None


async def test_the_server_asks_the_editor_to_watch_python_files(client):
    registrations = client.registrations
    if client.editor == "neovim":
        assert registrations == []  # no dynamic registration: polling instead
        return
    (watch,) = [
        r for r in registrations if r.method == "workspace/didChangeWatchedFiles"
    ]
    globs = [w["globPattern"] for w in watch.register_options["watchers"]]
    assert "**/*.py" in globs


async def test_a_file_changed_on_disk_is_reindexed(client):
    before = flatten(await symbols(client, uri(client, "pkg/service.py")))
    path = client.root / "pkg/service.py"
    path.write_text(
        path.read_text(encoding="utf-8") + "\n\ndef added_on_disk():\n    return 1\n",
        encoding="utf-8",
    )
    watched(client, ("pkg/service.py", CHANGED))

    async def reindexed():
        outline = await outline_of(client, "pkg/service.py")
        return outline if outline and "added_on_disk" in outline else None

    after = await eventually(reindexed)
    assert {n: node_id(s) for n, s in before.items()} == {
        n: node_id(s) for n, s in after.items() if n != "added_on_disk"
    }


async def test_created_and_deleted_files(client):
    new = client.root / "pkg/extra.py"
    new.write_text("def brand_new():\n    return 2\n", encoding="utf-8")
    watched(client, ("pkg/extra.py", CREATED))

    async def found(query):
        result = await client.workspace_symbol_async(
            types.WorkspaceSymbolParams(query=query)
        )
        return [s for s in result or [] if s.name == query]

    (symbol,) = await eventually(lambda: found("brand_new"))
    assert symbol.location.uri == uri(client, "pkg/extra.py")

    new.unlink()
    watched(client, ("pkg/extra.py", DELETED))
    await eventually(lambda: _none(found("brand_new")))
    with pytest.raises(JsonRpcInvalidParams, match="Remora does not know"):
        await symbols(client, uri(client, "pkg/extra.py"))


async def _none(awaitable):
    return not await awaitable


async def test_rename_through_the_editor_keeps_ids(client):
    before = await outline_of(client, "pkg/service.py")
    shutil.move(client.root / "pkg/service.py", client.root / "pkg/orders.py")
    client.workspace_did_rename_files(
        types.RenameFilesParams(
            files=[
                types.FileRename(
                    old_uri=uri(client, "pkg/service.py"),
                    new_uri=uri(client, "pkg/orders.py"),
                )
            ]
        )
    )
    after = await eventually(lambda: outline_of(client, "pkg/orders.py"))
    assert {n: node_id(s) for n, s in after.items()} == {
        n: node_id(s) for n, s in before.items()
    }
    with pytest.raises(JsonRpcInvalidParams):
        await symbols(client, uri(client, "pkg/service.py"))


async def test_directory_rename_keeps_ids(client):
    before = await outline_of(client, "pkg/models.py")
    shutil.move(client.root / "pkg", client.root / "inventory")
    client.workspace_did_rename_files(
        types.RenameFilesParams(
            files=[
                types.FileRename(
                    old_uri=uri(client, "pkg"), new_uri=uri(client, "inventory")
                )
            ]
        )
    )
    after = await eventually(lambda: outline_of(client, "inventory/models.py"))
    assert {n: node_id(s) for n, s in after.items()} == {
        n: node_id(s) for n, s in before.items()
    }


async def test_delete_then_create_with_the_same_content_is_a_rename(client):
    before = await outline_of(client, "scripts/tool.py")
    shutil.move(client.root / "scripts/tool.py", client.root / "scripts/cli_tool.py")
    watched(client, ("scripts/tool.py", DELETED), ("scripts/cli_tool.py", CREATED))
    after = await eventually(lambda: outline_of(client, "scripts/cli_tool.py"))
    assert {n: node_id(s) for n, s in after.items()} == {
        n: node_id(s) for n, s in before.items()
    }


async def test_an_open_buffer_wins_over_the_disk_until_closed(client):
    buffer = Buffer(client, "pkg/models.py")
    buffer.insert("def make_item", "def only_in_buffer():\n    return 0\n\n\n")
    path = client.root / "pkg/models.py"
    path.write_text(
        path.read_text(encoding="utf-8") + "\n\ndef only_on_disk():\n    return 0\n",
        encoding="utf-8",
    )
    watched(client, ("pkg/models.py", CHANGED))
    outline = await buffer.outline()
    assert "only_in_buffer" in outline and "only_on_disk" not in outline

    client.text_document_did_close(
        types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=buffer.uri)
        )
    )

    async def disk_again():
        outline = await outline_of(client, "pkg/models.py")
        return outline if outline and "only_on_disk" in outline else None

    outline = await eventually(disk_again)
    assert "only_in_buffer" not in outline
