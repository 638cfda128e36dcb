"""Outline (documentSymbol) and workspace symbols on the basic fixture project."""

from __future__ import annotations

from lsprotocol import types

from tests.lsp.helpers import flatten, node_id, open_file, symbols, uri


async def test_outline_of_an_unopened_file(client):
    flat = flatten(await symbols(client, uri(client, "pkg/models.py")))
    assert list(flat) == [
        "registered",
        "Item",
        "Item.total",
        "Item.label",
        "Item.Meta",
        "Item.Meta.describe",
        "Item.refresh",
        "make_item",
    ]
    item = flat["Item"]
    assert item.kind == types.SymbolKind.Class
    assert flat["Item.total"].kind == types.SymbolKind.Method
    assert flat["Item.refresh"].kind == types.SymbolKind.Method  # async def
    assert flat["make_item"].kind == types.SymbolKind.Function
    # The decorated class starts at its first decorator; the selection is its name.
    assert (item.range.start.line, item.range.start.character) == (9, 0)
    assert (item.range.end.line, item.range.end.character) == (31, 28)
    assert item.selection_range == types.Range(
        start=types.Position(line=11, character=6),
        end=types.Position(line=11, character=10),
    )
    assert node_id(item).startswith("rm_") and item.detail.endswith("· idle")


async def test_property_getter_and_setter_are_two_nodes(client):
    tree = await symbols(client, uri(client, "pkg/models.py"))
    item = next(s for s in tree if s.name == "Item")
    labels = [c for c in item.children if c.name == "label"]
    assert len(labels) == 2
    assert node_id(labels[0]) != node_id(labels[1])
    assert labels[0].range.start.line == 18  # @property
    assert labels[1].range.start.line == 22  # @label.setter


async def test_outline_of_an_open_file_with_nested_function(client):
    document = open_file(client, "pkg/service.py")
    flat = flatten(await symbols(client, document))
    assert list(flat) == [
        "order",
        "Service",
        "Service.run",
        "Service.run.step",
        "Service.helper",
        "unused",
    ]
    assert flat["Service.run.step"].kind == types.SymbolKind.Function
    # The comment that ends `unused`'s block is not part of the node.
    assert flat["unused"].range.end == types.Position(line=25, character=15)


async def test_ids_are_the_same_in_every_view(client):
    outline = flatten(await symbols(client, uri(client, "pkg/service.py")))
    found = await client.workspace_symbol_async(
        types.WorkspaceSymbolParams(query="helper")
    )
    helper = next(s for s in found if s.name == "helper")
    assert outline["Service.helper"].detail.split(" ")[0] in helper.container_name
    assert helper.location.uri == uri(client, "pkg/service.py")
    assert helper.location.range == outline["Service.helper"].range


async def test_workspace_symbol_covers_unopened_files(client):
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=""))
    names = {(s.name, s.location.uri.rsplit("/", 1)[-1]) for s in found}
    assert {
        ("make_item", "models.py"),
        ("order", "service.py"),
        ("main", "tool.py"),
        ("café", "unicode_names.py"),
        ("service.py", "service.py"),
    } <= names
    kinds = {s.name: s.kind for s in found}
    assert kinds["service.py"] == types.SymbolKind.File
    assert kinds["Service"] == types.SymbolKind.Class


async def test_workspace_symbol_ranks_and_finds_ids(client):
    found = await client.workspace_symbol_async(
        types.WorkspaceSymbolParams(query="ord")
    )
    assert found[0].name == "order"
    wanted = found[0].container_name.rsplit(" ", 1)[-1]
    by_id = await client.workspace_symbol_async(
        types.WorkspaceSymbolParams(query=wanted)
    )
    assert [s.name for s in by_id] == ["order"]
    nothing = await client.workspace_symbol_async(
        types.WorkspaceSymbolParams(query="zzzzqqq")
    )
    assert not nothing


def _expected_position(text: str, line: int, prefix_end: str, editor: str) -> int:
    """Column of the end of ``prefix_end`` on ``line`` in the editor's encoding."""
    source_line = text.splitlines()[line]
    prefix = source_line[: source_line.index(prefix_end) + len(prefix_end)]
    if editor == "neovim":  # negotiates UTF-8
        return len(prefix.encode("utf-8"))
    return len(prefix.encode("utf-16-le")) // 2


async def test_positions_follow_the_negotiated_encoding(client):
    path = client.root / "pkg/unicode_names.py"
    text = path.read_text(encoding="utf-8")
    flat = flatten(await symbols(client, path.as_uri()))
    cafe = flat["café"]
    assert cafe.selection_range.start == types.Position(line=3, character=4)
    assert cafe.selection_range.end.character == _expected_position(
        text, 3, "café", client.editor
    )
    emoji = flat["emoji"]
    assert emoji.range.end.line == 8
    assert emoji.range.end.character == _expected_position(
        text, 8, '"😀😀"', client.editor
    )
    greet = flat["Ünïcode.grüß"]
    assert greet.range.end.character == _expected_position(
        text, 13, '"👋🏽 hello"', client.editor
    )


async def test_utf32_positions_when_that_is_all_the_client_offers(workspace):
    from tests.lsp.conftest import session

    async with session("visual-studio-code", workspace, utf32=True) as client:
        assert client.position_encoding == types.PositionEncodingKind.Utf32
        path = workspace / "pkg/unicode_names.py"
        flat = flatten(await symbols(client, path.as_uri()))
        line = path.read_text(encoding="utf-8").splitlines()[13]
        assert flat["Ünïcode.grüß"].range.end.character == len(line)  # code points
