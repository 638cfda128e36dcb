"""Crash safety: a project killed with SIGKILL at random points loses nothing.

A subprocess (``worker.py``) runs a real project on a real store: it emits
events and runs agents' turns, and logs to a side file every event id (and
custom subscription id) once the engine has said it is committed. The test
kills it with ``SIGKILL`` at seeded random moments — mostly while it runs,
sometimes during its start-up — ``KILLS`` times, restarting it on the same store
each time. After each kill it notes which runs the store says were ``running``,
starts the engine on the store (``Project.start``, as the server would, which
runs ``Swarm.start``), closes it, and checks with plain ``sqlite3``:

- every event id in the side log is in ``events`` exactly once, no id twice;
- seqs are unique and only grow: every event stored before is still there with
  the same seq, everything a later process committed has a higher seq than
  everything an earlier one did, and the loop's own events (emitted one after
  the other) have increasing seqs in the order they were logged;
- every logged custom subscription is stored with its pattern, is in the
  restarted engine's index, and no subscription exists twice;
- every run that was ``running`` at the kill is now ``interrupted`` with one
  ``run_interrupted`` event, no run is left ``running``, and no agent is shown
  (in the graph) or stored as running.

Nothing here depends on how long anything takes: kill moments only change
which states are exercised, never what must hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from remora_core.model import AgentStatus

from .worker import open_project, pattern_json, resolved_specs, write_workspace

WORKER = Path(__file__).with_name("worker.py")
KILLS = 30
SEED = 20_240_611
READY_TIMEOUT_S = 180.0  # a hang detector, not a speed check: CI machines are shared
STARTUP_KILL_EVERY = 4
"""Every this many kills, kill at a random moment of start-up instead."""

pytestmark = pytest.mark.slow


@dataclass
class SideLog:
    """What the workers said the engine committed, in order."""

    events: list[tuple[int, str, str]] = field(default_factory=list)
    """(generation, source, event id)."""
    subscriptions: list[tuple[str, str, dict[str, object]]] = field(
        default_factory=list
    )
    """(subscription id, agent id, pattern JSON)."""


def read_side_log(path: Path) -> SideLog:
    log = SideLog()
    if not path.exists():
        return log
    text = path.read_text(encoding="utf-8")
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            continue  # a line the kill cut short was never claimed complete
        kind, generation, *rest = line.split(" ", 4)
        if kind == "ev":
            source, event_id = rest
            log.events.append((int(generation), source, event_id.strip()))
        else:
            sub_id, agent, pattern = rest
            log.subscriptions.append((sub_id, agent, json.loads(pattern)))
    return log


def connect(root: Path) -> contextlib.closing[sqlite3.Connection]:
    """A plain sqlite3 connection to the project's store, closed after use."""
    return contextlib.closing(
        sqlite3.connect(root / ".remora" / "remora.db", timeout=10)
    )


def running_runs(root: Path) -> set[str]:
    """Runs the store says are in flight (read right after a kill)."""
    if not (root / ".remora" / "remora.db").exists():
        return set()
    with connect(root) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        if "runs" not in tables:
            return set()
        return {
            r[0] for r in db.execute("SELECT id FROM runs WHERE status = 'running'")
        }


async def restart_engine(root: Path) -> set[str]:
    """Start the engine on the store, as the server would; return the custom
    subscription ids in its index.
    """

    async def idle_turn(turn: object) -> str:
        return "checked"

    project = await open_project(root, idle_turn)  # type: ignore[arg-type]
    try:
        await project.swarm.runner.idle()
        running = [
            n.id
            for n in project.graph.active()
            if n.agent_status is AgentStatus.RUNNING
        ]
        if running:
            with connect(root) as db:
                runs = db.execute(
                    "SELECT node_id, id, status FROM runs WHERE node_id IN "
                    f"({','.join('?' * len(running))}) ORDER BY started_at",
                    running,
                ).fetchall()
            raise AssertionError(
                f"agents shown running after a restart: {running}; their runs: {runs}"
            )
        return set(project.swarm.index.by_id)
    finally:
        await project.close()


@dataclass
class History:
    """What earlier checks saw, to check nothing goes backwards."""

    seqs: dict[str, int] = field(default_factory=dict)
    """Every event id stored so far -> its seq."""
    interrupted: int = 0
    logged: int = 0
    before_ready: int = 0
    """Kills that came before the worker was ready (during its start-up)."""


