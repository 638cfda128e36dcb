"""Graph engine overhead per node, and what checkpoints cost in the store.

Run with the project's interpreter (``.venv/bin/python bench/graph_overhead.py``).

**Overhead.** The running Python's stdlib is copied to a temporary folder
(as ``bench/index_stdlib.py`` does) and opened as a real
:class:`~remora_core.project.Project` (store on disk, every event persisted,
``swarm.cooldown_ms`` 0, ``agents.max_concurrency`` = ``CONCURRENCY``). The
``NODES`` largest functions and methods (by bytes) are the targets. Both sides
run the same turns against the same scripted model (``tests/fakes``, a thread
of this process; it answers each request with a short text):

- **graph**: one graph, one step over those ids, ``max_concurrency`` =
  ``CONCURRENCY``; timed from ``graphs.run`` to ``graph_completed``
  (which includes the checkpoint taken before the run);
- **one by one**: what ``remora.agent.run`` does for each node (reserve a run
  id, emit ``human_chat``), at most ``CONCURRENCY`` in flight, timed from the
  first request to the last ``agent_completed``.

Between the sides every agent's memory is cleared, so both start from empty
histories; the order of the sides alternates over ``ROUNDS`` rounds (the
best of each is kept). Printed: per-node time of each side, the ratio graph
/ one by one (target <= 1.1), and the process's peak RSS before the runs and
after each side (bounded memory: the graph keeps one outcome per step × node,
nothing per event, so the peak stops growing after the first round).

**Checkpoint size.** A generated project of ``CP_FILES`` × ``CP_FUNCTIONS``
functions (> 10k nodes) with a little agent state (a KV entry for a few
agents) takes ``CHECKPOINTS`` checkpoints of unchanged state; the store's
size (pages in use, WAL included) is compared before and after
(target: growth < 1 MB).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import shutil
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fakes

from remora_core.config import RemoraConfig
from remora_core.events.models import HumanChat
from remora_core.model import NodeKind
from remora_core.trust import Trust

from tests.fakes.model_server import ModelServer, Reply
from tests.project_harness import Project

STDLIB = Path(sysconfig.get_paths()["stdlib"])
NODES = 1000
CONCURRENCY = 4
ROUNDS = 2
TARGET_RATIO = 1.1
CP_FILES, CP_FUNCTIONS = 500, 20
CHECKPOINTS = 10
TARGET_GROWTH_MB = 1.0
RUN_TIMEOUT_S = 1800.0


def respond(request: dict[str, Any]) -> Reply:
    """The scripted model: a short answer to every request."""
    return Reply(text="Looked at myself: fine.")


def config(base_url: str) -> RemoraConfig:
    """The bench's settings: scripted model, no cooldown, fixed concurrency."""
    return RemoraConfig.model_validate(
        {
            "model": {
                "provider": "openai_compatible",
                "base_url": base_url,
                "name": "scripted",
                "protocol": "tools",
            },
            "swarm": {"cooldown_ms": 0, "turn_budget": 100_000},
            "agents": {"max_concurrency": CONCURRENCY},
        }
    )


def copy_stdlib(destination: Path) -> None:
    """The stdlib without site-packages and caches (as index_stdlib.py)."""

    def ignore(directory: str, names: list[str]) -> list[str]:
        skipped = [n for n in names if n == "__pycache__"]
        if Path(directory) == STDLIB and "site-packages" in names:
            skipped.append("site-packages")
        return skipped

    shutil.copytree(STDLIB, destination, ignore=ignore, symlinks=True)


def peak_rss_mb() -> float:
    """The peak resident set of the bench process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    """The resident set now (Linux; elsewhere the peak so far)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return peak_rss_mb()
    return pages * resource.getpagesize() / 1024 / 1024


async def open_project(root: Path, base_url: str) -> Project:
    """A started, indexed project on ``root``."""
    settings = config(base_url)
    project = Project(root, settings, trust=Trust.for_settings(settings.model))
    await project.start()
    await project.indexed.wait()
    return project


