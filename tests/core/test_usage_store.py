"""What runs cost, as stored: an older store's runs get their tokens from
their ``model_response`` events when migrated, and the totals add up per node,
graph run and day.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from remora_core.store import Database
from remora_core.store.migrations import LATEST_VERSION, MIGRATIONS
from remora_core.store.runs import RunStore
from remora_core.store.usage import UsageStore, start_of_day

if TYPE_CHECKING:
    from pathlib import Path

BEFORE_COSTS = 9
"""The schema version before runs stored their tokens."""


def old_store(root: Path) -> Path:
    """A store at version 9: a person's run, a graph step's run (its trigger
    names the graph run) and a run that step set off, with their responses.
    """
    (root / ".remora").mkdir()
    path = root / ".remora" / "remora.db"
    with sqlite3.connect(path) as db:
        for script in MIGRATIONS[:BEFORE_COSTS]:
            db.executescript(script)
        db.execute(f"PRAGMA user_version = {BEFORE_COSTS}")
        now = start_of_day() + 3600
        step = {"type": "human_chat", "to_agent": "rm_b", "graph_run_id": "gr_1"}
        db.execute(
            "INSERT INTO events (id, type, timestamp, payload) "
            "VALUES ('ev_step', 'human_chat', ?, ?)",
            (now, json.dumps(step)),
        )
        runs = [
            ("run_a", "rm_a", None, "co_1", now),
            ("run_b", "rm_b", "ev_step", "co_2", now + 1),
            ("run_c", "rm_c", None, "co_2", now + 2),
        ]
        for run_id, node, trigger, correlation, started in runs:
            db.execute(
                "INSERT INTO runs (id, node_id, trigger_event_id, correlation_id, "
                "status, started_at, ended_at) VALUES (?, ?, ?, ?, 'completed', ?, ?)",
                (run_id, node, trigger, correlation, started, started + 2.5),
            )
        responses = [
            ("run_a", 100, 10),
            ("run_a", 200, 20),
            ("run_b", 1000, 1),
            ("run_c", 50, 5),
        ]
        for seq, (run_id, inp, out) in enumerate(responses, 1):
            usage = {"input_tokens": inp, "output_tokens": out}
            payload = {"type": "model_response", "usage": usage}
            db.execute(
                "INSERT INTO events (id, type, timestamp, run_id, payload) "
                "VALUES (?, 'model_response', ?, ?, ?)",
                (f"ev_{seq}", now, run_id, json.dumps(payload)),
            )
    return path


async def test_an_older_stores_runs_get_their_tokens_from_their_events(tmp_path):
    old_store(tmp_path)
    database = await Database.open(tmp_path)
    try:
        assert await database.version() == LATEST_VERSION
        rows = await RunStore(database).by_ids(["run_a", "run_b", "run_c"])
        a, b, c = rows["run_a"], rows["run_b"], rows["run_c"]
        assert (a.input_tokens, a.output_tokens, a.requests) == (300, 30, 2)
        assert (b.input_tokens, b.output_tokens, b.requests) == (1000, 1, 1)
        assert (a.graph_run_id, b.graph_run_id, c.graph_run_id) == (None, "gr_1", None)

        usage = UsageStore(database)
        total = await usage.total(since=start_of_day())
        assert (total.runs, total.tokens, total.seconds) == (3, 1386, 7.5)
        assert (await usage.total(node_id="rm_a")).tokens == 330
        # The graph run: its step's run and the run that step set off.
        assert (await usage.total(graph_run_id="gr_1")).tokens == 1056
        assert await usage.graph_of("co_2") == "gr_1"
        by_node = await usage.grouped("node")
        assert [(key, spent.tokens) for key, spent in by_node] == [
            ("rm_b", 1001),
            ("rm_a", 330),
            ("rm_c", 55),
        ]
        (graph,) = await usage.grouped("graph")
        assert (graph[0], graph[1].tokens, graph[1].runs) == ("gr_1", 1056, 2)
        (day,) = await usage.grouped("day")
        assert day[1].tokens == 1386
    finally:
        await database.close()
