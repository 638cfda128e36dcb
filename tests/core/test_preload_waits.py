"""The agents' preload waits while a person types, in a file or in the symbol search.

``model.preload`` imports the agent kernel (pydantic-ai: seconds of Python
holding the interpreter) once nobody has typed for a moment. Typing in the
symbol search counts: on a warm start of a large project the import began a
second after indexing, while a person was typing a query, and each keystroke's
answer (read from the store) waited for the interpreter (``bench/index_large.py``:
`z` 262 ms instead of 20).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from remora_core.agents import runtime
from remora_core.config import validate

from tests.project_harness import Project

QUIET_S = 1.5
"""The pause the preload waits for, in this test."""


async def test_the_kernel_is_not_imported_while_a_person_searches(
    tmp_path: Path, monkeypatch
):
    monkeypatch.setattr(runtime, "PRELOAD_QUIET_S", QUIET_S)
    (tmp_path / "names.py").write_text(
        "def alpha():\n    return 1\n\n\nclass Beta:\n    def gamma(self):\n"
        "        return 2\n",
        encoding="utf-8",
    )
    # An endpoint (never called): the preload imports the kernel, starts no model.
    settings = validate(
        {"model": {"preload": True, "base_url": "http://127.0.0.1:9/v1"}}
    )[0]
    project = Project(tmp_path, settings)
    await project.start()
    try:
        assert await project.ready()
        assert await project.app.indexed()
        agents = project.agents
        # Typing a query, a keystroke every 0.1 s, for three times the pause.
        for step in range(int(3 * QUIET_S / 0.1)):
            assert project.search("gamma"[: 1 + step % 5], 10)
            assert agents.kernel is None, f"imported while typing (step {step})"
            await asyncio.sleep(0.1)
        # The person pauses: the preload goes on.
        for _ in range(600):
            if agents.kernel is not None:
                break
            await asyncio.sleep(0.1)
        assert agents.kernel is not None, "the kernel was never preloaded"
    finally:
        await project.close()
