"""The event log: persisted first, ``seq`` rising, group-committed, queryable.

Every test runs twice: on a real SQLite store and in memory-only mode (a project
without a usable database).
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from remora_core.events.models import (
    AgentCompleted,
    AgentMessage,
    ContentChanged,
    HumanChat,
)
from remora_core.events.store import EventStore
from remora_core.store import Database
from remora_core.store.runs import RunsFinished, RunStarted, RunStore


@pytest.fixture(params=["sqlite", "memory"])
async def store(request, tmp_path):
    database = await Database.open(tmp_path) if request.param == "sqlite" else None
    events = EventStore(database)
    await events.open()
    yield events
    await events.close()
    if database is not None:
        await database.close()


def chat(n: int, to: str = "rm_a", correlation: str | None = None) -> HumanChat:
    extra = {"correlation_id": correlation} if correlation else {}
    return HumanChat(to_agent=to, message=f"message {n}", **extra)


async def test_seq_rises_strictly(store):
    stored = [await store.append(chat(n)) for n in range(20)]
    seqs = [s.seq for s in stored]
    assert seqs == sorted(set(seqs))
    assert seqs[0] >= 1
    assert store.last_seq == seqs[-1]
    replayed = await store.since(0)
    assert [s.event for s in replayed] == [s.event for s in stored]
    assert [s.seq for s in replayed] == seqs


async def test_concurrent_appends_are_all_kept_in_call_order(store):
    events = [chat(n, to=f"rm_{n % 7}") for n in range(500)]
    stored = await asyncio.gather(*(store.append(e) for e in events))
    seqs = [s.seq for s in stored]
    assert len(set(seqs)) == 500
    assert seqs == sorted(seqs), "seq order is the order append was called in"
    assert [s.event.id for s in stored] == [e.id for e in events]
    replayed = await store.since(0)
    assert [(s.seq, s.event.id) for s in replayed] == [
        (s.seq, s.event.id) for s in stored
    ]


def count_transactions(database: Database) -> list[int]:
    """Count ``database``'s transactions from now on (in the list's one item)."""
    count = [0]
    real = database.transaction

    async def counting(work, what):
        count[0] += 1
        return await real(work, what)

    database.transaction = counting  # type: ignore[method-assign]
    return count


async def test_concurrent_appends_are_group_committed(tmp_path):
    database = await Database.open(tmp_path)
    transactions = count_transactions(database)
    store = EventStore(database)
    await store.open()
    try:
        await asyncio.gather(*(store.append(chat(n)) for n in range(300)))
        assert transactions[0] < 10, (
            f"{transactions[0]} commits for 300 concurrent events"
        )
    finally:
        await database.close()


async def test_events_survive_reopening(tmp_path):
    database = await Database.open(tmp_path)
    store = EventStore(database)
    await store.open()
    written = await asyncio.gather(*(store.append(chat(n)) for n in range(50)))
    await store.close()
    await database.close()

    database = await Database.open(tmp_path)
    try:
        again = EventStore(database)
        await again.open()
        assert again.last_seq == written[-1].seq
        replayed = await again.since(0)
        assert [(s.seq, s.event) for s in replayed] == [
            (s.seq, s.event) for s in written
        ]
        later = await again.append(chat(99))
        assert later.seq == written[-1].seq + 1
    finally:
        await database.close()


async def test_replay_since_a_seq(store):
    stored = [await store.append(chat(n)) for n in range(30)]
    middle = stored[9].seq
    replayed = await store.since(middle)
    assert [s.seq for s in replayed] == [s.seq for s in stored[10:]]
    assert await store.since(stored[-1].seq) == []
    limited = await store.since(middle, limit=5)
    assert [s.seq for s in limited] == [s.seq for s in stored[10:15]]


async def test_queries_by_node_type_and_correlation(store):
    await store.append(chat(0, to="rm_a", correlation="co_1"))
    await store.append(
        AgentMessage(
            from_agent="rm_a", to_agent="rm_b", message="x", correlation_id="co_1"
        )
    )
    await store.append(
        ContentChanged(path="f.py", node_ids=("rm_b", "rm_c"), correlation_id="co_2")
    )
    await store.append(AgentCompleted(agent_id="rm_a", correlation_id="co_1"))
    await store.append(chat(1, to="rm_c", correlation="co_3"))

    about_a = await store.for_node("rm_a")
    assert [s.event.type for s in about_a] == [
        "agent_completed",
        "agent_message",
        "human_chat",
    ], "newest first"
    about_b = await store.for_node("rm_b")
    assert [s.event.type for s in about_b] == ["content_changed", "agent_message"]
    assert [s.event.type for s in await store.for_node("rm_c")] == [
        "human_chat",
        "content_changed",
    ]
    assert await store.for_node("rm_nobody") == []
    assert len(await store.for_node("rm_a", limit=2)) == 2

    chats = await store.of_type("human_chat")
    assert [s.event.message for s in chats] == ["message 1", "message 0"]
    assert await store.of_type("agent_failed") == []

    cascade = await store.for_correlation("co_1")
    assert [s.event.type for s in cascade] == [
        "human_chat",
        "agent_message",
        "agent_completed",
    ], "oldest first"
    assert [s.seq for s in cascade] == sorted(s.seq for s in cascade)


async def test_append_many_keeps_order(store):
    events = [chat(n) for n in range(10)]
    stored = await store.append_many(events)
    assert [s.event for s in stored] == events
    assert [s.seq for s in stored] == list(range(stored[0].seq, stored[0].seq + 10))


async def test_a_cancelled_write_leaves_the_store_usable(tmp_path):
    database = await Database.open(tmp_path)
    store = EventStore(database)
    await store.open()
    release = threading.Event()
    try:

        def insert(db):
            db.execute(
                "INSERT INTO runs (id, node_id, status, started_at) "
                "VALUES ('run_cancelled', 'rm_a', 'running', 0)"
            )

        # The database thread is busy; a write cancelled while it waits for its
        # turn is never made ...
        busy = asyncio.ensure_future(database.read(lambda db: release.wait(5), "t"))
        write = asyncio.ensure_future(database.transaction(insert, "test"))
        await asyncio.sleep(0.01)
        write.cancel()
        with pytest.raises(asyncio.CancelledError):
            await write
        release.set()
        await busy
        # ... and later writes still reach the disk.
        stored = await store.append(chat(1))
        assert database.available, database.problem
        assert [s.seq for s in await store.since(0)] == [stored.seq]

        def count(db):
            return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]

        assert await database.read(count, "test") == 0
    finally:
        release.set()
        await database.close()


async def test_a_write_cancelled_once_under_way_lands_whole(tmp_path):
    database = await Database.open(tmp_path)
    started, release = threading.Event(), threading.Event()
    try:

        def insert(db):
            db.execute(
                "INSERT INTO runs (id, node_id, status, started_at) "
                "VALUES ('run_a', 'rm_a', 'running', 0)"
            )
            started.set()
            release.wait(5)
            db.execute(
                "INSERT INTO runs (id, node_id, status, started_at) "
                "VALUES ('run_b', 'rm_a', 'running', 0)"
            )

        write = asyncio.ensure_future(database.transaction(insert, "test"))
        while not started.is_set():
            await asyncio.sleep(0.001)
        write.cancel()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await write

        def ids(db):
            return [r[0] for r in db.execute("SELECT id FROM runs ORDER BY id")]

        assert await database.read(ids, "test") == ["run_a", "run_b"]
        assert await database.transaction(lambda db: None, "test") is None
        assert database.available, database.problem
    finally:
        release.set()
        await database.close()


async def test_a_duplicate_event_does_not_sink_the_events_written_with_it(tmp_path):
    database = await Database.open(tmp_path)
    store = EventStore(database)
    await store.open()
    try:
        first = chat(0)
        await store.append(first)
        others = [chat(n) for n in range(1, 6)]
        # The same event again (same id) lands in one group commit with others.
        results = await asyncio.gather(
            *(store.append(e) for e in [others[0], first, *others[1:]]),
            return_exceptions=True,
        )
        assert isinstance(results[1], Exception)
        kept = [r for r in results if not isinstance(r, BaseException)]
        assert [s.event for s in kept] == others
        replayed = await store.since(0)
        assert [s.event for s in replayed] == [first, *others]
        assert [s.seq for s in replayed] == list(range(1, 7)), "no gap, no repeat"
        assert database.available
    finally:
        await database.close()


async def test_bookkeeping_lingers_to_share_the_next_commit(tmp_path):
    database = await Database.open(tmp_path)
    transactions = count_transactions(database)
    store = EventStore(database)
    await store.open()
    try:
        lingering = [store.enqueue(chat(n), linger=True) for n in range(3)]
        last = await store.append(chat(3))
        assert transactions[0] == 1, "the lingering events rode with the awaited one"
        assert [(await f).seq for f in lingering] == [
            last.seq - 3,
            last.seq - 2,
            last.seq - 1,
        ]
        # Alone, a lingering event is still written, a moment later.
        alone = await asyncio.wait_for(store.enqueue(chat(4), linger=True), 5)
        assert transactions[0] == 2
        assert [s.event.id for s in await store.since(last.seq)] == [alone.event.id]
    finally:
        await database.close()


async def test_bookkeeping_is_written_with_its_events_in_the_order_made(tmp_path):
    """A run that starts and ends in one batch (cancelled before its
    ``agent_started`` was committed) is stored ended, whatever other run ended
    first in the same batch: the writes run in the order they were made.
    """
    database = await Database.open(tmp_path)
    runs = RunStore(database)
    await runs.start("run_other", "rm_b", None, None)
    store = EventStore(database)
    await store.open()
    try:
        store.also_write(RunsFinished(("run_other",), "completed", 2.0, None))
        store.also_write(RunStarted("run_a", "rm_a", None, None, 1.0))
        store.also_write(RunsFinished(("run_a",), "cancelled", 2.0, None))
        await store.append(chat(1))
        assert await runs.status("run_a") == "cancelled"
        assert await runs.status("run_other") == "completed"
    finally:
        await store.close()
        await database.close()
