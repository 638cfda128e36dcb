"""Reconciliation and change events on a real project (DESIGN §7, issue 3 §6-§7).

A project is started on a temporary folder, closed, changed on disk and started
again: exactly the changed nodes are announced, new files are not, custom
subscriptions come back (except those of vanished nodes), and runs in flight
when the process stopped are marked interrupted. In the editor, opening a file
announces nothing; an edit announces exactly the definitions whose text changed.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest
from remora_core.events.models import ToolCalled
from remora_core.events.subscription_store import SubscriptionStore
from remora_core.events.subscriptions import Pattern
from remora_core.index.code_index import CodeIndex
from remora_core.index.documents import TextChange
from remora_core.index.indexer import Scan, scan, stat_sources
from remora_core.model import AgentStatus, NodeStatus
from remora_core.text import PositionEncoding

from tests.core.swarm_support import (
    all_events,
    eventually,
    node,
    of_type,
    quiet,
    settings,
)
from tests.project_harness import Project

A_SOURCE = """\
def alpha():
    return 1


def beta():
    return 2


class Gamma:
    def m(self):
        return 3
"""

B_SOURCE = """\
def other():
    return "other"
"""


@dataclass
class Turn:
    agent: str
    types: list[str]


class Harness:
    """Starts and restarts a project on one folder, recording agents' turns."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.turns: list[Turn] = []
        self.project: Project | None = None

    async def record(self, turn) -> str:
        self.turns.append(Turn(turn.agent_id, [s.event.type for s in turn.events]))
        return "seen"

    async def start(self) -> Project:
        self.project = Project(self.root, settings(), turn_function=self.record)
        await self.project.start()
        await quiet(self.project.swarm)
        return self.project

    async def stop(self) -> None:
        if self.project is not None:
            await self.project.close()
            self.project = None

    async def restart(self) -> Project:
        await self.stop()
        return await self.start()

    def write(self, path: str, text: str) -> None:
        (self.root / path).parent.mkdir(parents=True, exist_ok=True)
        (self.root / path).write_text(text, encoding="utf-8")

    def id(self, path: str, name: str) -> str:
        assert self.project is not None
        return node(self.project.graph, path, name).id


@pytest.fixture
async def harness(tmp_path):
    harness = Harness(tmp_path / "ws")
    harness.write("pkg/a.py", A_SOURCE)
    harness.write("b.py", B_SOURCE)
    yield harness
    await harness.stop()


async def events_after(project: Project, seq: int):
    return [s for s in await all_events(project.swarm) if s.seq > seq]


# ---- start-up ----------


async def test_a_first_index_announces_nothing(harness):
    project = await harness.start()
    assert len(list(project.graph.active())) > 5
    assert await all_events(project.swarm) == []
    assert harness.turns == []


async def test_a_restart_announces_exactly_what_changed_on_disk(harness):
    project = await harness.start()
    alpha = harness.id("pkg/a.py", "alpha")
    ids_before = {n.id for n in project.graph.active()}
    await harness.stop()

    harness.write("pkg/a.py", A_SOURCE.replace("return 1", "return 100"))
    harness.write("new.py", "def fresh():\n    pass\n")  # indexed for the first time
    project = await harness.start()

    events = await all_events(project.swarm)
    [changed] = of_type(events, "content_changed")
    assert (changed.path, changed.node_ids, changed.change) == (
        "pkg/a.py",
        (alpha,),
        "modified",
    )
    assert of_type(events, "topology_changed") == []
    assert {n.id for n in project.graph.active()} - ids_before == {
        project.graph.file_node("new.py").id,
        harness.id("new.py", "fresh"),
    }
    # alpha's agent follows its own node: it ran, and nobody else did.
    assert [(t.agent, t.types) for t in harness.turns] == [(alpha, ["content_changed"])]


async def test_a_restart_without_changes_announces_nothing(harness):
    await harness.start()
    project = await harness.restart()
    assert await all_events(project.swarm) == []


