"""Symbol search over every active node of a project (``workspace/symbol``).

Ranking, best first: an id (``rm_…`` prefix), an exact name, a name prefix, a
name substring, a qualified-name or path substring, then a fuzzy match where the
query's characters appear in order in the qualified name. Matching ignores
case. Ties go to shorter qualified names, then to path and position.
"""

from __future__ import annotations

from collections.abc import Iterable

from remora_core.index.identity import ID_PREFIX
from remora_core.model import CodeNode


def _fuzzy(query: str, text: str) -> bool:
    position = 0
    for ch in query:
        position = text.find(ch, position)
        if position < 0:
            return False
        position += 1
    return True


def _rank(query: str, node: CodeNode) -> int | None:
    name = node.name.lower()
    qualified = node.qualified_name.lower()
    if query.startswith(ID_PREFIX) and node.id.startswith(query):
        return 0
    if name == query:
        return 1
    if name.startswith(query):
        return 2
    if query in name:
        return 3
    if query in qualified or query in node.file_path.lower():
        return 4
    if _fuzzy(query, qualified):
        return 5
    return None


def search_nodes(nodes: Iterable[CodeNode], query: str, limit: int) -> list[CodeNode]:
    """The ``limit`` best matches of ``query`` among ``nodes``."""
    wanted = query.strip().lower()
    scored: list[tuple[int, int, str, int, CodeNode]] = []
    for node in nodes:
        rank = _rank(wanted, node) if wanted else 6
        if rank is not None:
            scored.append(
                (
                    rank,
                    len(node.qualified_name),
                    node.file_path,
                    node.span.start_byte,
                    node,
                )
            )
    scored.sort(key=lambda item: item[:4])
    return [item[4] for item in scored[:limit]]
