"""A warm start reads each file's nodes from the store on first use.

``store/graph_loading.py`` attaches the graph to the store with the file nodes
only. Every question asked of such a graph, before anything else is loaded,
must get the answer a graph read whole gets: a node by id, the outline, the
node at a position, children, who calls a node and what it calls, who imports
a file, which ids are taken, how many nodes there are, which agents were
running; and a file re-parsed before it was ever loaded keeps its ids. Each
question below is asked of a fresh lazily attached graph, so it is the first
one that graph hears.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import TYPE_CHECKING

import pytest
from remora_core.config import validate
from remora_core.discovery.extract import extract_source
from remora_core.index.codegraph import CodeGraph
from remora_core.index.graph_loading import fill_graph, open_graph
from remora_core.index.updates import apply_extraction
from remora_core.model import AgentStatus, EdgeKind, NodeKind
from remora_core.store import Database, NodeStore
from remora_core.store.database import DB_NAME, STORE_DIR

from tests.project_harness import Project

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

CALLER = '''\
"""Calls into pkg from another file, so callers cross files."""

from pkg.models import Item, make_item
from pkg.service import Service


def build():
    return make_item("x")


class Report:
    def total(self, item):
        return Item.total(item, 2) + helper()

    def run(self):
        return self.total(build())


def helper():
    return Service
'''

SETTINGS = validate({"discovery": {"workers": 1}})[0]


async def _index(root: Path) -> None:
    project = Project(root, SETTINGS)
    try:
        await project.start()
    finally:
        await project.close()


@pytest.fixture
async def stored(workspace: Path) -> Path:
    """The basic project plus a calling module, indexed, with orphans (a
    function renamed since, a file deleted since) and an agent left running in
    its store.
    """
    (workspace / "pkg" / "report.py").write_text(CALLER, encoding="utf-8")
    await _index(workspace)
    renamed = CALLER.replace("def helper", "def helper_renamed").replace(
        "+ helper()", "+ helper_renamed()"
    )
    (workspace / "pkg" / "report.py").write_text(renamed, encoding="utf-8")
    (workspace / "scripts" / "tool.py").unlink()
    await _index(workspace)
    database = await Database.open(workspace)
    try:
        store = NodeStore(database)
        _, nodes, _ = await store.load()
        running = next(n for n in nodes if n.qualified_name == "Report.run")
        await store.set_agent_statuses({running.id: AgentStatus.RUNNING})
    finally:
        await database.close()
    return workspace


@pytest.fixture
async def graphs(stored: Path):
    """(the graph read whole, a maker of fresh lazily attached graphs)."""
    database = await Database.open(stored)
    made: list[CodeGraph] = []
    try:
        store = NodeStore(database)
        whole = CodeGraph()
        await open_graph(whole, store, lazy=False)

        async def fresh() -> CodeGraph:
            graph = CodeGraph()
            await open_graph(graph, store, lazy=True)
            assert not graph.complete
            made.append(graph)
            return graph

        yield whole, fresh
    finally:
        for graph in made:
            graph.detach()
        await database.close()


def _ids(nodes) -> list[str]:
    return [n.id for n in nodes]


async def test_every_question_gets_the_answer_of_a_whole_graph(graphs):
    whole, fresh = graphs

    async def same(question: Callable[[CodeGraph], object]) -> None:
        """A fresh lazy graph, asked ``question`` first, answers as ``whole``."""
        assert question(await fresh()) == question(whole)

    every = sorted(n.id for n in whole.all_nodes())
    assert any(n.status.value == "orphaned" for n in whole.all_nodes())
    assert any(whole.callers(i) for i in every), "the project has calls"
    assert any(whole.importers(p) for p in whole.paths()), "the project imports"
    for node_id in [*every, "rm_notthere"]:
        await same(lambda g, i=node_id: g.get(i))
        await same(lambda g, i=node_id: g.known(i))
        await same(lambda g, i=node_id: _ids(g.children(i)))
        await same(lambda g, i=node_id: _ids(g.callers(i)))
        await same(lambda g, i=node_id: _ids(g.callees(i)))
        for kind in EdgeKind:
            await same(lambda g, i=node_id, k=kind: g.sources(i, k))
            await same(lambda g, i=node_id, k=kind: g.targets(i, k))
        for child in whole.children(node_id):
            await same(lambda g, i=node_id, c=child: _ids(g.children_named(i, c.name)))
    assert "scripts/tool.py" in whole.paths()
    await same(lambda g: sorted(g.paths()))
    await same(lambda g: g.file_ids)
    for path in whole.paths():
        await same(lambda g, p=path: g.file_node(p))
        await same(lambda g, p=path: g.has_active_file(p))
        await same(lambda g, p=path: g.file_nodes(p))
        await same(lambda g, p=path: g.file_nodes(p, orphans=True))
        await same(lambda g, p=path: sorted(g.importers(p)))
        await same(lambda g, p=path: set(g.file_edges(p)))
        await same(lambda g, p=path: g.parent_edges(p))
        for node in whole.file_nodes(path):
            offset = node.name_span.start_byte
            await same(lambda g, p=path, o=offset: g.node_at(p, o))
    await same(lambda g: g.active_count())
    await same(lambda g: sorted(_ids(g.active())))
    await same(lambda g: sorted(_ids(g.all_nodes())))
    await same(lambda g: g.with_agent_status(AgentStatus.RUNNING))
    running = whole.with_agent_status(AgentStatus.RUNNING)
    assert [n.qualified_name for n in running] == ["Report.run"]


@pytest.mark.parametrize("change", ["unchanged", "added"])
async def test_a_file_parsed_before_it_was_loaded_keeps_its_ids(
    graphs, stored: Path, change: str
):
    whole, fresh = graphs
    for path in whole.paths():
        if not (stored / path).exists():
            continue
        text = (stored / path).read_bytes()
        if change == "added":
            text += b"\n\ndef added_later():\n    return 1\n"
        extraction = extract_source(path, text, read_inline_ids=False)
        lazy = await fresh()
        expected = apply_extraction(whole, path, extraction)
        update = apply_extraction(lazy, path, extraction)
        kept = [i for i in expected.ids if i not in expected.created]
        assert [i for i in update.ids if i not in update.created] == kept
        assert update.orphaned == expected.orphaned
        assert len(update.created) == len(expected.created)
        assert not set(update.created) & {n.id for n in whole.all_nodes()}
        assert _ids(lazy.file_nodes(path, orphans=True))[: len(kept)] == kept


async def test_loading_the_rest_in_the_background_completes_the_graph(graphs):
    whole, fresh = graphs
    lazy = await fresh()
    lazy.get(next(iter(whole.file_ids.values())))
    indexed = asyncio.Event()
    indexed.set()
    await fill_graph(lazy, indexed, delay=0)
    assert lazy.complete
    assert sorted(_ids(lazy.all_nodes())) == sorted(_ids(whole.all_nodes()))
    for path in whole.paths():
        assert lazy.file_nodes(path, orphans=True) == whole.file_nodes(
            path, orphans=True
        )


async def test_a_warm_start_keeps_ids_and_cross_file_callers(stored: Path):
    database = await Database.open(stored)
    try:
        _, before, _ = await NodeStore(database).load()
    finally:
        await database.close()
    ids = {(n.file_path, n.qualified_name): n.id for n in before}
    models = (stored / "pkg" / "models.py").read_text(encoding="utf-8")
    (stored / "pkg" / "models.py").write_text(models + "\n\nX = 1\n", "utf-8")

    project = Project(stored, SETTINGS)
    try:
        await project.start()
        make_item = project.graph.get(ids[("pkg/models.py", "make_item")])
        assert make_item is not None
        assert make_item.qualified_name == "make_item"
        callers = [n.qualified_name for n in project.graph.callers(make_item.id)]
        assert "build" in callers
        found = project.search("Report.total", 5)
        assert found[0].id == ids[("pkg/report.py", "Report.total")]
        outline = project.outline("pkg/service.py") or []
        assert {(n.file_path, n.qualified_name): n.id for n in outline}.items() <= (
            ids.items()
        )
        assert [n.kind for n in outline if n.name == "Service"] == [NodeKind.CLASS]
    finally:
        await project.close()


async def test_waiting_for_the_graph_ends_when_the_background_load_does(graphs):
    _whole, fresh = graphs
    lazy = await fresh()
    waiting = asyncio.ensure_future(lazy.wait_complete())
    await asyncio.sleep(0)
    assert not waiting.done()
    indexed = asyncio.Event()
    indexed.set()
    await fill_graph(lazy, indexed, delay=0)
    await asyncio.wait_for(waiting, 10)
    assert lazy.complete
    await asyncio.wait_for(lazy.wait_complete(), 10)  # complete: at once


async def test_waiting_for_the_graph_ends_when_it_stops_reading_the_store(graphs):
    _whole, fresh = graphs
    lazy = await fresh()
    waiting = asyncio.ensure_future(lazy.wait_complete())
    await asyncio.sleep(0)
    assert not waiting.done()
    lazy.detach()  # what closing the project does
    await asyncio.wait_for(waiting, 10)


async def test_containment_is_stored_once_in_each_node(stored: Path):
    """The store keeps who contains whom in each node's ``parent_id`` only: no
    ``parent_of`` rows (70 % of a large project's edges, never read back, a
    third of a first index's writes); a graph read back has every child.
    """
    database = await Database.open(stored)
    try:
        whole = CodeGraph()
        await open_graph(whole, NodeStore(database), lazy=False)
    finally:
        await database.close()
    with sqlite3.connect(stored / STORE_DIR / DB_NAME) as db:
        kinds = dict(db.execute("SELECT kind, COUNT(*) FROM edges GROUP BY kind"))
    assert kinds.keys() == {"calls", "imports"}
    report = next(n for n in whole.all_nodes() if n.qualified_name == "Report")
    assert sorted(n.name for n in whole.children(report.id)) == ["run", "total"]
    assert whole.parent_edges("pkg/report.py"), "containment read back"
