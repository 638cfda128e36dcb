"""Index the whole standard library as a workspace: cold, then warm; time and memory.

Run with the project's interpreter (``.venv/bin/python bench/index_stdlib.py``).

The running Python's stdlib directory (without ``site-packages`` and
``__pycache__``) is copied to a temporary folder, because the server writes
``.remora/`` into its workspace. Then:

- **cold**: start ``remora-lsp`` over stdio on that folder, with a client that
  supports work-done progress, and time from spawning the process to the
  ``end`` of the "Remora: indexing" progress;
- **warm**: start a new server on the same folder (nothing changed) and time
  the same thing again;
- **peer**: ``ast.parse`` of every ``.py``/``.pyi`` file of the copy in a
  fresh Python process (reading included; :func:`ast_parse_fresh`): the floor
  cost of parsing the stdlib with CPython's own parser. Run in this process,
  its garbage collections would also walk what the bench holds by then.
- **first outline**: after each start's indexing ends, ``_pydecimal.py`` is
  opened and the time from ``didOpen`` to its first ``documentSymbol`` answer
  is taken (lazy loading must not move start-up cost to the first file).
- **floor** (not a target): ``floor_server.py``, a pygls server that indexes
  nothing, timed like the warm start (the best of three): what starting Python,
  importing pygls and ``lsprotocol`` and answering ``initialize`` cost on this
  machine, the part of the warm figure no work on Remora can remove.

Python keeps compiled modules in ``__pycache__``; an installed package has
them, but with ``PYTHONDONTWRITEBYTECODE`` set (as in some sandboxes) an
editable install would compile Remora's own sources at every start (~0.1 s of
CPU). Unless ``--no-compile`` is given, the script compiles them once first
and says so; ``--no-compile`` measures the server as the environment leaves it.

Targets (issue 17): cold <= ``TARGET_COLD_RATIO`` and warm <=
``TARGET_WARM_RATIO`` times the ``ast.parse`` peer of the same run, peak RSS
<= ``TARGET_RSS_MB``.

Memory: every ~50 ms the sum of ``VmRSS`` over the server and all its
descendants (the parsing worker processes) is read from ``/proc``; the peak of
that sum is reported (shared pages of forked workers count once per process,
so this overstates real use), with the server process's own ``VmHWM`` just
before shutdown. Prints the figures, the cold/ast ratio and pass/fail against
the targets. Server stderr goes to ``bench/.work/logs/``.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lspclient import LspClient, path_uri, vscode_capabilities

BENCH = Path(__file__).resolve().parent
LOGS = BENCH / ".work" / "logs"
STDLIB = Path(sysconfig.get_paths()["stdlib"])

INDEX_TITLE = "Remora: indexing"
INDEX_TIMEOUT_S = 300.0
SAMPLE_INTERVAL_S = 0.05
TARGET_COLD_RATIO = 1.2
TARGET_WARM_RATIO = 0.12
TARGET_RSS_MB = 400.0
OPENED = "_pydecimal.py"
MESSAGES_SHOWN = 5
SUMMARY = re.compile(r"(\d+) files, (\d+) parsed, (\d+) nodes in ([\d.]+) s")


# ---- the workspace -------------------------------------------------------------------


def copy_stdlib(destination: Path) -> None:
    """Copy the stdlib to ``destination``, without site-packages and caches."""

    def ignore(directory: str, names: list[str]) -> list[str]:
        skipped = [n for n in names if n == "__pycache__"]
        if Path(directory) == STDLIB and "site-packages" in names:
            skipped.append("site-packages")
        return skipped

    shutil.copytree(STDLIB, destination, ignore=ignore, symlinks=True)


def python_files(root: Path) -> list[Path]:
    """Every ``.py`` and ``.pyi`` file under ``root``, except in ``.remora``."""
    found = [p for p in root.rglob("*") if p.suffix in (".py", ".pyi")]
    return sorted(p for p in found if ".remora" not in p.parts and p.is_file())


# ---- memory --------------------------------------------------------------------------


def proc_fields(pid: int, name: str, *fields: str) -> dict[str, int]:
    """The numbers of ``fields`` in ``/proc/<pid>/<name>`` (``Field: 123 kB``
    lines: ``status``, ``smaps_rollup``, ``io``), read in one pass; 0 for
    each when the process is gone.
    """
    found = dict.fromkeys(fields, 0)
    try:
        with open(f"/proc/{pid}/{name}") as lines:
            for line in lines:
                key, _, rest = line.partition(":")
                if key in found:
                    found[key] = int(rest.split()[0])
    except OSError:
        pass
    return found


def _status_kb(pid: int, field_name: str) -> int:
    """Read a ``kB`` field of ``/proc/<pid>/status``; 0 if the process is gone."""
    return proc_fields(pid, "status", field_name)[field_name]


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def processes() -> dict[int, tuple[int, float]]:
    """Every process: pid → (parent pid, CPU seconds used), from ``/proc``."""
    table = {}
    for entry in os.listdir("/proc"):
        fields = _stat_fields(int(entry)) if entry.isdigit() else None
        if fields is not None:
            table[int(entry)] = (int(fields[1]), _cpu_s(fields))
    return table


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode("ascii", "replace")
    except OSError:
        return None
    # the command name may hold spaces or parentheses: split after the last ')'
    return text.rsplit(")", 1)[1].split()


def _cpu_s(fields: list[str]) -> float:
    """CPU seconds (utime + stime) of :func:`_stat_fields`."""
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def process_cpu(pid: int) -> float:
    """CPU seconds ``pid`` has used (0 once it is gone)."""
    fields = _stat_fields(pid)
    return _cpu_s(fields) if fields else 0.0


_CHILDREN_LISTED = os.path.exists(f"/proc/self/task/{os.getpid()}/children")
"""Whether this kernel lists each thread's children (``CONFIG_PROC_CHILDREN``)."""


