"""The store under stress, engine level: one writer, a full disk, a deleted file.

- One writer per store: a second opener of a store finds it owned, reads it and
  writes nothing; a store that nobody owns any more can be taken.
- A full disk (SQLite's ``max_page_count`` through ``max_bytes``, the file
  grown past it by another connection, as another program filling the disk
  would) in the middle of a burst that fills the two-deep event pipeline:
  every event is still delivered, in order, each ``seq`` once; the failed
  write and every later one are unpersisted, nothing lands after the failure,
  and the person is told once.
- The store's file deleted (``rm -rf .remora``) or replaced while open: the
  owner rebuilds it from its connection, with every row, and goes on writing
  to the new file; a file found in the way is moved aside, not lost. A
  follower whose owner died before rebuilding it saves what it still reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sqlite3
import time

from remora_core.events.models import HumanChat
from remora_core.events.store import EventStore
from remora_core.model import ProposalStatus
from remora_core.store import Database, rebuild
from remora_core.store.migrations import LATEST_VERSION
from remora_core.store.ownership import OwnerInfo, StoreLock
from remora_core.store.rebuild import rebuild_if_gone

from tests.core.swarm_support import node, settings
from tests.project_harness import Project


def chat(n: int) -> HumanChat:
    return HumanChat(to_agent="rm_a", message=f"message {n} " + "x" * 300)


def rows(path, sql):
    with contextlib.closing(sqlite3.connect(path)) as db:
        return db.execute(sql).fetchall()


# ---- one writer ----------------------------------------------------------------------


async def test_a_second_opener_finds_the_store_owned_and_only_reads(tmp_path):
    owner = await Database.open(tmp_path)
    try:
        events = EventStore(owner)
        await events.open()
        await events.append(chat(1))
        await events.close()

        second = await Database.open(tmp_path)
        try:
            assert second.read_only and second.available and not second.writable
            assert second.owner == OwnerInfo.read(tmp_path / ".remora" / "owner.lock")
            assert second.owner.pid == os.getpid()
            assert await second.version() == LATEST_VERSION
            # It reads the owner's log; its own events stay in memory.
            follower = EventStore(second)
            await follower.open()
            assert follower.last_seq == 1
            assert [s.seq for s in await follower.of_type("human_chat")] == [1]
            mine = await follower.append(chat(2))
            assert mine.persisted is False and mine.seq == 2
            assert mine.to_json()["persisted"] is False
            assert await second.transaction(lambda db: 1, "a write") is None
            assert second.problem is None  # skipping writes is not a failure
        finally:
            await second.close()
    finally:
        await owner.close()
    assert rows(owner.path, "SELECT seq FROM events") == [(1,)]
    # Nobody owns it now: the next opener writes.
    third = await Database.open(tmp_path)
    try:
        assert third.writable and third.owner is None
    finally:
        await third.close()


async def test_the_lock_is_released_when_its_holder_closes(tmp_path):
    directory = tmp_path / ".remora"
    directory.mkdir()
    lock = StoreLock.claim(directory)
    assert isinstance(lock, StoreLock)
    assert isinstance(StoreLock.claim(directory), OwnerInfo)
    lock.release()
    again = StoreLock.claim(directory)
    assert isinstance(again, StoreLock)
    assert again.still_held()
    (directory / "owner.lock").unlink()
    assert not again.still_held()
    again.release()


# ---- a full disk under a full pipeline -----------------------------------------------


async def test_a_full_disk_mid_burst_keeps_the_pipeline_in_order(tmp_path):
    told: list[str] = []
    database = await Database.open(
        tmp_path, on_problem=told.append, max_bytes=512 * 1024
    )
    events = EventStore(database)
    delivered: list = []
    events.on_commit = delivered.extend
    await events.open()
    try:
        before = [await events.append(chat(n)) for n in range(5)]
        assert all(s.persisted for s in before)
        # Another program fills the disk: the file grows past the limit.
        with contextlib.closing(sqlite3.connect(database.path, timeout=30)) as db:
            db.execute("CREATE TABLE someone_elses (data BLOB)")
            db.execute("INSERT INTO someone_elses VALUES (zeroblob(1000000))")
            db.commit()
        # A burst: many batches, two of them in the database thread at once.
        burst = [chat(n) for n in range(5, 400)]
        futures = []
        for n, event in enumerate(burst):
            futures.append(events.enqueue(event))
            if n % 7 == 0:
                await asyncio.sleep(0)  # let batches start in between
        stored = await asyncio.gather(*futures)
    finally:
        await events.close()
        await database.close()

    assert len(told) == 1 and "disk is full" in told[0]
    assert [s.event.id for s in stored] == [e.id for e in burst]
    everything = before + list(stored)
    seqs = [s.seq for s in everything]
    assert seqs == list(range(1, len(everything) + 1))  # no gap, no duplicate
    flags = [s.persisted for s in everything]
    assert False in flags
    lost = flags.index(False)
    assert all(flags[:lost]) and not any(flags[lost:])  # nothing after a failure
    assert [s.seq for s in delivered] == seqs  # published in order, all of them
    on_disk = rows(database.path, "SELECT seq, id FROM events ORDER BY seq")
    assert on_disk == [(s.seq, s.event.id) for s in everything[:lost]]
    assert rows(database.path, "PRAGMA integrity_check") == [("ok",)]


async def test_no_write_lands_after_one_that_failed(tmp_path):
    """A batch that needs new pages fails; the batch right behind it, already
    in the database thread, would fit in the pages there are — it must not be
    written (it would take the failed event's place in the log).
    """
    database = await Database.open(tmp_path, max_bytes=512 * 1024)
    events = EventStore(database)
    delivered: list = []
    events.on_commit = delivered.extend
    await events.open()
    try:
        await events.append(chat(0))
        with contextlib.closing(sqlite3.connect(database.path, timeout=30)) as db:
            db.execute("CREATE TABLE someone_elses (data BLOB)")
            db.execute("INSERT INTO someone_elses VALUES (zeroblob(1000000))")
            db.commit()
        big = events.enqueue(HumanChat(to_agent="rm_a", message="x" * 50_000))
        await asyncio.sleep(0)  # its batch starts
        small = events.enqueue(HumanChat(to_agent="rm_a", message="hi"))
        first, second = await asyncio.gather(big, small)
    finally:
        await events.close()
        await database.close()
    assert (first.seq, second.seq) == (2, 3)
    assert not first.persisted and not second.persisted
    assert [s.seq for s in delivered] == [1, 2, 3]
    assert rows(database.path, "SELECT seq FROM events") == [(1,)]


# ---- the file deleted or replaced while open -----------------------------------------


async def test_a_deleted_store_is_rebuilt_with_every_row(tmp_path):
    database = await Database.open(tmp_path)
    events = EventStore(database)
    await events.open()
    try:
        for n in range(10):
            await events.append(chat(n))
        shutil.rmtree(tmp_path / ".remora")
        await events.append(chat(10))  # lands in the deleted file ...
        told = await rebuild_if_gone(database)
        assert told is not None and "deleted" in told and "rebuilt" in told
        assert await rebuild_if_gone(database) is None  # once
        await events.append(chat(11))  # ... and this one in the new file
        assert database.lock is not None and database.lock.still_held()
        assert isinstance(StoreLock.claim(tmp_path / ".remora"), OwnerInfo)
    finally:
        await events.close()
        await database.close()
    assert [
        r[0] for r in rows(database.path, "SELECT seq FROM events ORDER BY seq")
    ] == list(range(1, 13))
    assert (tmp_path / ".remora" / ".gitignore").read_text() == "*\n"


async def test_overlapping_checks_rebuild_a_deleted_store_once(tmp_path):
    """The periodic check and the one at close can overlap (the rebuild
    waits in the database thread behind other writes): the store is rebuilt
    once, told once as deleted, and the rebuilt file is never taken for
    someone else's and moved aside (seen under load: "was replaced … moved
    to remora.db.replaced-…").
    """
    database = await Database.open(tmp_path)
    events = EventStore(database)
    await events.open()
    try:
        for n in range(5):
            await events.append(chat(n))
        shutil.rmtree(tmp_path / ".remora")
        # The database thread is busy (a shutdown's writes) when both look.
        busy = asyncio.ensure_future(database._in_thread(lambda db: time.sleep(0.3)))
        periodic = asyncio.ensure_future(rebuild_if_gone(database))
        await asyncio.sleep(0.05)
        at_close = asyncio.ensure_future(rebuild_if_gone(database))
        told = await asyncio.gather(periodic, at_close)
        await busy
        await events.append(chat(5))
    finally:
        await events.close()
        await database.close()
    messages = [m for m in told if m is not None]
    assert len(messages) == 1 and "was deleted" in messages[0], told
    assert not [p for p in (tmp_path / ".remora").iterdir() if "replaced" in p.name]
    assert [
        r[0] for r in rows(database.path, "SELECT seq FROM events ORDER BY seq")
    ] == list(range(1, 7))


async def test_a_rebuild_under_way_when_the_project_closes_is_still_told(
    tmp_path, monkeypatch
):
    """The periodic check is cancelled at close (its task set is), maybe while
    its rebuild waits in the database thread: the rebuild still ends, the
    check at close finds nothing left to do, and the person is told once
    (seen under load: ``remora ask`` said nothing of a deleted store).
    """
    monkeypatch.setattr(rebuild, "STORE_CHECK_S", 0.01)
    database = await Database.open(tmp_path)
    events = EventStore(database)
    await events.open()
    told: list[str] = []
    try:
        await events.append(chat(0))
        shutil.rmtree(tmp_path / ".remora")
        busy = asyncio.ensure_future(database._in_thread(lambda db: time.sleep(0.4)))
        keeper = asyncio.ensure_future(
            rebuild.keep_store(database, lambda: False, told.append)
        )
        await asyncio.sleep(0.1)  # its rebuild waits behind ``busy``
        keeper.cancel()  # the project closes
        assert await rebuild_if_gone(database) is None  # the check at close
        await busy
        await asyncio.sleep(0)  # the finished check's callback
    finally:
        await events.close()
        await database.close()
    assert len(told) == 1 and "was deleted" in told[0], told
    assert rows(database.path, "SELECT seq FROM events") == [(1,)]


async def test_a_replaced_store_is_moved_aside_and_rebuilt(tmp_path):
    database = await Database.open(tmp_path)
    events = EventStore(database)
    await events.open()
    try:
        await events.append(chat(1))
        foreign = tmp_path / "foreign.db"
        with contextlib.closing(sqlite3.connect(foreign)) as db:
            db.execute("CREATE TABLE theirs (x)")
            db.commit()
        os.replace(foreign, database.path)
        told = await rebuild_if_gone(database)
        assert told is not None and "replaced" in told
        moved = [p for p in (tmp_path / ".remora").iterdir() if ".replaced-" in p.name]
        assert len(moved) == 1 and str(moved[0]) in told
        # Our own journal was not left next to their file (it would be replayed).
        assert not moved[0].with_name(moved[0].name + "-wal").exists()
        assert rows(moved[0], "SELECT name FROM sqlite_master") == [("theirs",)]
        await events.append(chat(2))
    finally:
        await events.close()
        await database.close()
    assert rows(database.path, "SELECT seq FROM events ORDER BY seq") == [(1,), (2,)]
    assert rows(database.path, "PRAGMA integrity_check") == [("ok",)]


# ---- a follower whose owner died with the store deleted ------------------------------


async def test_a_follower_saves_the_store_its_dead_owner_never_rebuilt(tmp_path):
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("def alpha():\n    return 1\n", "utf-8")
    owner = Project(root, settings())
    await owner.start()
    alpha = node(owner.graph, "pkg/a.py", "alpha").id
    await owner.swarm.emit(HumanChat(to_agent=alpha, message="remember"))
    gone = asyncio.Event()
    follower = Project(root, settings(), on_owner_gone=gone.set)
    await follower.start()
    try:
        assert follower.following
        assert node(follower.graph, "pkg/a.py", "alpha").id == alpha
        # The store is deleted, and its owner dies before it could rebuild it
        # (closing its watchers first stands for the death).
        await owner.watchers.close()
        shutil.rmtree(root / ".remora")
        await owner.close()
        await asyncio.wait_for(gone.wait(), 30)
    finally:
        await follower.close()
    store = root / ".remora" / "remora.db"
    assert rows(store, "SELECT id FROM nodes WHERE qualified_name = 'alpha'") == [
        (alpha,)
    ]
    assert ("human_chat",) in rows(store, "SELECT type FROM events")
    assert rows(store, "PRAGMA integrity_check") == [("ok",)]


# ---- the store deleted just before a stop --------------------------------------------


async def test_a_store_deleted_just_before_a_stop_keeps_ids_and_proposals(shop):
    """Issue 25 class 8: ``rm -rf .remora`` then a normal stop within the
    second (before the periodic check): the close checks the store as the
    last thing it does, rebuilds it, and says so; a restart has the same ids
    and the pending proposal.
    """
    await shop.start(model={"protocol": "tools"})
    tax = shop.id("tax")
    shop.server.reply_tool_call(
        "rewrite_self", {"new_source": "def tax(amount, rate=0.2):\n    return 0"}
    )
    shop.server.reply_text("Done.")
    await shop.ask("tax", "Make it free.")
    app = shop.project.app
    pending = [p.id for p in app.proposals.list(status=ProposalStatus.PENDING)]
    assert len(pending) == 1

    shutil.rmtree(shop.root / ".remora")
    await shop.stop()
    assert any("was deleted while the server ran" in m for m in shop.told)

    await shop.start(model={"protocol": "tools"})
    assert shop.id("tax") == tax
    app = shop.project.app
    assert [p.id for p in app.proposals.list(status=ProposalStatus.PENDING)] == pending