def _age(path: Path, seconds: float) -> None:
    """Set ``path``'s modification time ``seconds`` into the past."""
    when = path.stat().st_mtime_ns - int(seconds * 1e9)
    os.utime(path, ns=(when, when))


def _swap_keeping_stat(path: Path, old: str, new: str) -> None:
    """Edit ``path`` without changing its size or modification time."""
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert len(old) == len(new)
    path.write_text(text.replace(old, new), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


async def test_a_restart_reads_the_files_whose_stat_changed(harness):
    """A file edited while the server was stopped is read again, and so is one
    replaced keeping its size and old mtime (``cp -p``, ``tar x``): its change
    time and inode tell.
    """
    for path in ("pkg/a.py", "b.py"):
        _age(harness.root / path, 3600)
    await harness.start()
    await harness.stop()

    harness.write("pkg/a.py", A_SOURCE.replace("return 1", "return 7"))
    _swap_keeping_stat(harness.root / "b.py", "def other", "def ather")
    project = await harness.start()
    [changed] = of_type(await all_events(project.swarm), "content_changed")
    assert changed.path == "pkg/a.py"
    assert [n.name for n in project.graph.file_nodes("b.py")] == ["ather"]


def test_a_file_whose_stat_is_unchanged_keeps_its_stored_hash_unread(tmp_path):
    """Like ``git status``: an unchanged stat vouches for the stored content
    hash, so a big project's warm start reads nothing.
    """
    (tmp_path / "m.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    _age(tmp_path / "m.py", 3600)
    file_filter = CodeIndex(tmp_path, settings()).filter
    stat = stat_sources(tmp_path, file_filter)["m.py"]
    vouched = scan(tmp_path, file_filter, 10_000, lambda: {"m.py": (stat, "stored")})
    assert vouched.hashes == {"m.py": "stored"}  # not read
    assert vouched.stat_to_keep("m.py") == stat

    os.utime(tmp_path / "m.py")  # touched: read, and its real hash taken
    touched = scan(tmp_path, file_filter, 10_000, lambda: {"m.py": (stat, "stored")})
    assert touched.hashes["m.py"] != "stored"
    assert touched.stat_to_keep("m.py") is None  # modified just now: racy


def test_a_file_modified_near_the_scan_is_not_vouched_for():
    """A file written within the filesystem's timestamp tick of the scan could
    be written again keeping every time and its size: it is read next time.
    """
    now = 1_800_000_000 * 10**9
    old, recent = now - 60 * 10**9, now - 10**9
    found = Scan(
        {"old.py": "h", "recent.py": "h"},
        {},
        {"old.py": (old, 10, recent, 1), "recent.py": (recent, 10, recent, 2)},
        now,
    )
    assert found.stat_to_keep("old.py") == (old, 10, recent, 1)
    assert found.stat_to_keep("recent.py") is None


async def test_a_store_without_stats_learns_them_at_the_next_start(harness):
    """A store written before stats were kept (or a file touched without a
    change) reads the files once more, then keeps their stats.
    """
    for path in ("pkg/a.py", "b.py"):
        _age(harness.root / path, 3600)
    await harness.start()
    await harness.stop()
    database = harness.root / ".remora" / "remora.db"
    with sqlite3.connect(database) as db:
        db.execute("UPDATE files SET mtime_ns = NULL, size = NULL")
    await harness.start()
    await harness.stop()
    with sqlite3.connect(database) as db:
        rows = db.execute(
            "SELECT path FROM files WHERE mtime_ns IS NOT NULL AND size IS NOT NULL"
            " AND ctime_ns IS NOT NULL AND inode IS NOT NULL"
        ).fetchall()
    assert sorted(path for (path,) in rows) == ["b.py", "pkg/a.py"]


async def test_added_and_removed_definitions_are_topology_changes(harness):
    await harness.start()
    beta = harness.id("pkg/a.py", "beta")
    gamma = harness.id("pkg/a.py", "Gamma")
    await harness.stop()

    without_beta = A_SOURCE.replace("def beta():\n    return 2\n\n\n", "")
    harness.write("pkg/a.py", without_beta + "\n\ndef delta(x):\n    return x * 4\n")
    project = await harness.start()

    delta = harness.id("pkg/a.py", "delta")
    events = await all_events(project.swarm)
    [topology] = of_type(events, "topology_changed")
    assert topology.path == "pkg/a.py"
    assert (topology.added, topology.orphaned) == ((delta,), (beta,))
    assert of_type(events, "content_changed") == []
    assert project.graph.get(beta).status is NodeStatus.ORPHANED
    assert project.graph.get(gamma).status is NodeStatus.ACTIVE


async def test_a_file_deleted_while_stopped_orphans_its_nodes(harness):
    await harness.start()
    other = harness.id("b.py", "other")
    await harness.stop()
    (harness.root / "b.py").unlink()
    project = await harness.start()
    [topology] = of_type(await all_events(project.swarm), "topology_changed")
    assert topology.path == "b.py"
    assert other in topology.orphaned
    assert project.graph.get(other).status is NodeStatus.ORPHANED


# ---- subscriptions across restarts ----------


async def test_custom_subscriptions_survive_a_restart(harness):
    project = await harness.start()
    alpha = harness.id("pkg/a.py", "alpha")
    kept = await project.swarm.subscribe(alpha, Pattern(event_types=("tool_called",)))

    project = await harness.restart()
    assert kept in project.swarm.index.by_id
    assert project.swarm.index.by_id[kept].agent_id == alpha
    await project.swarm.emit(ToolCalled(tool="grep"))
    await quiet(project.swarm)
    assert [(t.agent, t.types) for t in harness.turns] == [(alpha, ["tool_called"])]

    # Unsubscribing is remembered too.
    assert await project.swarm.unsubscribe(alpha, kept)
    project = await harness.restart()
    assert kept not in project.swarm.index.by_id


async def test_subscriptions_of_nodes_that_vanished_while_stopped_are_dropped(harness):
    project = await harness.start()
    alpha = harness.id("pkg/a.py", "alpha")
    beta = harness.id("pkg/a.py", "beta")
    other = harness.id("b.py", "other")
    pattern = Pattern(event_types=("tool_called",))
    kept = await project.swarm.subscribe(alpha, pattern)
    of_beta = await project.swarm.subscribe(beta, pattern)
    of_other = await project.swarm.subscribe(other, pattern)
    await harness.stop()

    harness.write("pkg/a.py", A_SOURCE.replace("def beta():\n    return 2\n", ""))
    (harness.root / "b.py").unlink()
    project = await harness.start()
    assert set(project.swarm.index.by_id) == {kept}
    stored = await SubscriptionStore(project.database).load()
    assert {s.id for s in stored} == {kept}, "dropped from the store as well"
    await project.swarm.emit(ToolCalled(tool="grep"))
    await quiet(project.swarm)
    assert [t.agent for t in harness.turns] == [alpha]
    assert of_type(await all_events(project.swarm), "trigger_refused") == []
    assert {of_beta, of_other}.isdisjoint(project.swarm.index.by_id)


async def test_a_file_no_longer_indexable_loses_its_agents(harness):
    """A file that turns binary (or too large) is skipped: its nodes vanish like
    a deleted file's — announced, and their subscriptions dropped.
    """
    project = await harness.start()
    other = harness.id("b.py", "other")
    pattern = Pattern(event_types=("tool_called",))
    await project.swarm.subscribe(other, pattern)
    await harness.stop()
    (harness.root / "b.py").write_bytes(B_SOURCE.encode() + b"\x00")
    project = await harness.start()
    [topology] = of_type(await all_events(project.swarm), "topology_changed")
    assert (topology.path, topology.orphaned) == ("b.py", (other,))
    assert project.swarm.index.of_agent(other) == []
    await project.swarm.emit(ToolCalled(tool="grep"))
    await quiet(project.swarm)
    assert of_type(await all_events(project.swarm), "trigger_refused") == []

    # The same while running: the file is fixed, then broken again.
    harness.write("b.py", B_SOURCE)
    await project.disk.files_changed(changed=["b.py"])
    assert project.graph.get(other).status is NodeStatus.ACTIVE
    await project.swarm.subscribe(other, pattern)
    seq = project.swarm.events.last_seq
    (harness.root / "b.py").write_bytes(b"\x00")
    await project.disk.files_changed(changed=["b.py"])
    [topology] = of_type(await events_after(project, seq), "topology_changed")
    assert topology.orphaned == (other,)
    assert project.swarm.index.of_agent(other) == []


# ---- interrupted runs ----------


async def test_runs_in_flight_at_a_stop_are_marked_interrupted(harness):
    project = await harness.start()
    alpha = harness.id("pkg/a.py", "alpha")
    # As if the process died during a turn: a run left 'running', the agent busy.
    await project.swarm.runs.start("run_x", alpha, None, "co_crash")
    await project.store.set_agent_statuses({alpha: AgentStatus.RUNNING})
    seq = project.swarm.events.last_seq
    await harness.stop()

    project = await harness.start()
    assert await project.swarm.runs.status("run_x") == "interrupted"
    [interrupted] = of_type(await events_after(project, seq), "run_interrupted")
    assert (interrupted.agent_id, interrupted.run_id) == (alpha, "run_x")
    assert interrupted.correlation_id == "co_crash"
    assert project.graph.get(alpha).agent_status is AgentStatus.IDLE

    # Marked once: the next start finds nothing to interrupt.
    seq = project.swarm.events.last_seq
    project = await harness.restart()
    assert of_type(await events_after(project, seq), "run_interrupted") == []


async def test_a_turn_killed_with_its_process_is_interrupted_on_the_next_start(harness):
    """Closer to a crash: the turn is running when the store simply goes away."""
    project = await harness.start()
    alpha = harness.id("pkg/a.py", "alpha")

    async def stuck(turn):
        await asyncio.Event().wait()

    project.swarm.turn_function = stuck
    await project.swarm.subscribe(alpha, Pattern(event_types=("tool_called",)))
    await project.swarm.emit(ToolCalled(tool="x"))
    await eventually(lambda: project.swarm.runner.actors[alpha].run_id is not None)
    run_id = project.swarm.runner.actors[alpha].run_id
    await eventually(
        lambda: project.swarm.runs.status(run_id), timeout=10
    )  # the run row is committed
    # No orderly shutdown: the connection is closed under the running turn.
    assert project.database is not None
    await project.database.close()
    harness.project = None

    again = Project(harness.root, settings(), turn_function=harness.record)
    await again.start()
    try:
        assert await again.swarm.runs.status(run_id) == "interrupted"
        interrupted = await again.swarm.events.of_type("run_interrupted")
        assert [(e.event.agent_id, e.event.run_id) for e in interrupted] == [
            (alpha, run_id)
        ]
    finally:
        await again.close()
        # The dead process's leftovers: its store is gone, so this writes nothing.
        await project.swarm.close()
        await project.tasks.close()
        project.index.extractor.close()


# ---- the editor ----------


async def settled(project: Project) -> None:
    """Wait until no debounce timer or settle task is pending."""
    await eventually(
        lambda: not project.documents_sync.timers and len(project.tasks) == 0
    )
    await quiet(project.swarm)


def position_of(text: str, needle: str) -> tuple[int, int]:
    before = text[: text.index(needle)]
    return before.count("\n"), len(before.rsplit("\n", 1)[-1])


async def test_opening_a_document_announces_nothing(harness):
    project = await harness.start()
    project.open_document("pkg/a.py", 1, A_SOURCE)
    # Even a buffer that differs from the disk (unsaved changes restored by the
    # editor) is the baseline, not a change.
    project.open_document("b.py", 1, B_SOURCE.replace("other", "another"))
    await settled(project)
    await asyncio.sleep(0.05)
    await settled(project)
    assert await all_events(project.swarm) == []
    assert harness.turns == []


async def test_an_edit_announces_exactly_the_edited_function(harness):
    project = await harness.start()
    alpha = harness.id("pkg/a.py", "alpha")
    project.open_document("pkg/a.py", 1, A_SOURCE)
    await settled(project)

    line, column = position_of(A_SOURCE, "1\n")
    project.change_document(
        "pkg/a.py",
        2,
        [TextChange("41", (line, column), (line, column + 1))],
        PositionEncoding.UTF16,
    )
    await eventually(
        lambda: project.swarm.events.last_seq > 0 and not project.documents_sync.timers
    )
    await settled(project)
    events = await all_events(project.swarm)
    [changed] = of_type(events, "content_changed")
    assert (changed.path, changed.node_ids) == ("pkg/a.py", (alpha,))
    assert of_type(events, "topology_changed") == []
    assert [(t.agent, t.types) for t in harness.turns] == [(alpha, ["content_changed"])]


async def test_a_method_edit_changes_the_method_and_its_class(harness):
    project = await harness.start()
    method = harness.id("pkg/a.py", "Gamma.m")
    gamma = harness.id("pkg/a.py", "Gamma")
    project.open_document("pkg/a.py", 1, A_SOURCE)
    await settled(project)
    line, column = position_of(A_SOURCE, "3\n")
    project.change_document(
        "pkg/a.py",
        2,
        [TextChange("33", (line, column), (line, column + 1))],
        PositionEncoding.UTF16,
    )
    await eventually(lambda: project.swarm.events.last_seq > 0)
    await settled(project)
    [changed] = of_type(await all_events(project.swarm), "content_changed")
    assert set(changed.node_ids) == {method, gamma}
    assert sorted(t.agent for t in harness.turns) == sorted([method, gamma])


async def test_quick_edits_are_announced_once_after_the_quiet_period(harness):
    project = await harness.start()
    alpha = harness.id("pkg/a.py", "alpha")
    beta = harness.id("pkg/a.py", "beta")
    project.open_document("pkg/a.py", 1, A_SOURCE)
    await settled(project)
    text = A_SOURCE
    for version, (old, new) in enumerate(
        [
            ("return 1", "return 10"),
            ("return 10", "return 11"),
            ("return 2", "return 22"),
        ],
        start=2,
    ):
        text = text.replace(old, new)
        project.change_document(
            "pkg/a.py", version, [TextChange(text)], PositionEncoding.UTF16
        )
    await eventually(lambda: project.swarm.events.last_seq > 0)
    await settled(project)
    [changed] = of_type(await all_events(project.swarm), "content_changed")
    assert set(changed.node_ids) == {alpha, beta}

    # Undoing the edits is a change again (against what was last announced).
    project.change_document(
        "pkg/a.py", 9, [TextChange(A_SOURCE)], PositionEncoding.UTF16
    )
    await eventually(
        lambda: len(project.documents_sync.timers) == 0 and len(project.tasks) == 0
    )
    await settled(project)
    changes = of_type(await all_events(project.swarm), "content_changed")
    assert len(changes) == 2 and set(changes[1].node_ids) == {alpha, beta}


async def test_a_file_changed_on_disk_while_running_is_announced(harness):
    project = await harness.start()
    other = harness.id("b.py", "other")
    harness.write("b.py", B_SOURCE.replace('"other"', '"changed"'))
    await project.disk.files_changed(changed=["b.py"])
    await quiet(project.swarm)
    [changed] = of_type(await all_events(project.swarm), "content_changed")
    assert (changed.path, changed.node_ids) == ("b.py", (other,))
    assert [t.agent for t in harness.turns] == [other]
