"""Worker processes parse a first index and are gone once it is done.

A first index (no store yet) starts its workers ahead, while the store opens
and the files are listed; a project too small to need them must not keep them,
and a server killed outright must not leave them behind.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

import pytest
from remora_core.config import validate

from tests.project_harness import Project


async def _no_children(timeout: float = 20.0) -> list:
    deadline = asyncio.get_running_loop().time() + timeout
    while (children := multiprocessing.active_children()) and (
        asyncio.get_running_loop().time() < deadline
    ):
        await asyncio.sleep(0.05)
    return children


@pytest.mark.parametrize("files", [0, 2, 40])
async def test_a_first_index_leaves_no_worker_processes(tmp_path, files):
    for number in range(files):
        (tmp_path / f"mod{number}.py").write_text(
            f"def f{number}():\n    return {number}\n", encoding="utf-8"
        )
    assert multiprocessing.active_children() == []
    project = Project(tmp_path, validate({"discovery": {"workers": 2}})[0])
    try:
        await project.start()
        assert (
            len([n for n in project.graph.active() if n.name.startswith("f")]) == files
        )
        assert await _no_children() == []
    finally:
        await project.close()


WORKERS_THEN_WAIT = """
import asyncio, sys, time
from pathlib import Path
from remora_core.index.indexer import Extractor

async def main():
    extractor = Extractor(Path(sys.argv[1]), 1_000_000, False, workers=2)
    extractor.start_ahead()
    while len(extractor._ahead._processes) < 2 or not all(
        p.pid for p in extractor._ahead._processes.values()
    ):
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # their initializer has run
    print(*[p.pid for p in extractor._ahead._processes.values()], flush=True)
    time.sleep(60)

asyncio.run(main())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")
def test_workers_die_with_a_server_killed_outright(tmp_path):
    """A SIGKILLed server must not leave its workers waiting forever (holding
    the pipes the server held: an editor or a test reading its output would
    never see the end).
    """
    server = subprocess.Popen(
        [sys.executable, "-c", WORKERS_THEN_WAIT, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        pids = [int(pid) for pid in server.stdout.readline().split()]
        assert len(pids) == 2, pids
        assert all(_alive(pid) for pid in pids)
    finally:
        server.kill()
        server.wait()
    deadline = time.monotonic() + 20
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in pids), "workers outlived the server"
    assert server.stdout.read() == b""  # nothing holds its stdout any more
    server.stdout.close()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


COUNT_READS = """
import asyncio, collections, json, sys
from pathlib import Path
from remora_core.config import validate
from tests.project_harness import Project

root = Path(sys.argv[1]).resolve()
opened = collections.Counter()

def count(event, args):
    if event == "open" and isinstance(args[0], str) and args[0].endswith(".py"):
        if Path(args[0]).resolve().is_relative_to(root):
            opened[Path(args[0]).name] += 1

async def main():
    project = Project(root, validate({"discovery": {"workers": 1}})[0])
    sys.addaudithook(count)
    try:
        await project.start()
        print(json.dumps([project.disk.parsed, opened]))
    finally:
        await project.close()

asyncio.run(main())
"""


def test_a_first_index_reads_each_file_once(tmp_path):
    """Nothing is stored to compare a first index with: its scan lists the
    files and leaves reading them to the parsers (reading them twice cost the
    server a quarter of a second on 1.7 million lines, and delayed the parse).
    Skipped files are still skipped, with their reason.
    """
    for number in range(5):
        (tmp_path / f"mod{number}.py").write_text(
            f"def f{number}():\n    return {number}\n", encoding="utf-8"
        )
    (tmp_path / "binary.py").write_bytes(b"x = 1\n\x00\x01")
    done = subprocess.run(
        [sys.executable, "-c", COUNT_READS, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    parsed, opened = json.loads(done.stdout)
    assert parsed == 5
    names = [f"mod{number}.py" for number in range(5)] + ["binary.py"]
    assert opened == dict.fromkeys(names, 1)


async def test_a_first_index_skips_what_its_parsers_refuse(tmp_path):
    (tmp_path / "good.py").write_text("def good():\n    pass\n", encoding="utf-8")
    (tmp_path / "binary.py").write_bytes(b"x = 1\n\x00\x01")
    (tmp_path / "latin.py").write_bytes(b"name = '\xe9'\n")
    project = Project(tmp_path, validate({"discovery": {"workers": 1}})[0])
    try:
        await project.start()
        records = project.app._index.records
        assert (
            records["binary.py"].skipped_reason == "looks binary (contains a NUL byte)"
        )
        assert records["latin.py"].skipped_reason.startswith("not valid UTF-8")
        assert records["good.py"].status == "present"
        assert [n.name for n in project.graph.file_nodes("good.py")] == ["good"]
    finally:
        await project.close()
