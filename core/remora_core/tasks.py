"""Background tasks that are never lost and never fail silently.

Every coroutine the engine or the server starts in the background goes through a
:class:`TaskSet`: it keeps a reference (so the task is not garbage collected
mid-flight), logs any exception with its traceback, and cancels whatever is left
on :meth:`TaskSet.close`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class TaskSet:
    """A set of running background tasks."""

    def __init__(self, name: str = "remora") -> None:
        self.name = name
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coroutine: Coroutine[Any, Any, Any], *, name: str | None = None):
        """Run ``coroutine`` in the background; return its task."""
        task = asyncio.get_running_loop().create_task(coroutine, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            log.error(
                "background task %s failed: %s",
                task.get_name(),
                error,
                exc_info=error,
            )

    def __len__(self) -> int:
        return len(self._tasks)

    async def close(self, timeout: float = 5.0) -> None:
        """Cancel every task and wait (bounded) for them to finish."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