def check_store(
    root: Path,
    side: SideLog,
    was_running: set[str],
    index_ids: set[str],
    history: History,
) -> None:
    with connect(root) as db:
        rows = db.execute("SELECT seq, id FROM events ORDER BY seq").fetchall()
        subscriptions = db.execute(
            "SELECT id, agent_id, pattern FROM subscriptions"
        ).fetchall()
        runs = dict(db.execute("SELECT id, status FROM runs").fetchall())
        interrupted_events = Counter(
            r[0]
            for r in db.execute(
                "SELECT run_id FROM events WHERE type = 'run_interrupted'"
            )
        )
        (shown_running,) = db.execute(
            "SELECT COUNT(*) FROM nodes WHERE agent_status = 'running'"
        ).fetchone()

    seq_of: dict[str, int] = {}
    for seq, event_id in rows:
        assert event_id not in seq_of, f"event {event_id} stored twice"
        seq_of[event_id] = seq
    seqs = [seq for seq, _ in rows]
    assert len(set(seqs)) == len(seqs), "a seq used twice"

    # Everything stored before is still there, with the same seq.
    for event_id, seq in history.seqs.items():
        assert seq_of.get(event_id) == seq, (
            f"event {event_id} (seq {seq}) changed or vanished"
        )

    # Every committed event is stored, once.
    logged_ids = [event_id for _, _, event_id in side.events]
    assert len(set(logged_ids)) == len(logged_ids), "the side log repeats an event id"
    missing = [i for i in logged_ids if i not in seq_of]
    assert not missing, f"{len(missing)} committed events are missing: {missing[:5]}"

    # Seqs only grow: across processes, and along the loop's own sequence.
    previous_generation_max = 0
    by_generation: dict[int, list[int]] = {}
    for generation, _, event_id in side.events:
        by_generation.setdefault(generation, []).append(seq_of[event_id])
    for generation in sorted(by_generation):
        generation_seqs = by_generation[generation]
        assert min(generation_seqs) > previous_generation_max, (
            f"process {generation} committed a seq not above the earlier processes'"
        )
        previous_generation_max = max(generation_seqs)
    loop_seqs = [seq_of[i] for _, source, i in side.events if source == "main"]
    assert loop_seqs == sorted(loop_seqs) and len(set(loop_seqs)) == len(loop_seqs)

    # Custom subscriptions: stored with their patterns, restored, never doubled.
    stored_subs = {sub_id: (agent, json.loads(p)) for sub_id, agent, p in subscriptions}
    for sub_id, agent, pattern in side.subscriptions:
        assert stored_subs.get(sub_id) == (agent, pattern), (
            f"subscription {sub_id} lost"
        )
        assert sub_id in index_ids, f"subscription {sub_id} not restored"
    keys = [json.dumps([a, p], sort_keys=True) for a, p in stored_subs.values()]
    assert len(set(keys)) == len(keys), "a subscription was added twice"
    assert set(stored_subs) == index_ids

    # Runs in flight at the kill are interrupted, each with its event.
    for run_id in was_running:
        assert runs.get(run_id) == "interrupted", f"run {run_id} is {runs.get(run_id)}"
        assert interrupted_events[run_id] == 1, (
            f"{interrupted_events[run_id]} run_interrupted events for {run_id}"
        )
    assert "running" not in runs.values(), "a run is still marked running"
    assert shown_running == 0, "agents stored as running after a clean restart"

    history.seqs = seq_of
    history.interrupted += len(was_running)
    history.logged = len(logged_ids)


def wait_for(process: subprocess.Popen[bytes], word: bytes, stderr: Path) -> None:
    """Block until the worker prints ``word`` (``starting``: imported, about to
    open the project; ``ready``: started and subscribed).
    """
    assert process.stdout is not None
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.5)
        if ready:
            line = process.stdout.readline()
            if line.strip() == word:
                return
            if not line:
                break
        elif process.poll() is not None:
            break
    process.kill()
    process.wait()
    raise AssertionError(
        f"the worker never said {word!r}:\n"
        + stderr.read_text(errors="replace")[-3000:]
    )


