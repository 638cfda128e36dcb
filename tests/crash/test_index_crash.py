"""A first index killed midway leaves a store the next start completes exactly.

Start-up writes files while it still parses others: each round writes the
nodes of the files parsed since the last round, then the files resolved so far
whole (record with its content hash, nodes, edges). A subprocess indexes a
project whose modules import each other in a chain, on a real store, with small
rounds, and is killed with ``SIGKILL`` right after the first file was written
whole. The next start (a warm start on that store) must end with exactly the
calls and imports of an index that was never interrupted: no edge naming a
node the store never got, none missing from a file the first run had settled.
"""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from remora_core.config import validate

from tests.project_harness import Project

MODULES = 40

KILLED_AFTER_FIRST_WHOLE_FILE = """
import asyncio, sys
from pathlib import Path
import remora_core.index.disk as disk
from remora_core.config import validate
from tests.project_harness import Project
from remora_core.store.nodes import NodeStore

disk.SAVE_EARLY = 3  # many small rounds
real = NodeStore.save_files

async def save_then_stop(self, snapshots):
    snapshots = list(snapshots)
    saved = await real(self, snapshots)
    if any(s.record.content_hash for s in snapshots):
        print("written", flush=True)
        await asyncio.sleep(3600)  # killed here
    return saved

NodeStore.save_files = save_then_stop

async def main():
    project = Project(Path(sys.argv[1]), validate({"discovery": {"workers": 1}})[0])
    await project.start()
    print("finished", flush=True)

asyncio.run(main())
"""


def _write_chain(root: Path) -> None:
    """``m00`` imports and calls ``m01``, which calls ``m02``, …, each also
    through a class; files are parsed in name order, so most must wait.
    """
    root.mkdir(parents=True)
    for number in range(MODULES):
        following = f"m{number + 1:02d}"
        last = number == MODULES - 1
        (root / f"m{number:02d}.py").write_text(
            ("" if last else f"import {following}\n\n\n")
            + "class Step:\n    def go(self):\n        return work()\n\n\n"
            + "def work():\n"
            + ("    return 0\n" if last else f"    return {following}.Step().go()\n"),
            encoding="utf-8",
        )


def _edges(project: Project) -> set[tuple[str, str, str]]:
    """Every ``calls`` and ``imports`` edge, by file and qualified name."""
    graph = project.graph

    def name(node_id: str) -> str:
        node = graph.get(node_id)
        assert node is not None, f"an edge to {node_id}: no such node"
        return f"{node.file_path}:{node.qualified_name}"

    return {
        (name(edge.from_id), edge.kind.value, name(edge.to_id))
        for path in graph.paths()
        for edge in graph.file_edges(path)
    }


async def _indexed(root: Path) -> set[tuple[str, str, str]]:
    project = Project(root, validate({"discovery": {"workers": 1}})[0])
    try:
        await project.start()
        project.graph.load_all()  # a warm start reads files on first use
        return _edges(project)
    finally:
        await project.close()


def test_a_first_index_killed_midway_is_completed_exactly(tmp_path):
    root = tmp_path / "project"
    _write_chain(root)
    shutil.copytree(root, tmp_path / "reference")
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_AFTER_FIRST_WHOLE_FILE, str(root)],
        cwd=Path(__file__).resolve().parents[2],  # tests.project_harness
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert child.stdout.readline().strip() == b"written"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()

    after_crash = asyncio.run(_indexed(root))
    uninterrupted = asyncio.run(_indexed(tmp_path / "reference"))
    assert len(uninterrupted) > 2 * MODULES  # calls and imports across files
    assert after_crash == uninterrupted
