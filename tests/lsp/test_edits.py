"""Incremental edits: after each didChange the outline and the ids are right."""

from __future__ import annotations

import ast

from lsprotocol import types

from tests.lsp.helpers import Buffer, node_id


def ids(outline) -> dict[str, str]:
    return {name: node_id(symbol) for name, symbol in outline.items()}


def ast_outline(text: str) -> dict[str, tuple[int, int]]:
    """``{qualified name: (first line, last line)}`` per Python's own parser."""
    found: dict[str, tuple[int, int]] = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + child.name
                first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                found.setdefault(name, (first - 1, child.end_lineno - 1))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(text), "")
    return found


def assert_matches_python(buffer: Buffer, outline) -> None:
    expected = ast_outline(buffer.text)
    assert list(outline) == list(expected)
    for name, (first, last) in expected.items():
        symbol = outline[name]
        assert (symbol.range.start.line, symbol.range.end.line) == (first, last), name


async def test_a_sequence_of_edits_keeps_outline_and_ids_right(client):
    buffer = Buffer(client, "pkg/models.py")
    before = ids(await buffer.outline())

    # Unrelated edits: lines above, a body edit. Every id stays.
    buffer.insert("import dataclasses", "# header comment\n\n")
    buffer.replace_text("self.price * quantity", "quantity * self.price")
    outline = await buffer.outline()
    assert ids(outline) == before
    assert_matches_python(buffer, outline)

    # A new function: one new id, nothing else moves.
    buffer.insert("def make_item", "def extra():\n    return 1\n\n\n")
    outline = await buffer.outline()
    assert set(outline) == set(before) | {"extra"}
    assert {n: i for n, i in ids(outline).items() if n != "extra"} == before
    assert ids(outline)["extra"] not in before.values()
    assert_matches_python(buffer, outline)

    # Renaming is a new node; renaming back gives the old id back.
    buffer.replace_text("make_item", "build_item")
    outline = await buffer.outline()
    assert "make_item" not in outline
    assert ids(outline)["build_item"] not in before.values()
    buffer.replace_text("build_item", "make_item")
    outline = await buffer.outline()
    assert ids(outline)["make_item"] == before["make_item"]
    assert_matches_python(buffer, outline)


async def test_renamed_node_is_orphaned_not_forgotten(client):
    buffer = Buffer(client, "pkg/service.py")
    old = node_id((await buffer.outline())["unused"])
    buffer.replace_text("def unused", "def still_unused")
    outline = await buffer.outline()
    assert "still_unused" in outline and "unused" not in outline
    card = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="remora.node.get", arguments=[{"node_id": old}]
        )
    )
    assert card["status"] == "orphaned"
    assert card["qualified_name"] == "unused"


async def test_several_changes_in_one_notification(client):
    buffer = Buffer(client, "pkg/service.py")
    before = ids(await buffer.outline())
    first = (buffer.position("def order"), buffer.position("def order", after=True))
    # Changes apply in order: the second range is in the text after the first.
    text_after_first = buffer.text.replace("def order", "def place_order", 1)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=buffer.uri, version=2
            ),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(*first[0]), end=types.Position(*first[1])
                    ),
                    text="def place_order",
                ),
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(0, 0), end=types.Position(0, 0)
                    ),
                    text="# moved\n",
                ),
            ],
        )
    )
    buffer.version = 2
    buffer.text = "# moved\n" + text_after_first
    outline = await buffer.outline()
    assert "place_order" in outline and "order" not in outline
    assert ids(outline)["Service.helper"] == before["Service.helper"]
    assert_matches_python(buffer, outline)


async def test_edits_around_wide_characters(client):
    buffer = Buffer(client, "pkg/unicode_names.py")
    before = ids(await buffer.outline())
    # Insert right after an emoji: the position must be counted in the editor's
    # encoding or the server would split a character and corrupt the text.
    buffer.replace(
        buffer.position('"😀😀"', after=True),
        buffer.position('"😀😀"', after=True),
        " + '🎉'",
    )
    buffer.insert("class Ünïcode", "def ß():\n    return '∑'\n\n\n")
    outline = await buffer.outline()
    assert ids(outline)["emoji"] == before["emoji"]
    assert "ß" in outline
    assert_matches_python(buffer, outline)
    emoji = outline["emoji"]
    last_line = buffer.text.splitlines()[emoji.range.end.line]
    width = (
        len(last_line.encode("utf-8"))
        if client.editor == "neovim"
        else len(last_line.encode("utf-16-le")) // 2
    )
    assert emoji.range.end.character == width


async def test_whole_document_replacement(client):
    buffer = Buffer(client, "pkg/service.py")
    before = ids(await buffer.outline())
    new_text = buffer.text.replace("class Service:", "class Service(object):")
    buffer.version += 1
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(
                uri=buffer.uri, version=buffer.version
            ),
            content_changes=[
                types.TextDocumentContentChangeWholeDocument(text=new_text)
            ],
        )
    )
    buffer.text = new_text
    outline = await buffer.outline()
    assert ids(outline) == before
    assert_matches_python(buffer, outline)
