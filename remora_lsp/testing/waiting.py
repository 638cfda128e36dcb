"""Waiting on the server: poll a condition, or the end of the indexing progress.

Conditions are polled (the client keeps every notification it receives), so a
test never misses something that arrived before it started waiting.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lsprotocol import types

log = logging.getLogger(__name__)

TIMEOUT_S = 30.0
"""How long a wait lasts unless told otherwise (generous: CI machines are busy)."""


async def eventually(check, timeout: float = TIMEOUT_S, interval: float = 0.05):
    """Wait until ``check()`` (sync or async) returns something truthy; return it."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {check}")
        await asyncio.sleep(interval)


def indexing_runs(client: Any) -> list[list[Any]]:
    """Progress reports of every indexing run so far (begin first)."""
    runs = []
    for reports in client.progress_reports.values():
        if reports and getattr(reports[0], "title", "") == "Remora: indexing":
            runs.append(reports)
    return runs


async def wait_indexed(client: Any, runs: int = 1) -> list[Any]:
    """Wait until ``runs`` indexing runs have ended; return the last one."""

    def done():
        finished = [
            r
            for r in indexing_runs(client)
            if isinstance(r[-1], types.WorkDoneProgressEnd)
        ]
        return finished if len(finished) >= runs else None

    return (await eventually(done))[-1]