def test_sigkill_at_random_points_loses_nothing(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    root = tmp_path / "project"
    write_workspace(root)
    side_path = tmp_path / "committed.log"
    history = History()
    for generation in range(KILLS):
        stderr = tmp_path / f"worker.{generation}.stderr"
        with open(stderr, "wb") as err:
            process = subprocess.Popen(
                [
                    sys.executable,
                    str(WORKER),
                    str(root),
                    str(side_path),
                    str(generation),
                    str(SEED + generation),
                ],
                stdout=subprocess.PIPE,
                # Unbuffered: ``wait_for`` selects on the pipe, and a buffered
                # reader could hold "ready" read along with "starting" where
                # select cannot see it (the test then waited the whole
                # READY_TIMEOUT_S for a worker long ready, on busy machines).
                bufsize=0,
                stderr=err,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        try:
            startup_kill = (
                generation == 0  # the very first start: creating the store
                or generation % STARTUP_KILL_EVERY == STARTUP_KILL_EVERY - 1
            )
            if startup_kill:
                # Somewhere in start-up (opening, migrating, loading the store,
                # marking interrupted runs, indexing, subscribing: about 10-20 ms
                # here), or just after.
                wait_for(process, b"starting", stderr)
                time.sleep(rng.uniform(0.0, 0.025))
            else:
                wait_for(process, b"ready", stderr)
                time.sleep(rng.uniform(0.01, 0.5))
            assert process.poll() is None, (
                "the worker stopped by itself:\n"
                + stderr.read_text(errors="replace")[-3000:]
            )
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
            if process.stdout is not None:
                if b"ready" not in process.stdout.read():
                    history.before_ready += startup_kill
                process.stdout.close()
        assert process.returncode == -signal.SIGKILL

        was_running = running_runs(root)
        index_ids = asyncio.run(restart_engine(root))
        check_store(root, read_side_log(side_path), was_running, index_ids, history)

    # The kills did land on something: events were committed, subscriptions made,
    # and runs were caught in flight (turns run nearly all the time).
    assert history.logged > 100
    with connect(root) as db:
        (custom,) = db.execute("SELECT COUNT(*) FROM subscriptions").fetchone()
    assert custom == 4  # each of the worker's SPECS, once
    assert history.interrupted > 0
    print(
        f"\n{KILLS} kills, {history.logged} committed events checked, "
        f"{len(history.seqs)} stored, {history.interrupted} runs interrupted, "
        f"{history.before_ready} kills during start-up"
    )


def test_resolved_specs_name_real_agents(tmp_path: Path) -> None:
    """The worker's subscriptions are held by agents of its workspace."""
    root = tmp_path / "project"
    write_workspace(root)

    async def check() -> None:
        async def idle_turn(turn: object) -> str:
            return ""

        project = await open_project(root, idle_turn)  # type: ignore[arg-type]
        try:
            specs = resolved_specs(project)
            assert len(specs) == 4
            for agent, pattern in specs:
                assert project.graph.get(agent) is not None
                assert pattern_json(pattern)
        finally:
            await project.close()

    asyncio.run(check())


def test_kill_between_marking_and_announcing_an_interrupted_run(
    tmp_path: Path,
) -> None:
    """A start that dies after marking a run interrupted but before its
    ``run_interrupted`` event is stored must still leave the run announced
    after the next start.
    """
    root = tmp_path / "project"
    write_workspace(root)
    asyncio.run(restart_engine(root))  # the store, with the project's nodes
    with connect(root) as db:
        (node_id,) = db.execute(
            "SELECT id FROM nodes WHERE kind = 'method' ORDER BY id LIMIT 1"
        ).fetchone()
        # What a process killed during a turn leaves behind.
        db.execute(
            "INSERT INTO runs (id, node_id, trigger_event_id, correlation_id, "
            "status, started_at) VALUES ('run_crashed', ?, NULL, 'co_crashed', "
            "'running', ?)",
            (node_id, time.time()),
        )
        db.commit()
    stderr = tmp_path / "worker.stderr"
    with open(stderr, "wb") as err:
        process = subprocess.run(
            [
                sys.executable,
                str(WORKER),
                str(root),
                str(tmp_path / "side.log"),
                "0",
                str(SEED),
                "run_interrupted",
            ],
            stdout=subprocess.DEVNULL,
            stderr=err,
            timeout=READY_TIMEOUT_S,
            check=False,
        )
    assert process.returncode == -signal.SIGKILL, stderr.read_text(errors="replace")

    asyncio.run(restart_engine(root))
    with connect(root) as db:
        (status,) = db.execute(
            "SELECT status FROM runs WHERE id = 'run_crashed'"
        ).fetchone()
        announced = db.execute(
            "SELECT COUNT(*) FROM events WHERE type = 'run_interrupted' "
            "AND run_id = 'run_crashed'"
        ).fetchone()[0]
    assert status == "interrupted"
    assert announced >= 1, "the interrupted run was never announced"


def test_agent_stored_as_running_without_a_run_is_idle_after_restart(
    tmp_path: Path,
) -> None:
    """A turn that ended just before the kill may leave its agent stored as
    ``running`` (statuses are written after the run's end): no turn runs at
    start-up, so the restarted engine shows it idle.
    """
    root = tmp_path / "project"
    write_workspace(root)
    asyncio.run(restart_engine(root))
    with connect(root) as db:
        (node_id,) = db.execute(
            "SELECT id FROM nodes WHERE kind = 'method' ORDER BY id LIMIT 1"
        ).fetchone()
        db.execute("UPDATE nodes SET agent_status = 'running' WHERE id = ?", (node_id,))
        db.commit()
    asyncio.run(restart_engine(root))  # asserts no agent is shown running
    with connect(root) as db:
        (status,) = db.execute(
            "SELECT agent_status FROM nodes WHERE id = ?", (node_id,)
        ).fetchone()
    assert status == "idle"
