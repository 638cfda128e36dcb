"""Agents looking around the project: ``search_nodes``, ``read_node`` and
``find_references`` (DESIGN §15).

An agent is told about itself, its parent, callers and callees; these tools
let it find any other node of the project. Search ranks as the editor's
symbol search does (``CodeGraph.search``: the name index of
``symbol_index.py``), references come from the code graph (``calls`` edges to
the node, ``imports`` edges to its file), sources from
``AgentServices.source_of`` (the open buffer, else the file read by
``project_paths.read_project_file``).

Two rules hold for every answer:

- **Never a secret.** A node of a file matching ``secrets.exclude`` is left
  out of search results and references, and reading it is refused — its
  name, signature and source never reach the model.
- **Bounded.** Results, characters per result and characters per answer have
  limits (below); the tools' descriptions say them, so the model knows to
  narrow a query rather than ask for everything.

Errors are :class:`LookError` (a ``ValueError``): ``call_tool`` turns them
into a message the model can act on.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from remora_core.index.cards import node_ref
from remora_core.index.identity import is_node_id
from remora_core.model import NodeKind, NodeStatus
from remora_core.project_paths import is_secret

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable

    from remora_core.agents.context import AgentContext
    from remora_core.model import CodeNode

DEFAULT_RESULTS = 10
MAX_RESULTS = 20
"""Search results one call returns at most."""
MAX_QUERY_CHARS = 200
CANDIDATES = 200
"""Matches searched before kind and secrets are filtered out."""
LINE_CHARS = 240
"""Characters of one result line (id, kind, name, place, signature)."""
ANSWER_CHARS = 4_000
"""Characters of a search or references answer."""
READ_CHARS = 12_000
"""Characters of source ``read_node`` shows; a longer node is cut and its
parts listed, to be read one by one."""
MAX_REFERENCES = 30
"""Callers, and importing files, listed at most."""
MAX_PARTS = 20
"""Parts of a cut node listed at most."""
KINDS = tuple(kind.value for kind in NodeKind)


class LookError(ValueError):
    """The model asked for something these tools cannot show; the message says
    what to do instead.
    """


# ---- shared ----------------------------------------------------------------------


def _secret(context: AgentContext, path: str) -> bool:
    return is_secret(path, context.services.config.secrets.exclude)


def _visible(context: AgentContext, nodes: Iterable[CodeNode]) -> list[CodeNode]:
    """Active nodes of files that are not secret."""
    return [
        n
        for n in nodes
        if n.status is NodeStatus.ACTIVE and not _secret(context, n.file_path)
    ]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _line(context: AgentContext, node: CodeNode) -> str:
    """One result: id, kind, qualified name, place and (a definition's) first line."""
    line = (
        f"{node.id} {node.kind.value} {node.qualified_name} "
        f"({node.file_path}:{node.span.start_line + 1})"
    )
    if node.kind is not NodeKind.FILE:
        header = next(
            (
                text.strip()
                for text in context.services.source_of(node).splitlines()
                if text.strip() and not text.lstrip().startswith("@")
            ),
            "",
        )
        if header:
            line += f"  {header}"
    return _cut(line, LINE_CHARS)


def _listing(lines: list[str], total: int, budget: int, more_hint: str) -> list[str]:
    """``lines`` while they fit in ``budget`` characters, then how many were left."""
    shown: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget:
            break
        shown.append(line)
        used += len(line) + 1
    left = total - len(shown)
    if left > 0:
        shown.append(f"… and {left} more not shown; {more_hint}")
    return shown


def _find(context: AgentContext, ref: object) -> CodeNode:
    """The node ``ref`` names: an id, or ``path::qualified.name`` (a path alone
    is its file); :class:`LookError` saying how to name one otherwise.
    """
    graph = context.services.graph
    if not isinstance(ref, str) or not ref.strip():
        raise LookError("give a node id (rm_xxxxxxxx); search_nodes finds ids")
    ref = ref.strip()
    if is_node_id(ref):
        node = graph.get(ref)
        if node is None:
            raise LookError(
                f"no node with id {ref!r}; node ids look like rm_xxxxxxxx "
                "(search_nodes finds them)"
            )
    elif "::" in ref or ref.endswith(".py"):
        path, _, name = ref.partition("::")
        if _secret(context, path):
            raise LookError(f"{path} matches secrets.exclude; not shown")
        file_node = graph.file_node(path)
        found = (
            [file_node]
            if not name and file_node is not None
            else [n for n in graph.file_nodes(path) if n.qualified_name == name]
        )
        if len(found) != 1:
            raise LookError(
                f"{ref} names {len(found)} nodes; give a node id (search_nodes "
                "finds ids)"
            )
        node = found[0]
    else:
        raise LookError(
            f"{ref!r} is not a node id; ids look like rm_xxxxxxxx (search_nodes "
            "finds them)"
        )
    if _secret(context, node.file_path):
        raise LookError(f"{node.file_path} matches secrets.exclude; not shown")
    if node.status is not NodeStatus.ACTIVE:
        raise LookError(f"{node.id} ({node.qualified_name}) no longer exists")
    return node


# ---- the tools ---------------------------------------------------------------------


async def search_nodes(
    context: AgentContext,
    query: str,
    kind: str | None = None,
    limit: int = DEFAULT_RESULTS,
) -> str:
    """The project's nodes best matching ``query``, one line each."""
    if not isinstance(query, str) or not query.strip():
        raise LookError("give words of a name, a qualified name or a path to search")
    if len(query) > MAX_QUERY_CHARS:
        raise LookError(f"a query has at most {MAX_QUERY_CHARS} characters")
    if kind is not None and kind not in KINDS:
        raise LookError(f"kind is one of {', '.join(KINDS)}")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise LookError(f"limit is a number from 1 to {MAX_RESULTS}")
    limit = min(limit, MAX_RESULTS)
    found = _visible(context, context.services.graph.search(query, CANDIDATES))
    if kind is not None:
        found = [n for n in found if n.kind.value == kind]
    if not found:
        return f"No node matches {query!r}" + (f" of kind {kind}." if kind else ".")
    lines = [_line(context, node) for node in found[:limit]]
    shown = _listing(lines, len(found), ANSWER_CHARS, "give a narrower query")
    return "\n".join(shown)


async def read_node(context: AgentContext, node_id: str) -> str:
    """A node's reference and source (cut at :data:`READ_CHARS`, parts listed)."""
    node = _find(context, node_id)
    source = context.services.shown_source(node)
    header = json.dumps(node_ref(node))
    if len(source) <= READ_CHARS:
        return f"{header}\n```python\n{source}\n```"
    cut = source.rfind("\n", 0, READ_CHARS)
    shown = source[: cut if cut > 0 else READ_CHARS]
    parts = [
        _line(context, child)
        for child in _visible(context, context.services.graph.children(node.id))
    ]
    note = (
        f"[cut: {len(shown):,} of {len(source):,} characters shown (read_node "
        f"shows at most {READ_CHARS:,})"
    )
    if parts:
        listed = _listing(parts[:MAX_PARTS], len(parts), 2_000, "search for them")
        note += "; read its parts by id:\n" + "\n".join(listed)
    return f"{header}\n```python\n{shown}\n```\n{note}]"


async def find_references(context: AgentContext, node_id: str) -> str:
    """Who calls a node, and which files import its file."""
    node = _find(context, node_id)
    graph = context.services.graph
    callers = [n for n in _visible(context, graph.callers(node.id)) if n.id != node.id]
    importers = [
        path
        for path in sorted(graph.importers(node.file_path))
        if path != node.file_path and not _secret(context, path)
    ]
    if not callers and not importers:
        return (
            f"No references: nothing in the project calls {node.qualified_name} "
            f"or imports {node.file_path} (as far as the code graph can tell: "
            "calls through variables or strings are not seen)."
        )
    half = ANSWER_CHARS // 2
    parts: list[str] = []
    if callers:
        lines = [_line(context, n) for n in callers[:MAX_REFERENCES]]
        parts.append(f"Called by ({len(callers)}):")
        parts.extend(_listing(lines, len(callers), half, "search for them by name"))
    if importers:
        lines = []
        for path in importers[:MAX_REFERENCES]:
            file_node = graph.file_node(path)
            lines.append(f"{file_node.id} file {path}" if file_node else path)
        parts.append(f"Files importing {node.file_path} ({len(importers)}):")
        parts.extend(_listing(lines, len(importers), half, "search for them"))
    return "\n".join(parts)


LOOKING_TOOLS: dict[str, Callable[..., Awaitable[str]]] = {
    "search_nodes": search_nodes,
    "read_node": read_node,
    "find_references": find_references,
}
"""The tools of this module by name (``tools.IMPLEMENTATIONS`` holds them)."""