def largest(project: Project, count: int) -> list[str]:
    """Ids of the ``count`` largest functions and methods."""
    kinds = {NodeKind.FUNCTION, NodeKind.METHOD}
    nodes = [n for n in project.graph.active() if n.kind in kinds]
    nodes.sort(key=lambda n: n.span.end_byte - n.span.start_byte, reverse=True)
    return [n.id for n in nodes[:count]]


async def forget_all(project: Project, ids: list[str]) -> None:
    """Clear every agent's memory (both sides start from empty histories)."""
    assert project.agents is not None
    for node_id in ids:
        await project.agents.forget(node_id)
    await project.swarm.runner.idle()


async def graph_side(project: Project, ids: list[str]) -> float:
    """One graph over ``ids``; seconds to ``graph_completed``."""
    assert project.graphs is not None
    done = asyncio.get_running_loop().create_future()

    def on_end(stored: Any) -> None:
        if not done.done():
            done.set_result(stored.event)

    consumer = project.swarm.bus.subscribe(
        "bench graph", on_end, types={"graph_completed"}
    )
    spec = {
        "name": "bench",
        "max_concurrency": CONCURRENCY,
        "error_policy": "continue",
        "steps": [{"id": "look", "bundle": "code_agent", "targets": {"ids": ids}}],
    }
    began = time.perf_counter()
    await project.graphs.run(spec)
    event = await asyncio.wait_for(done, RUN_TIMEOUT_S)
    took = time.perf_counter() - began
    project.swarm.bus.unsubscribe(consumer)
    if event.counts.get("completed") != len(ids):
        raise RuntimeError(f"the graph ended {event.outcome} with {event.counts}")
    await project.swarm.runner.idle()
    return took


async def one_by_one_side(project: Project, ids: list[str]) -> float:
    """The same runs as ``remora.agent.run`` starts them; seconds to the last end."""
    swarm = project.swarm
    ends: dict[str, asyncio.Future[str]] = {}

    def on_end(stored: Any) -> None:
        waiting = ends.get(stored.event.run_id or "")
        if waiting is not None and not waiting.done():
            waiting.set_result(stored.event.type)

    consumer = swarm.bus.subscribe(
        "bench runs", on_end, types={"agent_completed", "agent_failed"}
    )
    limit = asyncio.Semaphore(CONCURRENCY)

    async def one(node_id: str) -> str:
        async with limit:
            request = HumanChat(to_agent=node_id, message="Look at yourself.")
            run_id = swarm.runner.reserve(request.id)
            ends[run_id] = asyncio.get_running_loop().create_future()
            await swarm.emit(request)
            return await ends[run_id]

    began = time.perf_counter()
    outcomes = await asyncio.wait_for(
        asyncio.gather(*(one(i) for i in ids)), RUN_TIMEOUT_S
    )
    took = time.perf_counter() - began
    swarm.bus.unsubscribe(consumer)
    if any(o != "agent_completed" for o in outcomes):
        raise RuntimeError("a run did not complete")
    await swarm.runner.idle()
    return took


