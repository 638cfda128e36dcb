"""Where a cold index's time goes: start-up, parsing, and the tail (issue 30).

Run with the project's interpreter (``.venv/bin/python bench/cold_phases.py``).

N copies of the running Python's stdlib (``--scale``, 2 by default, as
``index_large.py``) are copied once into ``bench/.work/phases-N`` (kept between
runs; ``.remora/`` is removed before each). Then, ``--rounds`` times: a cold
remora-lsp on it, its process tree sampled every 20 ms (CPU of the server and
of its parsing workers), timed to the end of the indexing progress, cut in
three phases:

- **start-up**: spawning the server until the first parsed batch reaches it
  (its first progress report);
- **parsing**: until the workers' CPU stops growing (the last batch parsed);
- **tail**: from there to the end of the progress (only the server works:
  resolving what is left and writing the store).

Each phase is printed with its wall time and the CPU seconds of the server and
of the workers in it. ``--ast`` also runs the ``ast.parse`` peer over the same
files in this process (its CPU and wall time, and the ratios). CPU seconds are
what to compare when the machine is loaded; the wall-clock figures need a
quiet one.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from index_large import LOGS, _is_model
from index_stdlib import (
    _indexing_tokens,
    _progress,
    ast_parse_fresh,
    copy_stdlib,
    indexing_progress,
    initialize,
    proc_fields,
    process_tree,
    python_files,
    tree_processes,
)
from lspclient import LspClient

BENCH = Path(__file__).resolve().parent
SAMPLE_S = 0.02
SPY_EXTRA = [
    a
    for a in __import__("os").environ.get("SPY_EXTRA", "--subprocesses").split(",")
    if a
]


@dataclass
class Timeline:
    """CPU seconds of the server and of its other processes, over time."""

    samples: list[tuple[float, float, float]] = field(default_factory=list)
    """(perf_counter, server CPU, workers' CPU summed)."""

    def at(self, moment: float) -> tuple[float, float]:
        """The CPU figures of the first sample at or after ``moment``."""
        for when, server, workers in self.samples:
            if when >= moment:
                return server, workers
        return self.samples[-1][1], self.samples[-1][2]

    def workers_done(self) -> float:
        """When the workers' CPU last grew."""
        last = self.samples[-1][2]
        for when, _, workers in self.samples:
            if workers >= last - 0.02:
                return when
        return self.samples[-1][0]


class Sampler(threading.Thread):
    """Samples the server's tree every :data:`SAMPLE_S` (the model left out)."""

    def __init__(self, root: int) -> None:
        super().__init__(name="phase sampler", daemon=True)
        self.root = root
        self.timeline = Timeline()
        self.workers: dict[int, float] = {}
        self.server = 0.0
        self._halt = threading.Event()
        self._models: dict[int, bool] = {}

    def run(self) -> None:
        """Sample until stopped."""
        while not self._halt.is_set():
            self.sample()
            self._halt.wait(SAMPLE_S)

    def sample(self) -> None:
        """Take one sample now."""
        table = tree_processes(self.root)
        for pid in process_tree(self.root, table):
            if pid == self.root:
                self.server = table[pid][1]
            elif pid in table and not _is_model(pid, self._models):
                self.workers[pid] = table[pid][1]
        self.timeline.samples.append(
            (time.perf_counter(), self.server, sum(self.workers.values()))
        )

    def stop(self) -> None:
        """Stop sampling."""
        self._halt.set()
        self.join()


@dataclass
class Phases:
    """One cold start, cut in phases: (wall s, server CPU s, workers CPU s)."""

    startup: tuple[float, float, float]
    parsing: tuple[float, float, float]
    tail: tuple[float, float, float]
    summary: str
    timeline: Timeline | None = None
    started: float = 0.0

    @property
    def total(self) -> tuple[float, float, float]:
        """The three phases added up."""
        return tuple(
            a + b + c
            for a, b, c in zip(self.startup, self.parsing, self.tail, strict=True)
        )  # type: ignore[return-value]


async def cold_start(workspace: Path, spy: str | None = None) -> Phases:
    """One cold start of remora-lsp on ``workspace``, cut in phases (``spy``:
    under ``py-spy record``, its collapsed stacks written there; the phases'
    figures then include py-spy's own CPU).
    """
    shutil.rmtree(workspace / ".remora", ignore_errors=True)
    log = LOGS / "cold_phases.stderr.log"
    log.unlink(missing_ok=True)
    client = LspClient()
    command = [str(Path(sys.executable).with_name("remora-lsp"))]
    if spy:
        spy_bin = str(Path(sys.executable).with_name("py-spy"))
        record = [spy_bin, "record", "--format", "raw", "--rate", "200"]
        command = [*record, *SPY_EXTRA, "-o", spy, "--", *command]
    started = time.perf_counter()
    await client.start(command, cwd=workspace, stderr=log)
    sampler = Sampler(client.pid)
    sampler.start()
    try:
        ended = indexing_progress(client, "end")
        began = indexing_progress(client, "begin")
        await initialize(client, workspace)
        initialized = time.perf_counter()
        finished, message = await asyncio.wait_for(ended, 900)
        sampler.sample()
        written = _written_mb(client.pid)
    finally:
        sampler.stop()
        await client.stop()
    tokens = _indexing_tokens(client)
    first = finished
    for arrived, note in client.notifications:
        found = _progress(note)
        if found and found[0] in tokens and found[1].get("kind") == "report":
            text = found[1].get("message") or ""
            if text.startswith("parsed"):
                first = arrived
                break
    timeline = sampler.timeline
    last = min(max(timeline.workers_done(), first), finished)
    marks = [started, first, last, finished]
    cpu = [(0.0, 0.0), timeline.at(first), timeline.at(last), timeline.at(finished)]
    phases = [
        (
            marks[i + 1] - marks[i],
            cpu[i + 1][0] - cpu[i][0],
            cpu[i + 1][1] - cpu[i][1],
        )
        for i in range(3)
    ]
    found = _progress(message)
    summary = (found[1].get("message") if found else None) or ""
    begin_at = began.result()[0] if began.done() else finished
    summary += (
        f"\n  initialized after {initialized - started:.2f} s, progress began "
        f"after {begin_at - started:.2f} s, first batch after {first - started:.2f} s"
        f"\n  the server wrote {written:.0f} MB until then (the store and its WAL)"
    )
    return Phases(*phases, summary=summary, timeline=timeline, started=started)


def _written_mb(pid: int) -> float:
    """MB a process passed to ``write`` so far (``wchar`` of ``/proc/PID/io``)."""
    return proc_fields(pid, "io", "wchar")["wchar"] / 1e6


def utilisation(phases: Phases, window: float = 0.5) -> str:
    """Cores busy per ``window`` seconds from the spawn: the server's and
    the workers' CPU seconds per wall second (2.0: both cores of two).
    """
    assert phases.timeline is not None
    samples = phases.timeline.samples
    lines = [f"  cores busy (server + workers) per {window:.1f} s:"]
    edge, last = phases.started + window, (phases.started, 0.0, 0.0)
    for when, server, workers in samples:
        if when >= edge:
            wall = when - last[0]
            busy_server = (server - last[1]) / wall
            busy_workers = (workers - last[2]) / wall
            lines.append(
                f"    {last[0] - phases.started:5.1f}-{when - phases.started:5.1f} s"
                f"  {busy_server:4.2f} + {busy_workers:4.2f}"
            )
            last, edge = (when, server, workers), when + window
    return "\n".join(lines)


def prepare(scale: int) -> Path:
    """The workspace of ``scale`` stdlib copies, made once."""
    workspace = BENCH / ".work" / f"phases-{scale}"
    done = workspace / ".copied"
    if not done.exists():
        shutil.rmtree(workspace, ignore_errors=True)
        workspace.mkdir(parents=True)
        for copy in range(1, scale + 1):
            copy_stdlib(workspace / f"copy{copy}")
        done.touch()
    return workspace


def show(label: str, figures: tuple[float, float, float], ast_cpu: float) -> str:
    """One phase's line: wall time, CPU of the server and of the workers."""
    wall, server, workers = figures
    line = (
        f"  {label:<9} wall {wall:6.2f} s   CPU server {server:6.2f} s"
        f"  workers {workers:6.2f} s"
    )
    if ast_cpu:
        line += f"  (server+workers {(server + workers) / ast_cpu:.2f}x ast CPU)"
    return line


async def run(
    scale: int, rounds: int, with_ast: bool, spy: str | None, timeline: bool = False
) -> None:
    """Measure and print."""
    LOGS.mkdir(parents=True, exist_ok=True)
    workspace = prepare(scale)
    files = python_files(workspace)
    print(f"{scale} copies, {len(files)} Python files", flush=True)
    ast_cpu = ast_wall = 0.0
    if with_ast:
        peer = ast_parse_fresh(workspace)
        ast_cpu, ast_wall = peer.cpu_s, peer.seconds
        print(f"ast.parse: wall {ast_wall:.2f} s, CPU {ast_cpu:.2f} s", flush=True)
    for round_ in range(1, rounds + 1):
        phases = await cold_start(workspace, spy)
        print(f"cold {round_}: {phases.summary}")
        print(show("start-up", phases.startup, 0))
        print(show("parsing", phases.parsing, 0))
        print(show("tail", phases.tail, 0))
        print(show("total", phases.total, ast_cpu))
        if timeline:
            print(utilisation(phases))
        if ast_wall:
            print(f"  cold / ast wall {phases.total[0] / ast_wall:.2f}", flush=True)


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scale", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--ast", action="store_true", help="run the ast peer too")
    parser.add_argument("--spy", help="profile with py-spy: collapsed stacks here")
    parser.add_argument(
        "--timeline", action="store_true", help="print the cores busy every 0.5 s"
    )
    args = parser.parse_args()
    asyncio.run(run(args.scale, args.rounds, args.ast, args.spy, args.timeline))


if __name__ == "__main__":
    main()
