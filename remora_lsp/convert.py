"""Pure conversions from engine objects to LSP types.

Positions: a span whose line prefixes are ASCII (``Span.ascii``) has the same
columns in every encoding, so no text is needed; otherwise the file's
:class:`~remora_core.text.LineIndex` converts its byte offsets. With the UTF-8
encoding byte columns are used as they are.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from lsprotocol import types
from remora_core.model import CodeNode, NodeKind, Span
from remora_core.text import LineIndex, PositionEncoding

SYMBOL_KINDS = {
    NodeKind.FILE: types.SymbolKind.File,
    NodeKind.CLASS: types.SymbolKind.Class,
    NodeKind.FUNCTION: types.SymbolKind.Function,
    NodeKind.METHOD: types.SymbolKind.Method,
}
_SYMBOL_KIND_NUMBERS = {kind: symbol.value for kind, symbol in SYMBOL_KINDS.items()}


def encoding_of(value: object) -> PositionEncoding:
    """The engine's encoding for the negotiated ``positionEncoding``."""
    try:
        return PositionEncoding(str(getattr(value, "value", value)))
    except ValueError:
        return PositionEncoding.UTF16


def needs_lines(spans: Iterable[Span], encoding: PositionEncoding) -> bool:
    """Whether converting ``spans`` needs the file's text."""
    return encoding is not PositionEncoding.UTF8 and not all(s.ascii for s in spans)


def to_range(
    span: Span, encoding: PositionEncoding, lines: LineIndex | None
) -> types.Range:
    """The LSP range of ``span``."""
    if lines is None or span.ascii or encoding is PositionEncoding.UTF8:
        return types.Range(
            start=types.Position(line=span.start_line, character=span.start_col),
            end=types.Position(line=span.end_line, character=span.end_col),
        )
    start = lines.position(span.start_byte, encoding)
    end = lines.position(span.end_byte, encoding)
    return types.Range(
        start=types.Position(line=start[0], character=start[1]),
        end=types.Position(line=end[0], character=end[1]),
    )


def detail(node: CodeNode) -> str:
    """What the outline shows next to a node's name: its id and agent status."""
    return f"{node.id} · {node.agent_status}"  # a StrEnum formats as its value


_RANGES: dict[Span, dict[str, dict[str, int]]] = {}
"""Range JSON of spans whose columns need no text, shared between outlines:
typing changes few spans, and the next outline reuses the others' JSON."""
_RANGES_KEPT = 200_000


def _json_range(
    span: Span, encoding: PositionEncoding, lines: LineIndex | None
) -> dict[str, dict[str, int]]:
    if lines is None or span.ascii or encoding is PositionEncoding.UTF8:
        found = _RANGES.get(span)
        if found is None:
            if len(_RANGES) >= _RANGES_KEPT:
                _RANGES.clear()
            found = _RANGES[span] = {
                "start": {"line": span.start_line, "character": span.start_col},
                "end": {"line": span.end_line, "character": span.end_col},
            }
        return found
    else:
        start = lines.position(span.start_byte, encoding)
        end = lines.position(span.end_byte, encoding)
    return {
        "start": {"line": start[0], "character": start[1]},
        "end": {"line": end[0], "character": end[1]},
    }


def document_symbols(
    nodes: list[CodeNode],
    encoding: PositionEncoding,
    lines: LineIndex | None,
) -> list[dict[str, Any]]:
    """The hierarchical outline of one file, as plain ``DocumentSymbol`` JSON.

    Built as JSON directly (sent with :class:`~remora_lsp.protocol.PlainJson`):
    this is the hot path of typing in a large file, where building and
    unstructuring lsprotocol objects costs more than everything else.
    """
    symbols: dict[str, dict[str, Any]] = {}
    roots: list[dict[str, Any]] = []
    for node in nodes:
        symbol = {
            "name": node.name,
            "kind": _SYMBOL_KIND_NUMBERS[node.kind],
            "range": _json_range(node.span, encoding, lines),
            "selectionRange": _json_range(node.name_span, encoding, lines),
            "detail": detail(node),
            "children": [],
        }
        symbols[node.id] = symbol
        parent = symbols.get(node.parent_id) if node.parent_id else None
        if parent is not None:
            parent["children"].append(symbol)
        else:
            roots.append(symbol)
    return roots


