"""Helpers for the swarm tests: real graphs, settings, and waiting for quiet.

Graphs are built the way the engine builds them (``extract_source`` then
``apply_extraction``), so node ids, parents and kinds are the real ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from remora_core.config import RemoraConfig
from remora_core.discovery import extract_source
from remora_core.index.codegraph import CodeGraph
from remora_core.index.updates import apply_extraction

if TYPE_CHECKING:
    from remora_core.events.store import StoredEvent
    from remora_core.model import CodeNode
    from remora_core.swarm.pipeline import Swarm

TIMEOUT = 20.0
"""Upper bound for anything that must end (a hang fails instead of blocking)."""


def build_graph(files: dict[str, str]) -> CodeGraph:
    """A graph of ``files`` (path → source), parsed for real."""
    graph = CodeGraph()
    for path, text in files.items():
        extraction = extract_source(path, text.encode(), read_inline_ids=False)
        apply_extraction(graph, path, extraction)
    return graph


def node(graph: CodeGraph, path: str, qualified_name: str) -> CodeNode:
    """The active node ``qualified_name`` of ``path``."""
    found = [n for n in graph.file_nodes(path) if n.qualified_name == qualified_name]
    assert len(found) == 1, f"{qualified_name} in {path}: {found}"
    return found[0]


def settings(
    *,
    cooldown_ms: int = 0,
    max_depth: int = 5,
    turn_budget: int = 20,
    max_concurrency: int = 4,
    **extra: Any,
) -> RemoraConfig:
    """Settings for a swarm test (no cooldown unless asked)."""
    raw: dict[str, Any] = {
        "swarm": {
            "cooldown_ms": cooldown_ms,
            "max_depth": max_depth,
            "turn_budget": turn_budget,
        },
        "agents": {"max_concurrency": max_concurrency},
        "discovery": {"workers": 1, "debounce_ms": 10},
    }
    for section, values in extra.items():
        raw.setdefault(section, {}).update(values)
    return RemoraConfig.model_validate(raw)


async def quiet(swarm: Swarm, timeout: float = TIMEOUT) -> None:
    """Wait until no turn is running or scheduled (fails after ``timeout``)."""
    await asyncio.wait_for(swarm.runner.idle(), timeout)


async def all_events(swarm: Swarm) -> list[StoredEvent]:
    """Every event of the log, oldest first."""
    return await swarm.events.since(0, limit=1_000_000)


def of_type(events: list[StoredEvent], kind: str) -> list[Any]:
    """The events (unwrapped) of one type, in log order."""
    return [s.event for s in events if s.event.type == kind]


async def eventually(
    check: Callable[[], Awaitable[bool] | bool], timeout: float = TIMEOUT
) -> None:
    """Poll ``check`` until it holds; fail after ``timeout`` seconds."""

    async def poll() -> None:
        while True:
            result = check()
            if not isinstance(result, bool):
                result = await result
            if result:
                return
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), timeout)