async def overhead(work: Path, model: ModelServer) -> bool:
    """The graph vs one-by-one measurement; whether the target holds."""
    root = work / "stdlib"
    copy_stdlib(root)
    project = await open_project(root, model.url)
    try:
        ids = largest(project, NODES)
        print(f"{project.graph.active_count()} nodes indexed; {len(ids)} targets")
        await one_by_one_side(project, ids[:8])  # warm-up: the kernel import
        await forget_all(project, ids)
        graph_s: list[float] = []
        single_s: list[float] = []
        rss_before = peak_rss_mb()
        rss: list[str] = []
        for number in range(ROUNDS):
            sides = [(graph_s, graph_side), (single_s, one_by_one_side)]
            for times, side in sides if number % 2 == 0 else sides[::-1]:
                times.append(await side(project, ids))
                await forget_all(project, ids)
                # The scripted model keeps every request it got: not the
                # engine's memory, so not counted.
                model.requests.clear()
                gc.collect()
                rss.append(f"{side.__name__.split('_')[0]} {rss_mb():.0f}")
        rss_after = peak_rss_mb()
    finally:
        await project.close()
    graph_per = min(graph_s) / len(ids) * 1000
    single_per = min(single_s) / len(ids) * 1000
    ratio = graph_per / single_per
    print(f"graph:      {graph_per:7.2f} ms per node ({min(graph_s):.1f} s)")
    print(f"one by one: {single_per:7.2f} ms per node ({min(single_s):.1f} s)")
    verdict = "ok" if ratio <= TARGET_RATIO else "MISSED"
    print(f"ratio graph / one by one: {ratio:.3f} (target <= {TARGET_RATIO}) {verdict}")
    print(
        f"peak RSS: {rss_before:.0f} MB before the graphs, {rss_after:.0f} MB after "
        f"(resident MB after each side in turn: {', '.join(rss)})"
    )
    return ratio <= TARGET_RATIO


def generated_project(root: Path) -> None:
    """``CP_FILES`` modules of ``CP_FUNCTIONS`` functions each."""
    for f in range(CP_FILES):
        body = [
            f"def f{f}_{n}(x):\n    return x + {n}\n\n" for n in range(CP_FUNCTIONS)
        ]
        package = root / f"pkg{f // 50}"
        package.mkdir(parents=True, exist_ok=True)
        (package / f"mod{f}.py").write_text("\n".join(body), encoding="utf-8")


async def store_bytes(project: Project) -> int:
    """Bytes of the store in use (pages as the connection sees them, WAL
    included).
    """
    assert project.database is not None

    def work(db: Any) -> int:
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
        return (pages - free) * size

    return await project.database.read(work, "measuring") or 0


async def checkpoint_size(work: Path, base_url: str) -> bool:
    """Growth of the store over ``CHECKPOINTS`` checkpoints of unchanged state."""
    root = work / "generated"
    generated_project(root)
    project = await open_project(root, base_url)
    try:
        assert project.agents is not None and project.checkpoints is not None
        ids = [n.id for n in project.graph.active()]
        for node_id in ids[:20]:
            await project.agents.services.kv.set(node_id, "note", "a little state")
        await project.swarm.runner.idle()
        before = await store_bytes(project)
        await project.checkpoints.create("bench 0")
        first = await store_bytes(project)
        for number in range(1, CHECKPOINTS):
            await project.checkpoints.create(f"bench {number}")
        after = await store_bytes(project)
    finally:
        await project.close()
    growth = (after - before) / 1024 / 1024
    verdict = "ok" if growth < TARGET_GROWTH_MB else "MISSED"
    print(
        f"{len(ids)} nodes: {CHECKPOINTS} checkpoints grew the store by "
        f"{growth * 1024:.1f} KB (target < {TARGET_GROWTH_MB} MB) {verdict}; "
        f"the first {(first - before) / 1024:.1f} KB, the other "
        f"{CHECKPOINTS - 1} {(after - first) / 1024:.1f} KB"
    )
    return growth < TARGET_GROWTH_MB


async def run(only: str | None) -> int:
    """Both measurements (or one); exit status 1 if a target is missed."""
    good = True
    with ModelServer(responder=respond) as model, tempfile.TemporaryDirectory() as tmp:
        if only in (None, "checkpoints"):
            good &= await checkpoint_size(Path(tmp), model.url)
        if only in (None, "overhead"):
            good &= await overhead(Path(tmp), model)
    return 0 if good else 1


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["overhead", "checkpoints"])
    arguments = parser.parse_args()
    sys.exit(asyncio.run(run(arguments.only)))


if __name__ == "__main__":
    main()