def symbol_information(
    node: CodeNode,
    uri: str,
    encoding: PositionEncoding,
    lines: Callable[[str], LineIndex | None],
    container: str | None,
) -> types.SymbolInformation:
    """A workspace symbol; ``lines`` loads a file's index only when needed."""
    needed = lines(node.file_path) if needs_lines([node.span], encoding) else None
    return types.SymbolInformation(
        name=node.name,
        kind=SYMBOL_KINDS[node.kind],
        location=types.Location(uri=uri, range=to_range(node.span, encoding, needed)),
        container_name=f"{container} · {node.id}" if container else node.id,
    )


def symbol_information_json(
    node: CodeNode,
    uri: str,
    encoding: PositionEncoding,
    lines: Callable[[str], LineIndex | None],
    container: str | None,
) -> dict[str, Any]:
    """:func:`symbol_information` as plain JSON (sent with
    :class:`~remora_lsp.protocol.PlainJson`): 500 workspace symbols a
    keystroke cost more through lsprotocol's objects and cattrs than finding
    them.
    """
    needed = lines(node.file_path) if needs_lines([node.span], encoding) else None
    return {
        "name": node.name,
        "kind": _SYMBOL_KIND_NUMBERS[node.kind],
        "location": {"uri": uri, "range": _json_range(node.span, encoding, needed)},
        "containerName": f"{container} · {node.id}" if container else node.id,
    }


def _ref(item: dict[str, Any]) -> str:
    return f"`{item['qualified_name']}` ({item['id']})"


def _listing(title: str, items: list[dict[str, Any]], limit: int = 8) -> str:
    if not items:
        return f"**{title}:** none"
    shown = ", ".join(_ref(item) for item in items[:limit])
    more = f", and {len(items) - limit} more" if len(items) > limit else ""
    return f"**{title} ({len(items)}):** {shown}{more}"


def _mark(check: dict[str, Any]) -> str:
    """✓ passed, ✗ failed, … running, – nothing to judge."""
    if check.get("ok") is True:
        return "✓"
    if check.get("ok") is False:
        return "✗"
    return "…" if check.get("status") == "running" else "–"


def card_markdown(card: dict[str, Any]) -> str:
    """A node card as Markdown for hover."""
    start, end = card["start_line"] + 1, card["end_line"] + 1
    parent = card["parent"]
    pending = card["pending_proposals"]
    noun = "proposal" if pending == 1 else "proposals"
    lines = [
        f"**{card['kind']}** `{card['qualified_name']}` · `{card['id']}`",
        "",
        f"agent **{card['agent_status']}** · {pending} pending {noun} · "
        f"node {card['status']}",
        "",
        f"`{card['file_path']}` lines {start}–{end}"
        + (f" · parent {parent['kind']} {_ref(parent)}" if parent else ""),
        "",
        _listing("callers", card["callers"]),
        "",
        _listing("callees", card["callees"]),
    ]
    if instructions := card.get("instructions"):
        lines += ["", "**instructions:**", "", *_quoted(instructions)]
    for proposal in card.get("proposals") or ():
        checks = " · ".join(
            f"{_mark(c)} {c['name']}: {c['detail']}" for c in proposal.get("checks", ())
        )
        lines += ["", f"**proposal** `{proposal['id']}`: {checks or 'nothing checked'}"]
    recent = card.get("recent_events")
    if recent:
        shown = ", ".join(
            f"`{e['type']}` {time.strftime('%H:%M:%S', time.localtime(e['timestamp']))}"
            for e in recent
        )
        lines += ["", f"**recent events:** {shown}"]
    answer = card.get("last_answer")
    if answer:
        lines += ["", "**last answer:**", "", *_quoted(answer["text"])]
        if answer["truncated"]:
            lines += [
                "",
                f"_… {answer['lines']} lines in all: the whole conversation is "
                f"`remora.agent.history {{node_id: {card['id']}}}` "
                "(Neovim: `:RemoraHistory`)_",
            ]
    return "\n".join(lines)


def _quoted(text: str) -> list[str]:
    """``text`` as a Markdown block quote (its lines kept)."""
    return [f"> {line}" if line.strip() else ">" for line in text.splitlines()]