def tree_processes(root: int) -> dict[int, tuple[int, float]]:
    """:func:`processes` for ``root`` and its descendants only, found through
    each thread's ``/proc/PID/task/TID/children``: a handful of reads per
    sample where :func:`processes` reads every process on the machine (~80
    here; every 0.1 s that was 0.2 CPU-s of a cold start, on the two cores
    the server was timed on). Falls back to :func:`processes` on a kernel
    without those files.
    """
    if not _CHILDREN_LISTED:
        return processes()
    table: dict[int, tuple[int, float]] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        fields = _stat_fields(pid)
        if fields is None:  # gone meanwhile
            continue
        table[pid] = (int(fields[1]), _cpu_s(fields))
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in threads:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as children:
                    todo.extend(int(child) for child in children.read().split())
            except OSError:
                continue
    return table


def process_tree(root: int, table: dict[int, tuple[int, float]]) -> list[int]:
    """``root`` and all its descendants."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


class RssSampler(threading.Thread):
    """Polls the summed ``VmRSS`` of a process tree and keeps the peak."""

    def __init__(self, root: int) -> None:
        super().__init__(name="rss sampler", daemon=True)
        self.root = root
        self.peak_kb = 0
        """Highest sum of VmRSS seen over the tree."""
        self.most_processes = 0
        """Largest number of processes seen in the tree."""
        self.cpu_s: dict[int, float] = {}
        """CPU seconds of each process of the tree, as last seen."""
        self._stop_event = threading.Event()

    def run(self) -> None:
        """Sample until stopped."""
        while not self._stop_event.is_set():
            self.sample()
            self._stop_event.wait(SAMPLE_INTERVAL_S)

    def sample(self) -> None:
        """Take one sample now."""
        table = tree_processes(self.root)
        tree = process_tree(self.root, table)
        total = sum(_status_kb(pid, "VmRSS") for pid in tree)
        self.peak_kb = max(self.peak_kb, total)
        self.most_processes = max(self.most_processes, len(tree))
        self.cpu_s.update((pid, table[pid][1]) for pid in tree if pid in table)

    def stop(self) -> None:
        """Stop sampling and wait for the thread."""
        self._stop_event.set()
        self.join()


# ---- one server session --------------------------------------------------------------


@dataclass
class IndexRun:
    """What one start of the server on the workspace did."""

    label: str
    seconds: float = 0.0
    """From spawning the process to the end of the indexing progress."""
    initialize_seconds: float = 0.0
    """From spawning the process to the answer to ``initialize``."""
    begin_seconds: float = 0.0
    """From spawning the process to the ``begin`` of the indexing progress."""
    summary: str = ""
    peak_rss_mb: float = 0.0
    hwm_mb: float = 0.0
    processes: int = 0
    server_cpu_s: float = 0.0
    """CPU time of the server process until indexing ended."""
    workers_cpu_s: float = 0.0
    """CPU time of its descendants until indexing ended."""
    reports: int = 0
    messages: list[str] = field(default_factory=list)
    """``window/showMessage`` and ``window/logMessage`` texts received."""
    exit_code: int | None = None
    log: Path = field(default_factory=Path)
    first_outline_ms: float = 0.0
    """From ``didOpen`` of a file (after indexing) to its first outline."""


def _progress(message: dict[str, Any]) -> tuple[Any, dict[str, Any]] | None:
    """(token, value) of a ``$/progress`` notification, else None."""
    if message.get("method") != "$/progress":
        return None
    params = message.get("params") or {}
    return params.get("token"), params.get("value") or {}


def _indexing_tokens(client: LspClient) -> set[Any]:
    """Tokens whose progress began with the indexing title."""
    tokens = set()
    for _, message in client.notifications:
        found = _progress(message)
        begin = found and found[1].get("kind") == "begin"
        if begin and found[1].get("title") == INDEX_TITLE:
            tokens.add(found[0])
    return tokens


def indexing_progress(client: LspClient, kind: str) -> asyncio.Future:
    """Wait for the ``begin`` or ``end`` of the indexing progress (a future)."""

    def matches(message: dict[str, Any]) -> bool:
        found = _progress(message)
        return bool(
            found
            and found[1].get("kind") == kind
            and found[0] in _indexing_tokens(client)
        )

    return client.wait_for_notification(matches)


async def initialize(
    client: LspClient, workspace: Path, settings: dict | None = None
) -> None:
    """Initialize with ``workspace`` as the only folder (and the editor's
    ``settings``, if any), then ``initialized``.
    """
    params = {
        "processId": None,
        "clientInfo": {"name": "remora-bench"},
        "rootUri": path_uri(workspace),
        "workspaceFolders": [{"uri": path_uri(workspace), "name": workspace.name}],
        "capabilities": vscode_capabilities(),
    }
    if settings is not None:
        params["initializationOptions"] = settings
    await client.request("initialize", params)
    await client.notify("initialized", {})


async def index_once(
    workspace: Path, label: str, command: list[str] | None = None
) -> IndexRun:
    """Start remora-lsp (or ``command``) on ``workspace`` and measure it until
    indexing ends.
    """
    run = IndexRun(label, log=LOGS / f"index_stdlib.{label}.stderr.log")
    run.log.unlink(missing_ok=True)
    command = command or [str(Path(sys.executable).with_name("remora-lsp"))]
    client = LspClient()
    started = time.perf_counter()
    await client.start(command, cwd=workspace, stderr=run.log)
    sampler = RssSampler(client.pid)
    sampler.start()
    try:
        began = indexing_progress(client, "begin")
        ended = indexing_progress(client, "end")
        await initialize(client, workspace)
        run.initialize_seconds = time.perf_counter() - started
        arrived, message = await asyncio.wait_for(ended, INDEX_TIMEOUT_S)
        run.begin_seconds = began.result()[0] - started
        run.seconds = arrived - started
        run.summary = _progress(message)[1].get("message") or ""
        run.hwm_mb = _status_kb(client.pid, "VmHWM") / 1024
        sampler.stop()  # then one last sample, from this thread alone
        sampler.sample()
        run.server_cpu_s = sampler.cpu_s.pop(client.pid, 0.0)
        run.workers_cpu_s = sum(sampler.cpu_s.values())
        run.first_outline_ms = await first_outline(client, workspace / OPENED)
    finally:
        sampler.stop()
        run.exit_code = await client.stop()
    run.peak_rss_mb = sampler.peak_kb / 1024
    run.processes = sampler.most_processes
    run.reports = sum(
        1
        for _, m in client.notifications
        if (p := _progress(m)) and p[1].get("kind") == "report"
    )
    run.messages = [
        f"{m['method']}: {m['params'].get('message', '')}"
        for _, m in client.notifications
        if m.get("method") in ("window/showMessage", "window/logMessage")
    ]
    if "window/workDoneProgress/create" not in client.server_requests:
        run.summary += " [no window/workDoneProgress/create request seen]"
    return run


async def first_outline(client: LspClient, path: Path) -> float:
    """Open ``path``; ms until a documentSymbol answer with symbols arrives."""
    uri = path_uri(path)
    started = time.perf_counter()
    await client.open_document(uri, path.read_text(encoding="utf-8"))
    params = {"textDocument": {"uri": uri}}
    while not await client.request("textDocument/documentSymbol", params):
        await asyncio.sleep(0.01)
    return (time.perf_counter() - started) * 1000


# ---- the peer ------------------------------------------------------------------------


@dataclass
class AstRun:
    """``ast.parse`` over every Python file of the workspace."""

    seconds: float
    files: int
    syntax_errors: int
    undecodable: int
    cpu_s: float = 0.0


def ast_parse_all(root: Path) -> AstRun:
    """Read and ``ast.parse`` every Python file under ``root``, timed."""
    paths = python_files(root)
    errors = undecodable = 0
    cpu = time.process_time()
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences in old tests
        for path in paths:
            try:
                ast.parse(path.read_bytes(), filename=str(path))
            except SyntaxError:  # badsyntax_* test files, on purpose
                errors += 1
            except (UnicodeDecodeError, ValueError):
                undecodable += 1
    seconds = time.perf_counter() - started
    return AstRun(seconds, len(paths), errors, undecodable, time.process_time() - cpu)


_FRESH_PEER = (
    "import json, sys; from dataclasses import asdict; from pathlib import Path; "
    "sys.path.insert(0, sys.argv[1]); from index_stdlib import ast_parse_all; "
    "print(json.dumps(asdict(ast_parse_all(Path(sys.argv[2])))))"
)


def ast_parse_fresh(root: Path) -> AstRun:
    """:func:`ast_parse_all` in a new Python process with its default settings.

    Run in the bench's own process, the peer's garbage collections (~140 full
    ones over 1.7 M lines, each walking every object the process holds) also
    walked whatever the bench held by then, the LSP messages of the sessions
    before: it took 8-10 s where a fresh process took 7.1-7.6 s in the same
    minutes, and its time grew along the run.
    """
    found = subprocess.run(
        [sys.executable, "-c", _FRESH_PEER, str(Path(__file__).parent), str(root)],
        capture_output=True,
        text=True,
        check=True,
    )
    return AstRun(**json.loads(found.stdout.splitlines()[-1]))


# ---- report --------------------------------------------------------------------------


def verdict(value: float, target: float) -> str:
    """``pass`` or ``FAIL`` for a figure that must not exceed ``target``."""
    return "pass" if value <= target else "FAIL"


def print_run(run: IndexRun) -> None:
    """One line per server start."""
    print(
        f"{run.label:<5} {run.seconds:>7.2f} s to indexing end "
        f"({run.initialize_seconds:.2f} s to initialize, "
        f"{run.begin_seconds:.2f} s to indexing begin); "
        f"peak RSS (tree) {run.peak_rss_mb:>6.1f} MB over up to {run.processes} "
        f"processes; server VmHWM {run.hwm_mb:.1f} MB; "
        f"{run.reports} progress reports; exit code {run.exit_code}"
    )
    outline_ms = run.first_outline_ms
    print(f"      first outline of {OPENED} after indexing: {outline_ms:.0f} ms")
    print(f"      server summary: {run.summary!r}")
    print(
        f"      CPU until indexing end: server process {run.server_cpu_s:.1f} s, "
        f"worker processes {run.workers_cpu_s:.1f} s"
    )
    print(f"      {len(run.messages)} show/log messages from the server")
    for text in run.messages[:MESSAGES_SHOWN]:
        print(f"        {text.splitlines()[0][:120]}")


def report(cold: IndexRun, warm: IndexRun, peer: AstRun, floor: float) -> int:
    """Print figures, ratio and targets; return the exit status."""
    print()
    print_run(cold)
    print_run(warm)
    print(
        f"ast   {peer.seconds:>7.2f} s to read and ast.parse {peer.files} files "
        f"({peer.syntax_errors} syntax errors, {peer.undecodable} undecodable)"
    )
    print(
        f"floor {floor:>7.2f} s for a pygls server that indexes nothing "
        f"({floor / peer.seconds:.3f} x ast; warm minus floor "
        f"{warm.seconds - floor:.2f} s)"
    )
    print()
    peak = max(cold.peak_rss_mb, warm.peak_rss_mb)
    checks = [
        (
            f"cold / ast <= {TARGET_COLD_RATIO:g}",
            cold.seconds / peer.seconds,
            TARGET_COLD_RATIO,
        ),
        (
            f"warm / ast <= {TARGET_WARM_RATIO:g}",
            warm.seconds / peer.seconds,
            TARGET_WARM_RATIO,
        ),
        (f"peak RSS <= {TARGET_RSS_MB:g} MB", peak, TARGET_RSS_MB),
    ]
    status = 0
    for name, value, target in checks:
        print(f"target {name:<22} {value:>8.2f}  {verdict(value, target)}")
        status |= value > target
    for run in (cold, warm):
        if not SUMMARY.search(run.summary):
            print(f"PROBLEM {run.label}: unexpected progress end {run.summary!r}")
            status = 1
        if run.exit_code != 0:
            print(f"PROBLEM {run.label}: exit code {run.exit_code} (None: killed)")
            status = 1
    return int(status)


async def floor_seconds(workspace: Path) -> float:
    """The best of three starts of ``floor_server.py`` to its progress end."""
    command = [sys.executable, str(BENCH / "floor_server.py")]
    seconds = []
    for _ in range(3):
        seconds.append((await index_once(workspace, "floor", command)).seconds)
    return min(seconds)


def compile_remora() -> None:
    """Compile Remora's own modules, as an installed package has them (the
    suite does the same: ``tests/conftest.py``, ``compile_project``; neither
    can import the other).
    """
    import compileall
    import importlib.util

    for name in ("remora_lsp", "remora_core", "remora_cli"):
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(location, quiet=2)


async def run(keep: bool) -> int:
    """Copy the stdlib, index it cold and warm, parse it with ``ast``."""
    LOGS.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="remora-bench-"))
    workspace = tmp / "stdlib"
    try:
        started = time.perf_counter()
        copy_stdlib(workspace)
        print(
            f"copied {STDLIB} to {workspace} "
            f"({len(python_files(workspace))} Python files) "
            f"in {time.perf_counter() - started:.1f} s",
            flush=True,
        )
        print("cold start ...", flush=True)
        cold = await index_once(workspace, "cold")
        print("warm start ...", flush=True)
        warm = await index_once(workspace, "warm")
        print("floor ...", flush=True)
        floor = await floor_seconds(workspace)
        print("ast.parse peer ...", flush=True)
        peer = ast_parse_fresh(workspace)
        return report(cold, warm, peer, floor)
    finally:
        if keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--keep", action="store_true", help="keep the copied workspace afterwards"
    )
    parser.add_argument(
        "--no-compile",
        action="store_true",
        help="do not compile Remora's modules first (see the module docstring)",
    )
    args = parser.parse_args()
    if not Path(sys.executable).with_name("remora-lsp").exists():
        sys.exit("remora-lsp not found: run this with the project's .venv/bin/python")
    if not args.no_compile:
        compile_remora()
        if sys.flags.dont_write_bytecode:
            print(
                "PYTHONDONTWRITEBYTECODE is set: compiled Remora's modules first, "
                "as an installed package has them (--no-compile: measure without)"
            )
    sys.exit(asyncio.run(run(args.keep)))


if __name__ == "__main__":
    main()
