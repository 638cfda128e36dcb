"""Event append + match throughput with 10k agents, against a raw aiosqlite insert.

Run with the project's interpreter (``.venv/bin/python bench/events_throughput.py``).

Setup (not timed):

- a real :class:`~remora_core.index.codegraph.CodeGraph` of about 10k agents: ``FILES``
  generated modules of ``CLASSES`` classes x ``METHODS`` methods, parsed with
  ``extract_source`` and put in the graph with ``apply_extraction``, so every
  active node has its implicit default subscriptions (messages to it,
  ``content_changed`` of its own node);
- a real store (``Database.open`` on a temporary folder) and a
  :class:`~remora_core.swarm.pipeline.Swarm` on it, with ``CUSTOM`` custom
  patterns added through ``Swarm.subscribe`` (persisted): ``event_types`` with
  ``from_agents`` globs, ``to_agent``, ``path_glob``, ``tags``, ``nodes``, and
  a few unindexed ones (glob or tags only);
- ``EVENTS`` pre-built events of a realistic mix (messages between random
  agents, some tagged; a person's chats; ``content_changed`` of random nodes;
  tool calls and results; model responses; completed turns), all at depth 0,
  each with its own correlation id.

Timed, **engine**: the events go through ``Swarm.emit`` — persist (group commit),
match subscriptions, admit through the cascade rules, enqueue triggers, publish
on the bus — through ``Swarm.emit_nowait`` with up to ``WINDOW`` emits in flight
(as when many agents emit at once: the store group-commits whatever queued
while the previous transaction was written, so matching and writing overlap),
then ``Swarm.close`` (which writes the cascade chains still pending). Before
timing, the heap is frozen (``gc.freeze()``) as the server does after start-up.
Turns are **not** executed: ``swarm.runner.trigger`` (the
boundary where a trigger is handed to an agent's actor) is replaced by a
counter, so this measures append + match + trigger enqueue, not turn execution.

Timed, **peer** (same run, same machine): a fresh database created by the same
migrations; the same rows (same columns, same seqs, same payload JSON, built
before timing) inserted into ``events`` with one ``executemany`` in one
``BEGIN IMMEDIATE``/``COMMIT`` per batch of the same size, on a plain aiosqlite
connection with the store's pragmas. The peer runs before and after the engine;
the faster of the two is the reference. An informational second peer also
inserts the ``event_nodes`` rows the engine writes.

After timing, a separate pass calls ``SubscriptionIndex.match`` on every event
(matching alone, for the breakdown) and the engine database is checked: every
event stored once, seqs 1..n.

Prints events/s for both, matches and triggers counted, the ratio; exit status 1
if a target fails (>= 20k events/s, >= 30 % of the raw rate) or a check fails.
``--profile`` runs the engine phase under cProfile and prints where time goes;
``--mix indexed`` replaces the varied custom patterns by as many patterns that the
index files under a recipient or a node (so matching meets only the candidates
concerning each event), which separates the cost of matching from the rest.
Node ids are random, so matches vary slightly between runs.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import pstats
import random
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
from remora_core.config import RemoraConfig
from remora_core.discovery import extract_source
from remora_core.events.models import (
    AgentCompleted,
    AgentMessage,
    ContentChanged,
    Event,
    HumanChat,
    ModelResponse,
    ToolCalled,
    ToolResult,
)
from remora_core.events.subscriptions import Pattern
from remora_core.index.codegraph import CodeGraph
from remora_core.index.updates import apply_extraction
from remora_core.model import NodeKind
from remora_core.store import Database
from remora_core.store.database import CACHE_KIB
from remora_core.swarm.pipeline import Swarm

FILES = 10
CLASSES = 10
METHODS = 99
CUSTOM = 1000
EVENTS = 50_000
WARMUP = 1_000
BATCH = 500
WINDOW = 8 * BATCH
"""Emits in flight at once in the engine phase."""
TAGS = [f"tag{i}" for i in range(50)]
TOOLS = ["read_node", "search", "send_message", "propose_rewrite", "run_tests"]
SEED = 1234

TARGET_RATE = 20_000.0
TARGET_RATIO = 0.30

INSERT_EVENTS = (
    "INSERT INTO events (seq, id, type, timestamp, correlation_id, run_id, "
    "agent_id, from_agent, to_agent, depth, payload) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_NODES = "INSERT OR IGNORE INTO event_nodes (node_id, seq) VALUES (?, ?)"


# ---- the graph -----------------------------------------------------------------------


def module_source(file_number: int) -> bytes:
    """A module of CLASSES classes with METHODS small methods each."""
    lines: list[str] = [f'"""Generated module {file_number}."""', ""]
    for c in range(CLASSES):
        lines.append(f"class Model{file_number}x{c}:")
        for m in range(METHODS):
            lines.append(f"    def method_{m}(self, value):")
            lines.append(f"        return value * {m} + {c}")
        lines.append("")
    return "\n".join(lines).encode()


def build_graph() -> tuple[CodeGraph, list[str]]:
    """The graph of FILES generated modules; also their paths."""
    graph = CodeGraph()
    paths: list[str] = []
    for number in range(FILES):
        path = f"pkg/mod_{number}.py"
        extraction = extract_source(path, module_source(number), read_inline_ids=False)
        apply_extraction(graph, path, extraction)
        paths.append(path)
    return graph, paths


# ---- custom subscriptions ------------------------------------------------------------


def custom_patterns(
    rng: random.Random, agents: list[str], paths: list[str]
) -> list[tuple[str, Pattern]]:
    """CUSTOM varied (holder, pattern) pairs; see the module docstring."""
    pick = rng.choice
    made: list[tuple[str, Pattern]] = []

    def add(count: int, build: Any) -> None:
        for _ in range(count):
            made.append((pick(agents), build()))

    # Messages from particular agents (exact ids), or from a family (prefix glob).
    add(
        200,
        lambda: Pattern(
            event_types=("agent_message",),
            from_agents=tuple(rng.sample(agents, rng.randint(1, 2))),
        ),
    )
    add(
        100,
        lambda: Pattern(
            event_types=("agent_message",), from_agents=(pick(agents)[:5] + "*",)
        ),
    )
    # Changes in a file: a few globs match a real file, most match none of them.
    add(20, lambda: Pattern(event_types=("content_changed",), path_glob=pick(paths)))
    add(
        80,
        lambda: Pattern(
            event_types=("content_changed",),
            path_glob=pick(["docs/*.py", "tests/test_*.py", "pkg/sub/*.py", "*.pyi"]),
        ),
    )
    # Tagged messages.
    add(150, lambda: Pattern(event_types=("agent_message",), tags=(pick(TAGS),)))
    add(
        80,
        lambda: Pattern(
            event_types=("agent_message",),
            from_agents=("rm_*",),
            tags=tuple(rng.sample(TAGS, 2)),
        ),
    )
    # Messages to another agent (watching a colleague's inbox).
    add(
        100,
        lambda: Pattern(
            event_types=("agent_message", "human_chat"), to_agent=pick(agents)
        ),
    )
    # What another agent does, and changes of another node.
    add(
        150,
        lambda: Pattern(
            event_types=("agent_completed", "tool_called"), nodes=(pick(agents),)
        ),
    )
    add(100, lambda: Pattern(event_types=("content_changed",), nodes=(pick(agents),)))
    # Unindexed (no type, recipient or node): checked against every event.
    add(10, lambda: Pattern(path_glob=pick(paths)))
    add(10, lambda: Pattern(tags=(pick(TAGS),)))
    assert len(made) == CUSTOM, len(made)
    return made


def indexed_patterns(
    rng: random.Random, agents: list[str]
) -> list[tuple[str, Pattern]]:
    """CUSTOM patterns the index files under a recipient or a node (``--mix
    indexed``): the same count, but each event only meets the candidates that
    concern it, which isolates the cost of the rest of the pipeline.
    """
    pick = rng.choice
    made = [
        (
            pick(agents),
            Pattern(event_types=("agent_message", "human_chat"), to_agent=pick(agents)),
        )
        for _ in range(CUSTOM // 2)
    ]
    made += [
        (
            pick(agents),
            Pattern(
                event_types=("content_changed", "agent_completed", "tool_called"),
                nodes=(pick(agents),),
            ),
        )
        for _ in range(CUSTOM - len(made))
    ]
    return made


# ---- events --------------------------------------------------------------------------


def make_events(
    rng: random.Random, count: int, agents: list[str], file_of: dict[str, str]
) -> list[Event]:
    """``count`` events of a realistic mix, depth 0, one correlation each."""
    pick = rng.choice
    events: list[Event] = []
    for number in range(count):
        roll = rng.random()
        run = f"run_{rng.getrandbits(48):012x}"
        if roll < 0.25:
            tags = (pick(TAGS),) if rng.random() < 0.3 else ()
            event: Event = AgentMessage(
                from_agent=pick(agents),
                to_agent=pick(agents),
                run_id=run,
                message=f"please look at case {number}",
                tags=tags,
            )
        elif roll < 0.35:
            event = HumanChat(
                to_agent=pick(agents), message=f"what does this do? {number}"
            )
        elif roll < 0.55:
            node = pick(agents)
            event = ContentChanged(path=file_of[node], node_ids=(node,))
        elif roll < 0.70:
            event = ToolCalled(
                agent_id=pick(agents),
                run_id=run,
                tool=pick(TOOLS),
                arguments={"query": f"q{number}", "limit": 10},
            )
        elif roll < 0.80:
            event = ToolResult(
                agent_id=pick(agents),
                run_id=run,
                tool=pick(TOOLS),
                ok=rng.random() < 0.9,
                summary="3 results",
            )
        elif roll < 0.90:
            event = ModelResponse(
                agent_id=pick(agents),
                run_id=run,
                usage={"input_tokens": 1200, "output_tokens": 300},
            )
        else:
            event = AgentCompleted(
                agent_id=pick(agents), run_id=run, result=f"done with {number}"
            )
        events.append(event)
    return events


def event_rows(events: list[Event], first_seq: int) -> list[tuple[Any, ...]]:
    """The ``events`` rows of ``events`` (as the store writes them)."""
    return [
        (
            first_seq + i,
            e.id,
            e.type,
            e.timestamp,
            e.correlation_id,
            e.run_id,
            e.agent_id,
            e.from_agent,
            e.to_agent,
            e.depth,
            e.model_dump_json(),
        )
        for i, e in enumerate(events)
    ]


def node_rows(events: list[Event], first_seq: int) -> list[list[tuple[str, int]]]:
    """Per event, its ``event_nodes`` rows."""
    return [
        [(n, first_seq + i) for n in e.concerned_nodes()] for i, e in enumerate(events)
    ]


# ---- runs ----------------------------------------------------------------------------


@dataclass
class EngineResult:
    """What the engine phase measured and found in its database."""

    seconds: float
    events: int
    triggers: int
    stored: int
    refused: int
    seq_ok: bool


async def emit_windowed(swarm: Swarm, events: list[Event]) -> None:
    """Emit every event with up to ``WINDOW`` emits in flight, as many agents
    emitting at once do: the store commits one batch while the previous one is
    matched. ``Swarm.emit_nowait`` hands back the store's future (no task per
    event); each batch of ``BATCH`` is awaited once ``WINDOW`` are in flight.
    """
    in_flight: deque[asyncio.Future[Any]] = deque()
    for start in range(0, len(events), BATCH):
        in_flight.append(
            asyncio.gather(
                *(swarm.emit_nowait(e) for e in events[start : start + BATCH])
            )
        )
        if len(in_flight) * BATCH >= WINDOW:
            await in_flight.popleft()
    await asyncio.gather(*in_flight)


async def run_engine(
    root: Path,
    graph: CodeGraph,
    patterns: list[tuple[str, Pattern]],
    warmup: list[Event],
    events: list[Event],
    profile: cProfile.Profile | None,
) -> tuple[EngineResult, Swarm]:
    """The timed engine phase (see the module docstring)."""
    database = await Database.open(root)
    assert database.available, database.problem
    config = RemoraConfig.model_validate({"swarm": {"cooldown_ms": 0}})

    async def nothing(turn: Any) -> None:
        return None

    swarm = Swarm(database, graph, config, turn_function=nothing)
    await swarm.start()
    for holder, pattern in patterns:
        await swarm.subscribe(holder, pattern)
    triggers = 0

    def count(agent_id: str, stored: Any) -> None:
        nonlocal triggers
        triggers += 1

    swarm.runner.trigger = count  # type: ignore[method-assign]
    gc.collect()
    gc.freeze()  # what the server does once a project has started
    for start in range(0, len(warmup), BATCH):
        await asyncio.gather(*(swarm.emit(e) for e in warmup[start : start + BATCH]))
    triggers = 0
    if profile is not None:
        profile.enable()
    began = time.perf_counter()
    await emit_windowed(swarm, events)
    await swarm.close()
    seconds = time.perf_counter() - began
    if profile is not None:
        profile.disable()

    connection = database.connection
    assert connection is not None
    async with connection.execute(
        "SELECT COUNT(*), COUNT(DISTINCT id), MIN(seq), MAX(seq), "
        "SUM(type = 'trigger_refused') FROM events"
    ) as cursor:
        total, distinct, low, high, refused = await cursor.fetchone()  # type: ignore[misc]
    await database.close()
    seq_ok = total == distinct and low == 1 and high == total
    return EngineResult(
        seconds, len(events), triggers, total, refused or 0, seq_ok
    ), swarm


async def run_peer(
    root: Path,
    rows: list[tuple[Any, ...]],
    nodes: list[list[tuple[str, int]]] | None,
    warmup_rows: list[tuple[Any, ...]],
) -> float:
    """Raw batched inserts into a fresh, identically migrated database."""
    migrated = await Database.open(root)  # creates the schema with the same migrations
    assert migrated.available, migrated.problem
    await migrated.close()
    connection = await aiosqlite.connect(
        root / ".remora" / "remora.db", isolation_level=None
    )
    await connection.execute("PRAGMA journal_mode = WAL")
    await connection.execute("PRAGMA synchronous = NORMAL")
    await connection.execute("PRAGMA foreign_keys = ON")
    await connection.execute(f"PRAGMA cache_size = {CACHE_KIB}")

    async def insert(
        batch: list[tuple[Any, ...]], batch_nodes: list[list[tuple[str, int]]] | None
    ) -> None:
        await connection.execute("BEGIN IMMEDIATE")
        await connection.executemany(INSERT_EVENTS, batch)
        if batch_nodes is not None:
            await connection.executemany(
                INSERT_NODES, [r for e in batch_nodes for r in e]
            )
        await connection.execute("COMMIT")

    for start in range(0, len(warmup_rows), BATCH):
        await insert(warmup_rows[start : start + BATCH], None)
    began = time.perf_counter()
    for start in range(0, len(rows), BATCH):
        await insert(
            rows[start : start + BATCH],
            nodes[start : start + BATCH] if nodes is not None else None,
        )
    seconds = time.perf_counter() - began
    async with connection.execute("SELECT COUNT(*) FROM events") as cursor:
        (count,) = await cursor.fetchone()  # type: ignore[misc]
    await connection.close()
    assert count == len(rows) + len(warmup_rows), count
    return len(rows) / seconds


def match_only(swarm: Swarm, events: list[Event]) -> tuple[int, float, dict[str, int]]:
    """Matches of every event (matching alone), its time, matches per type."""
    per_type: dict[str, int] = {}
    total = 0
    began = time.perf_counter()
    for event in events:
        found = len(swarm.index.match(event))
        total += found
        per_type[event.type] = per_type.get(event.type, 0) + found
    return total, time.perf_counter() - began, per_type


def print_profile(profile: cProfile.Profile) -> None:
    """The top of the profile by own time, then by cumulative time."""
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(35)
    print(out.getvalue())


async def run(profile: bool, mix: str) -> int:
    """Set up, measure, print; the exit status."""
    rng = random.Random(SEED)
    print("setup ...", flush=True)
    began = time.perf_counter()
    graph, paths = build_graph()
    nodes = list(graph.active())
    agents = [n.id for n in nodes]
    methods = [n.id for n in nodes if n.kind is NodeKind.METHOD]
    file_of = {n.id: n.file_path for n in nodes}
    patterns = (
        custom_patterns(rng, agents, paths)
        if mix == "varied"
        else indexed_patterns(rng, agents)
    )
    warmup = make_events(rng, WARMUP, methods, file_of)
    events = make_events(rng, EVENTS, methods, file_of)
    warmup_rows = event_rows(warmup, 1)
    rows = event_rows(events, WARMUP + 1)
    nodes_rows = node_rows(events, WARMUP + 1)
    counts: dict[str, int] = {}
    for event in events:
        counts[event.type] = counts.get(event.type, 0) + 1
    print(
        f"  {len(agents)} agents (active nodes, each with 2 implicit default "
        f"subscriptions) in {FILES} files, {len(patterns)} custom patterns "
        f"({mix} mix), "
        f"{len(events)} events + {WARMUP} warm-up, batches of {BATCH} "
        f"({time.perf_counter() - began:.1f} s)"
    )
    print("  events: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))

    profiler = cProfile.Profile() if profile else None
    with tempfile.TemporaryDirectory(prefix="remora-bench-events-") as tmp:
        base = Path(tmp)
        print("peer (raw aiosqlite executemany), first run ...", flush=True)
        peer_1 = await run_peer(base / "peer1", rows, None, warmup_rows)
        print("engine (Swarm.emit) ...", flush=True)
        engine, swarm = await run_engine(
            base / "engine", graph, patterns, warmup, events, profiler
        )
        print("peer (raw aiosqlite executemany), second run ...", flush=True)
        peer_2 = await run_peer(base / "peer2", rows, None, warmup_rows)
        print("peer + event_nodes rows (informational) ...", flush=True)
        peer_nodes = await run_peer(base / "peer3", rows, nodes_rows, warmup_rows)
    matches, match_seconds, per_type = match_only(swarm, events)

    rate = engine.events / engine.seconds
    raw = max(peer_1, peer_2)
    ratio = rate / raw
    print()
    print(
        "turns are not executed: swarm.runner.trigger is replaced by a counter "
        "(the enqueue boundary)"
    )
    print(
        f"engine  Swarm.emit_nowait, {WINDOW} in flight:  {rate:>10,.0f} events/s "
        f"({engine.seconds:.2f} s for {engine.events} events, close included)"
    )
    print(
        f"peer    raw executemany into events:             {raw:>10,.0f} events/s "
        f"(runs: {peer_1:,.0f} and {peer_2:,.0f}; the faster is the reference)"
    )
    print(
        f"info    raw executemany, events + event_nodes:   {peer_nodes:>10,.0f} "
        "events/s"
    )
    print(
        f"matches {matches} (subscription matches, defaults included: "
        + ", ".join(f"{k} {v}" for k, v in sorted(per_type.items()))
        + ")"
    )
    print(
        f"triggers enqueued {engine.triggers}; refusals stored {engine.refused}; "
        f"rows in events {engine.stored} (= {WARMUP} warm-up + {engine.events} "
        f"+ refusals)"
    )
    print(
        f"matching alone (SubscriptionIndex.match, separate pass): "
        f"{match_seconds / len(events) * 1e6:.1f} us/event"
    )
    print(f"\nengine / raw ratio: {ratio:.2f}")

    failures = 0
    for name, ok, shown in (
        (f"engine >= {TARGET_RATE:,.0f} events/s", rate >= TARGET_RATE, f"{rate:,.0f}"),
        (f"engine / raw >= {TARGET_RATIO:.2f}", ratio >= TARGET_RATIO, f"{ratio:.2f}"),
    ):
        print(f"target {name:<28} {shown:>10}  {'pass' if ok else 'FAIL'}")
        failures += not ok
    expected = WARMUP + engine.events + engine.refused
    if not engine.seq_ok or engine.stored != expected:
        print(
            f"PROBLEM: events table: {engine.stored} rows, expected {expected}, "
            f"seqs 1..n unique: {engine.seq_ok}"
        )
        failures += 1
    if engine.triggers != matches_admitted(swarm, events):
        print("PROBLEM: triggers counted differ from the admitted matches")
        failures += 1
    if profiler is not None:
        print_profile(profiler)
    return 1 if failures else 0


def matches_admitted(swarm: Swarm, events: list[Event]) -> int:
    """Triggers expected: distinct matched agents per event (all are active and
    every event has its own correlation, so nothing is refused).
    """
    return sum(len({s.agent_id for s in swarm.index.match(e)}) for e in events)


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--profile",
        action="store_true",
        help="run the engine phase under cProfile and print the top",
    )
    parser.add_argument(
        "--mix",
        choices=("varied", "indexed"),
        default="varied",
        help="custom patterns: the varied mix (default) or only "
        "patterns indexed by recipient or node (to isolate matching)",
    )
    args = parser.parse_args()
    sys.exit(asyncio.run(run(args.profile, args.mix)))


if __name__ == "__main__":
    main()
