"""The agents' preload waits while a person types, in a file or in the symbol search.

``model.preload`` imports the agent kernel (pydantic-ai: seconds of Python
holding the interpreter) once nobody has typed for a moment. Typing in the
symbol search counts: on a warm start of a large project the import began a
second after indexing, while a person was typing a query, and each keystroke's
answer (read from the store) waited for the interpreter (``bench/index_large.py``:
`z` 262 ms instead of 20). And the import itself sets off no garbage
collection: its objects are frozen before the collector runs again.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from remora_core.agents import runtime
from remora_core.config import validate

from tests.project_harness import Project

REPO = Path(__file__).resolve().parents[2]

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


PRELOAD_IN_A_FRESH_INTERPRETER = """
import asyncio, gc, importlib, json, sys, time
from pathlib import Path
from remora_core.agents import runtime
from remora_core.config import validate
from tests.project_harness import Project

seen = {"import": None, "freeze": None}
collections = []
def note(phase, info):
    if phase == "start":
        collections.append(time.monotonic())

gc.callbacks.append(note)
real_import, real_freeze = importlib.import_module, gc.freeze

def import_module(name, *rest):
    if name == "remora_core.agents.kernel" and seen["import"] is None:
        seen["import"] = time.monotonic()
    return real_import(name, *rest)

def freeze():
    if seen["import"] is not None and seen["freeze"] is None:
        seen["freeze"] = time.monotonic()
    real_freeze()

importlib.import_module, gc.freeze = import_module, freeze
runtime.PRELOAD_QUIET_S = 0.1

async def main():
    root = Path(sys.argv[1])
    (root / "names.py").write_text("def alpha():\\n    return 1\\n", encoding="utf-8")
    settings = validate({"model": {"preload": True, "base_url": "http://127.0.0.1:9/v1"}})[0]
    project = Project(root, settings)
    await project.start()
    try:
        await project.app.indexed()
        before = gc.get_freeze_count() if seen["freeze"] is None else None
        for _ in range(1200):
            if project.agents.kernel is not None:
                break
            await asyncio.sleep(0.05)
        during = [t for t in collections if seen["import"] <= t <= seen["freeze"]]
        print(json.dumps({
            "loaded": project.agents.kernel is not None,
            "collections": len(during),
            "frozen": gc.get_freeze_count() - (before or 0),
            "collector on": gc.isenabled(),
        }))
    finally:
        await project.close()

asyncio.run(main())
"""


def test_the_kernels_import_sets_off_no_collection_and_is_frozen(tmp_path: Path):
    """The preload's import builds ~70k objects that live as long as the
    server. Collections while it ran (full ones, 15-55 ms each) and the first
    young one after it (all of them, 50-60 ms) held the interpreter while a
    person typed; they found nothing to free. None runs from the import's
    start until its objects are frozen, and the collector is on after.
    """
    done = subprocess.run(
        [sys.executable, "-c", PRELOAD_IN_A_FRESH_INTERPRETER, str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    shown = json.loads(done.stdout.strip().splitlines()[-1])
    assert shown["loaded"], shown
    assert shown["collections"] == 0, shown
    assert shown["frozen"] > 20_000, shown
    assert shown["collector on"], shown
