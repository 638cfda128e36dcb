"""Trigger latency: event appended -> the agent's turn function called, 1k agents.

Run with the project's interpreter (``.venv/bin/python bench/trigger_latency.py``).

Setup (not timed): a real :class:`~remora_core.index.codegraph.CodeGraph` of about 1k
agents (one generated module of ``CLASSES`` classes x ``METHODS`` methods,
``extract_source`` + ``apply_extraction``), a real store (``Database.open`` on a
temporary folder) and a :class:`~remora_core.swarm.pipeline.Swarm` on it with
``swarm.cooldown_ms = 0`` and a turn function that notes ``time.perf_counter()``
for every event in ``turn.events`` and returns.

Timed, **engine**: ``TRIGGERS`` times, a ``human_chat`` to a random agent (built
beforehand): ``time.perf_counter()`` just before ``await swarm.emit(event)``,
and in the turn function; the two are paired by event id through
``turn.events``. Triggers are sent one at a time: the next is sent once the
previous turn has ended (its run recorded), so each figure is the latency of a
lone trigger, not of a queue. Between the two stamps the engine persists the
event (one commit), matches it, admits it, enqueues it to the agent's actor,
starts the actor's task, records the run (one commit) and persists
``agent_started`` (one commit), then calls the turn function. ``WARMUP``
triggers go first, untimed. The time until ``emit`` returned (the append) is
printed too.

Timed, **peers** (same run, same machine):

- *asyncio hop*: ``time.perf_counter()``, put it on an ``asyncio.Queue``,
  create a task that gets it and notes ``time.perf_counter()`` (the floor cost of
  handing a trigger to a new task);
- *aiosqlite commit*: one row of the same ``events`` table (a fresh database made
  by the same migrations, the store's pragmas) inserted in its own
  ``BEGIN IMMEDIATE``/``COMMIT``, awaited through aiosqlite (the floor cost of
  one durable step).

Prints p50/p99 (and max) for each, the ratios of the engine's p50 to the peers'
p50, and pass/fail against the targets: p50 <= 2 ms, p99 <= 10 ms (exit status
1 if one fails or a trigger is never paired with its turn).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from remora_core.config import RemoraConfig
from remora_core.discovery import extract_source
from remora_core.events.models import HumanChat
from remora_core.events.store import event_row
from remora_core.index.codegraph import CodeGraph
from remora_core.index.updates import apply_extraction
from remora_core.store import Database
from remora_core.swarm.pipeline import Swarm
from remora_core.swarm.turns import Turn

CLASSES = 10
METHODS = 99
TRIGGERS = 2000
WARMUP = 100
SEED = 4321
TURN_TIMEOUT_S = 10.0

TARGET_P50_MS = 2.0
TARGET_P99_MS = 10.0

INSERT_EVENT = (
    "INSERT INTO events (seq, id, type, timestamp, correlation_id, run_id, "
    "agent_id, from_agent, to_agent, depth, payload) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def build_graph() -> CodeGraph:
    """One module of CLASSES classes x METHODS methods (about 1k nodes)."""
    lines: list[str] = ['"""Generated module."""', ""]
    for c in range(CLASSES):
        lines.append(f"class Model{c}:")
        for m in range(METHODS):
            lines.append(f"    def method_{m}(self, value):")
            lines.append(f"        return value * {m} + {c}")
        lines.append("")
    graph = CodeGraph()
    path = "pkg/mod.py"
    apply_extraction(
        graph,
        path,
        extract_source(path, "\n".join(lines).encode(), read_inline_ids=False),
    )
    return graph


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[rank]


def summary(values: list[float]) -> tuple[float, float, float]:
    """p50, p99 and max, in milliseconds."""
    ms = [v * 1000 for v in values]
    return statistics.median(ms), percentile(ms, 0.99), max(ms)


# ---- engine --------------------------------------------------------------------------


async def run_engine(root: Path) -> tuple[list[float], list[float], int, int]:
    """Latencies (emit -> turn called), append latencies, agents, unpaired."""
    rng = random.Random(SEED)
    graph = build_graph()
    agents = [node.id for node in graph.active()]
    database = await Database.open(root)
    assert database.available, database.problem
    config = RemoraConfig.model_validate({"swarm": {"cooldown_ms": 0}})
    called: dict[str, float] = {}
    arrived: asyncio.Event = asyncio.Event()

    async def turn_function(turn: Turn) -> None:
        now = time.perf_counter()
        for stored in turn.events:
            called[stored.event.id] = now
        arrived.set()
        return None

    swarm = Swarm(database, graph, config, turn_function=turn_function)
    await swarm.start()

    async def trigger(event: HumanChat) -> tuple[float, float] | None:
        arrived.clear()
        sent = time.perf_counter()
        await swarm.emit(event)
        appended = time.perf_counter()
        try:
            await asyncio.wait_for(arrived.wait(), TURN_TIMEOUT_S)
        except TimeoutError:
            return None
        # Let the run end (agent_completed, the run's end recorded) before the
        # next trigger, so every trigger meets an idle engine.
        while swarm.runner.tasks:
            await asyncio.gather(*list(swarm.runner.tasks), return_exceptions=True)
        if event.id not in called:
            return None
        return called[event.id] - sent, appended - sent

    events = [
        HumanChat(to_agent=rng.choice(agents), message=f"question {n}")
        for n in range(WARMUP + TRIGGERS)
    ]
    for event in events[:WARMUP]:
        await trigger(event)
    latencies: list[float] = []
    appends: list[float] = []
    unpaired = 0
    for event in events[WARMUP:]:
        result = await trigger(event)
        if result is None:
            unpaired += 1
            continue
        latencies.append(result[0])
        appends.append(result[1])
    await swarm.close()
    await database.close()
    return latencies, appends, len(agents), unpaired


# ---- peers ---------------------------------------------------------------------------


async def asyncio_hop() -> list[float]:
    """perf_counter -> queue -> a newly created task notes perf_counter."""
    queue: asyncio.Queue[float] = asyncio.Queue()
    latencies: list[float] = []

    async def take() -> None:
        sent = await queue.get()
        latencies.append(time.perf_counter() - sent)

    for _ in range(WARMUP + TRIGGERS):
        queue.put_nowait(time.perf_counter())
        await asyncio.create_task(take())
    return latencies[WARMUP:]


async def aiosqlite_commit(root: Path) -> list[float]:
    """One events row per transaction, same schema and pragmas as the store."""
    database = await Database.open(root)
    assert database.available and database.connection is not None, database.problem
    connection = database.connection
    latencies: list[float] = []
    for seq in range(1, WARMUP + TRIGGERS + 1):
        event = HumanChat(to_agent="rm_peer", message=f"question {seq}")
        row = event_row(seq, event)
        began = time.perf_counter()
        await connection.execute("BEGIN IMMEDIATE")
        await connection.execute(INSERT_EVENT, row)
        await connection.execute("COMMIT")
        latencies.append(time.perf_counter() - began)
    await database.close()
    return latencies[WARMUP:]


async def run() -> int:
    """Measure the peers and the engine, print; the exit status."""
    with tempfile.TemporaryDirectory(prefix="remora-bench-trigger-") as tmp:
        base = Path(tmp)
        print("peer: asyncio task + queue hop ...", flush=True)
        hop = await asyncio_hop()
        print("peer: aiosqlite single-row commit ...", flush=True)
        commit = await aiosqlite_commit(base / "peer")
        print("engine: human_chat -> turn function ...", flush=True)
        latencies, appends, agents, unpaired = await run_engine(base / "engine")

    print()
    print(
        f"{agents} agents, {TRIGGERS} triggers (+{WARMUP} warm-up), one at a time, "
        "cooldown 0, store on disk (WAL)"
    )
    rows: list[tuple[str, list[float]]] = [
        ("engine: emit -> turn function called", latencies),
        ("  of which emit (append) returned", appends),
        ("peer: asyncio task + queue hop", hop),
        ("peer: aiosqlite single-row commit", commit),
    ]
    print(f"{'':<40} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9}")
    for label, values in rows:
        if values:
            p50, p99, top = summary(values)
            print(f"{label:<40} {p50:>9.3f} {p99:>9.3f} {top:>9.3f}")
    failures = 0
    if unpaired or not latencies:
        print(f"PROBLEM: {unpaired} triggers never reached their turn function")
        failures += 1
    if latencies:
        p50, p99, _ = summary(latencies)
        print(f"\nengine p50 / aiosqlite commit p50: {p50 / summary(commit)[0]:.1f}")
        print(f"engine p50 / asyncio hop p50:      {p50 / summary(hop)[0]:.0f}")
        for name, value, target in (
            ("p50", p50, TARGET_P50_MS),
            ("p99", p99, TARGET_P99_MS),
        ):
            ok = value <= target
            verdict = "pass" if ok else "FAIL"
            print(f"target {name} <= {target:g} ms {value:>10.3f}  {verdict}")
            failures += not ok
    return 1 if failures else 0


def main() -> None:
    """Command line entry point."""
    sys.exit(asyncio.run(run()))


if __name__ == "__main__":
    main()
