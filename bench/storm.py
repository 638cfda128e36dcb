"""A storm of agents while a person types, through the real server (issue 30 §3).

Run with the project's interpreter (``.venv/bin/python bench/storm.py``;
``--part storm`` or ``--part model`` runs one half).

**Storm.** A generated project: ``pkg/core.py`` holds ``callee()``;
``MODULES`` modules hold ``CALLERS`` functions that call it; ``pkg/typed.py``
(``TYPED_CLASSES`` classes of ``TYPED_METHODS`` methods, about 500 symbols) is
where the person types. ``remora-lsp`` runs over stdio (``lspclient.py``,
VS Code-like capabilities) with the project's default cascade rules
(``swarm.turn_budget`` 20 per cascade, cooldown 1 s, ``agents.max_concurrency``
2) and a scripted OpenAI-compatible model in a child process on 127.0.0.1
(``remora_lsp.testing.model_server``, answering each request after
``MODEL_DELAY_S``). A node's default subscriptions cover messages to it and
changes of its *own* code only (DESIGN §7), so every caller is subscribed to
the callee with ``remora.subscriptions.add`` (``content_changed`` of the
callee's node).

The person types in ``typed.py``: one incremental ``didChange`` (a character
added to, then removed from, a comment after the file's last top-level
statement, which changes no definition and so wakes no agent) followed at once
by ``textDocument/documentSymbol``, timed from writing the change to reading
the answer. ``QUIET_ROUNDS`` rounds before the storm and as many after are the
*quiet* figure; the rounds typed from the first save until the storm ends are
the *during* figure. During the storm the person edits ``callee`` as an editor
does, ``SAVES`` times ``SAVE_GAP_S`` apart: ``didChange`` of its body, then
``didSave`` (which announces the change at once: one ``content_changed``, one
cascade, per save).

Checked from the ``remora/event`` stream: ``seq`` strictly increasing with no
gap, and its last ``seq`` the store's (``remora.events.last_seq``) once quiet;
for every ``content_changed`` of the callee, each of the ``CALLERS`` + 1
agents it concerns (the callers and the callee's own agent) is either run (in
some turn's ``trigger_ids``) or refused (a ``trigger_refused`` naming it):
nothing lost; every turn that started ended. The storm has ended when every
turn ended and nothing was emitted for ``QUIET_S``.

Printed: turns run, triggers coalesced into another turn, refusals by rule,
events; time from the first save to the last event, split into stages (save →
``content_changed``; ``content_changed`` → its last refusal; first turn start
→ last turn end), the slowest named; documentSymbol p50/p95 quiet and during,
and the ratio of the p95s (target <= ``TARGET_RATIO``).

**Model.** The same project with the embedded model (``model.provider``
local; needs the ``local`` extra; ``--threads N`` sets ``model.threads``,
``--stream`` ``model.stream``).
After a warm-up ask (the model started), quiet rounds; then the callee's
agent is asked for a short explanation and the person types while the model
generates (between a ``model_request`` and its ``model_response``; asked
again until ``QUIET_ROUNDS`` rounds are typed during generation), once per
lever of ``--levers`` (default ``shipped,nopause``: as the server started
the model — ``SCHED_IDLE``, paused while the editor is answered —, then with
``model.pause_for_editor: off``, pushed as an editor does, which restarts
the project and its model; ``nice10``, ``nice0``: every thread of the
model's process moved to that niceness under the normal policy, set from
here as root; ``nice0-nopause``: every lever off), with quiet rounds
between and after (a lever's quiet figure: the rounds typed under its
``pause_for_editor``). Printed:
the model's llama.cpp threads and scheduling, then per lever p50/p95 quiet
and during generation, the ratio of the p95s (target <= ``TARGET_RATIO`` for
the first lever), and the model's speed — completion tokens per second of
the runs, and llama.cpp's own generation and prompt tokens per second from
its log — so what a lever costs the model shows too.

Exit status 1 if a check or a target fails. Note the load (``uptime``) with
every figure: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lspclient import LspClient, path_uri, vscode_capabilities

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
LOGS = BENCH / ".work" / "logs"
SERVER = os.environ.get("STORM_SERVER", "").split() or [
    str(Path(sys.executable).with_name("remora-lsp"))
]

MODULES = 10
CALLERS = 500
TYPED_CLASSES, TYPED_METHODS = 60, 8
SAVES = 3
STORMS = 3
SAVE_GAP_S = 0.4
MODEL_DELAY_S = 0.05
WARMUP_ROUNDS = 30
QUIET_ROUNDS = 150
QUIET_S = 1.5
STORM_TIMEOUT_S = 300.0
MODEL_TIMEOUT_S = 600.0
REQUEST_TIMEOUT_S = 60.0
TARGET_RATIO = 1.5
END_TYPES = ("agent_completed", "agent_failed", "agent_cancelled")
SHORT_ASK = (
    "In three or four sentences of plain prose (no code), what does this "
    "function do and when would someone call it?"
)

MODEL_SCRIPT = f"""
import sys, time
sys.path.insert(0, {str(REPO)!r})
from remora_lsp.testing.model_server import ModelServer, Reply
reply = Reply(text="Looked at the change in callee: nothing to do.",
              delay_s={MODEL_DELAY_S})
with ModelServer(responder=lambda request: reply) as server:
    print(server.url, flush=True)
    sys.stdin.read()
"""


# ---- the project ------------------------------------------------------------------


def generate(root: Path) -> None:
    """callee, CALLERS callers over MODULES modules, and the file typed in."""
    package = root / "pkg"
    package.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "storm"\n')
    (package / "__init__.py").write_text("")
    (package / "core.py").write_text(
        '"""The function everyone calls."""\n\n\n'
        "def callee(value):\n    return value + 0\n"
    )
    per = CALLERS // MODULES
    for m in range(MODULES):
        body = ["from pkg.core import callee\n"]
        body += [
            f"\ndef caller_{m}_{n}(value):\n    return callee(value) + {n}\n"
            for n in range(per)
        ]
        (package / f"callers_{m}.py").write_text("\n".join(body))
    typed = ['"""Where the person types."""\n']
    for c in range(TYPED_CLASSES):
        typed.append(f"\nclass Model{c}:")
        for n in range(TYPED_METHODS):
            typed.append(f"    def method_{n}(self, value):")
            typed.append(f"        return value * {n} + {c}\n")
    typed.append("\nTYPED = 0\n")
    (package / "typed.py").write_text("\n".join(typed))


def callee_text(number: int) -> str:
    """core.py after the person's ``number``-th edit of the callee."""
    return (
        '"""The function everyone calls."""\n\n\n'
        f"def callee(value):\n    return value + {number}\n"
    )


# ---- figures ----------------------------------------------------------------------


def p95(values: list[float]) -> float:
    """95th percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


def load() -> str:
    """The load averages now (``uptime``)."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


@dataclass
class Typing:
    """The person typing in ``typed.py``: one round = didChange + documentSymbol."""

    client: LspClient
    uri: str
    line: int
    column: int
    symbols: int = 0
    version: int = 1
    rounds: list[tuple[float, float]] = field(default_factory=list)
    """(when the round began, its latency in ms)."""
    problems: list[str] = field(default_factory=list)

    async def round(self) -> float:
        """One keystroke and the outline after it; its latency in ms."""
        self.version += 1
        insert = self.version % 2 == 0
        start = {"line": self.line, "character": self.column}
        end = start if insert else {"line": self.line, "character": self.column + 2}
        change = {
            "textDocument": {"uri": self.uri, "version": self.version},
            "contentChanges": [
                {"range": {"start": start, "end": end}, "text": " x" if insert else ""}
            ],
        }
        began = time.perf_counter()
        await self.client.notify("textDocument/didChange", change)
        future = await self.client.send_request(
            "textDocument/documentSymbol", {"textDocument": {"uri": self.uri}}
        )
        arrived, result = await asyncio.wait_for(future, REQUEST_TIMEOUT_S)
        ms = (arrived - began) * 1000
        self.rounds.append((began, ms))
        if len(result or []) != self.symbols and len(self.problems) < 5:
            self.problems.append(
                f"documentSymbol answered {len(result or [])} top-level symbols, "
                f"expected {self.symbols}"
            )
        return ms

    async def rounds_of(self, count: int) -> list[float]:
        """``count`` rounds back to back; their latencies."""
        return [await self.round() for _ in range(count)]

    async def until(self, stop: asyncio.Event) -> None:
        """Type until ``stop`` is set (an even number of rounds)."""
        while not stop.is_set() or self.version % 2:
            await self.round()

    def between(self, start: float, end: float) -> list[float]:
        """Latencies of the rounds that began in ``[start, end]``."""
        return [ms for began, ms in self.rounds if start <= began <= end]


def events(client: LspClient) -> list[tuple[float, dict[str, Any]]]:
    """Every ``remora/event`` so far: (arrival, event JSON)."""
    return [
        (arrived, message["params"])
        for arrived, message in client.notifications
        if message.get("method") == "remora/event"
    ]


def order_problems(client: LspClient) -> list[str]:
    """Whether events arrived in ``seq`` order with no gap."""
    seqs = [event["seq"] for _, event in events(client)]
    problems = []
    for before, after in itertools.pairwise(seqs):
        if after != before + 1:
            problems.append(f"event seq {after} followed {before}")
            if len(problems) >= 5:
                break
    return problems


def ratio_line(label: str, quiet: list[float], during: list[float]) -> float:
    """Print the quiet and during figures; return during p95 / quiet p95."""
    ratio = p95(during) / p95(quiet)
    for name, values in (("quiet", quiet), (label, during)):
        print(
            f"  documentSymbol {name:<22} n={len(values):>4}  "
            f"p50 {statistics.median(values):6.1f} ms  p95 {p95(values):6.1f} ms"
        )
    verdict = "pass" if ratio <= TARGET_RATIO else "FAIL"
    print(f"  p95 {label} / quiet: {ratio:.2f}  (target <= {TARGET_RATIO}: {verdict})")
    return ratio


PROFILE = os.environ.get("STORM_PROFILE") == "1"


def profile(pid: int, name: str) -> subprocess.Popen[bytes] | None:
    """With ``STORM_PROFILE=1``: py-spy records the server's stacks (collapsed,
    ``bench/.work/logs/storm.NAME.stacks``) until terminated.
    """
    if not PROFILE:
        return None
    spy = Path(sys.executable).with_name("py-spy")
    out = LOGS / f"storm.{name}.stacks"
    return subprocess.Popen(
        [str(spy), "record", "-p", str(pid), "-f", "raw", "-o", str(out), "-r", "200"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


# ---- the session ------------------------------------------------------------------


async def start_server(
    root: Path, settings: dict[str, Any], name: str
) -> tuple[LspClient, Typing]:
    """Start remora-lsp on ``root``, wait for the index; the typing person."""
    client = LspClient()
    log = LOGS / f"storm.{name}.stderr.log"
    log.unlink(missing_ok=True)
    await client.start(SERVER, cwd=root, stderr=log)
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "clientInfo": {"name": "remora-bench-storm"},
            "rootUri": path_uri(root),
            "workspaceFolders": [{"uri": path_uri(root), "name": root.name}],
            "capabilities": vscode_capabilities(),
            "initializationOptions": settings,
        },
        timeout=REQUEST_TIMEOUT_S,
    )
    await client.notify("initialized", {})
    typed = root / "pkg" / "typed.py"
    text = typed.read_text()
    lines = text.splitlines()
    typing = Typing(client, path_uri(typed), len(lines) - 1, len(lines[-1]))
    await client.open_document(typing.uri, text)
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    while time.monotonic() < deadline:
        found = await client.request(
            "textDocument/documentSymbol", {"textDocument": {"uri": typing.uri}}
        )
        if found:
            typing.symbols = len(found)
            return client, typing
        await asyncio.sleep(0.1)
    raise TimeoutError("documentSymbol stayed empty")


async def command(client: LspClient, name: str, argument: dict[str, Any]) -> Any:
    """``workspace/executeCommand`` with one argument."""
    return await client.request(
        "workspace/executeCommand",
        {"command": name, "arguments": [argument]},
        timeout=REQUEST_TIMEOUT_S,
    )


async def node_ids(client: LspClient) -> dict[str, str]:
    """Qualified name → id of every function, once the index has them all."""
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    while True:
        page = await command(client, "remora.nodes.graph", {"limit": 20_000})
        found = {
            n["qualified_name"]: n["id"]
            for n in page["nodes"]
            if n["kind"] == "function"
        }
        if len(found) >= CALLERS + 1 or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.2)


async def wait_for_end(
    client: LspClient, run_id: str, timeout: float
) -> dict[str, Any]:
    """The end event of ``run_id``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for _, event in events(client):
            if event.get("run_id") == run_id and event["type"] in END_EVENTS_SET:
                return event
        await asyncio.sleep(0.05)
    raise TimeoutError(f"run {run_id} did not end in {timeout:.0f} s")


END_EVENTS_SET = frozenset(END_TYPES)


# ---- the storm ----------------------------------------------------------------------


@dataclass
class Storm:
    """What the storm's events say."""

    saves: list[float]
    changes: list[tuple[float, dict[str, Any]]]
    started: list[tuple[float, dict[str, Any]]]
    ended: list[tuple[float, dict[str, Any]]]
    refused: list[tuple[float, dict[str, Any]]]
    all: list[tuple[float, dict[str, Any]]]
    end: float = 0.0
    """When its last event arrived."""

    @classmethod
    def of(cls, client: LspClient, since: float, saves: list[float]) -> Storm:
        """The events that arrived since ``since``."""
        late = [(a, e) for a, e in events(client) if a >= since]
        return cls(
            saves,
            [
                (a, e)
                for a, e in late
                if e["type"] == "content_changed" and e.get("path") == "pkg/core.py"
            ],
            [(a, e) for a, e in late if e["type"] == "agent_started"],
            [(a, e) for a, e in late if e["type"] in END_EVENTS_SET],
            [(a, e) for a, e in late if e["type"] == "trigger_refused"],
            late,
        )

    def settled(self) -> bool:
        """Every save announced and every turn ended."""
        runs = {e["run_id"] for _, e in self.started}
        ends = {e["run_id"] for _, e in self.ended}
        return len(self.changes) >= len(self.saves) and runs <= ends

    def problems(self, agents: int) -> list[str]:
        """Triggers neither run nor refused; turns that never ended."""
        found = []
        if len(self.changes) != len(self.saves):
            found.append(f"{len(self.saves)} saves, {len(self.changes)} announced")
        for _, change in self.changes:
            ran = sum(change["id"] in e.get("trigger_ids", ()) for _, e in self.started)
            refused = sum(
                len(e.get("agent_ids") or [e["agent_id"]])
                for _, e in self.refused
                if e["trigger_id"] == change["id"]
            )
            if ran + refused != agents:
                found.append(
                    f"content_changed {change['id']}: {ran} run + {refused} refused "
                    f"of {agents} agents"
                )
        return found


async def storm_part(work: Path) -> bool:
    """The storm while typing; whether every check and target passed."""
    root = work / "storm"
    generate(root)
    model = subprocess.Popen(
        [sys.executable, "-c", MODEL_SCRIPT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert model.stdout is not None
        url = model.stdout.readline().strip()
        settings = {
            "model": {
                "base_url": url,
                "name": "scripted",
                "protocol": "tools",
                "retry_backoff_s": 0.01,
            }
        }
        client, typing = await start_server(root, settings, "storm")
        try:
            return await storm_session(root, client, typing)
        finally:
            await client.stop()
    finally:
        assert model.stdin is not None
        model.stdin.close()
        model.wait(10)


async def storm_session(root: Path, client: LspClient, typing: Typing) -> bool:
    """Subscribe the callers, type quietly, edit the callee, type through the
    storm, type quietly again; print and check.
    """
    ids = await node_ids(client)
    callee = ids["callee"]
    callers = [i for name, i in ids.items() if name.startswith("caller_")]
    if len(callers) != CALLERS:
        print(f"PROBLEM: {len(callers)} callers indexed, expected {CALLERS}")
        return False
    pattern = {"event_types": ["content_changed"], "nodes": [callee]}
    began = time.perf_counter()
    await asyncio.gather(
        *(
            command(
                client, "remora.subscriptions.add", {"node_id": c, "pattern": pattern}
            )
            for c in callers
        )
    )
    print(
        f"{CALLERS} callers subscribed to callee in "
        f"{time.perf_counter() - began:.1f} s; {typing.symbols} top-level symbols "
        f"in typed.py"
    )
    # The agent kernel's import (the first turn's wait) out of the way.
    started = await command(
        client, "remora.agent.chat", {"node_id": callers[0], "message": "Hello"}
    )
    await wait_for_end(client, started["run_id"], REQUEST_TIMEOUT_S)
    await asyncio.sleep(QUIET_S)

    core = root / "pkg" / "core.py"
    core_uri = path_uri(core)
    await client.open_document(core_uri, core.read_text())
    await typing.rounds_of(WARMUP_ROUNDS)
    quiet: list[float] = []
    during: list[float] = []
    problems: list[str] = []
    # Quiet and storm in turn, so a change in the machine's load meets both.
    for number in range(STORMS):
        print(f"quiet ({load()}) ...", flush=True)
        quiet += await typing.rounds_of(QUIET_ROUNDS)
        print(f"storm {number + 1} ({load()}) ...", flush=True)
        storm, window = await one_storm(client, typing, core_uri, number * SAVES)
        during += window
        problems += storm.problems(CALLERS + 1)
        if not storm.settled():
            problems.append(f"storm {number + 1} did not end in {STORM_TIMEOUT_S} s")
        report_storm(storm, number + 1)
    print(f"quiet ({load()}) ...", flush=True)
    quiet += await typing.rounds_of(QUIET_ROUNDS)
    last_seq = (await command(client, "remora.events.last_seq", {}))["seq"]

    problems += order_problems(client) + typing.problems
    seen = events(client)
    if seen and seen[-1][1]["seq"] != last_seq:
        problems.append(f"last event seen {seen[-1][1]['seq']}, store's {last_seq}")
    print(f"\n{load()}")
    ratio = ratio_line("during the storms", quiet, during) if during else math.inf
    for problem in problems:
        print(f"PROBLEM: {problem}")
    return not problems and ratio <= TARGET_RATIO


async def one_storm(
    client: LspClient, typing: Typing, core_uri: str, edits: int
) -> tuple[Storm, list[float]]:
    """Type while the callee is edited and saved SAVES times, until the storm
    ends; the storm and the latencies typed during it.
    """
    stop = asyncio.Event()
    spy = profile(client.pid, "storm")
    typist = asyncio.ensure_future(typing.until(stop))
    await asyncio.sleep(0.3)
    t0 = time.perf_counter()
    saves: list[float] = []
    for number in range(edits + 1, edits + SAVES + 1):
        await client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": core_uri, "version": number + 1},
                "contentChanges": [{"text": callee_text(number)}],
            },
        )
        await client.notify("textDocument/didSave", {"textDocument": {"uri": core_uri}})
        saves.append(time.perf_counter())
        await asyncio.sleep(SAVE_GAP_S)
    deadline = t0 + STORM_TIMEOUT_S
    storm = Storm.of(client, t0, saves)
    while time.perf_counter() < deadline:
        storm = Storm.of(client, t0, saves)
        last = storm.all[-1][0] if storm.all else t0
        if storm.settled() and time.perf_counter() - last >= QUIET_S:
            break
        await asyncio.sleep(0.1)
    stop.set()
    await typist
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait()
    storm.end = storm.all[-1][0] if storm.all else t0
    return storm, typing.between(t0, storm.end)


def report_storm(storm: Storm, number: int) -> None:
    """Turns, coalescing, refusals and stages of one storm."""
    triggers = sum(len(e.get("trigger_ids", ())) for _, e in storm.started)
    rules: Counter[str] = Counter()
    for _, e in storm.refused:
        rules[e["rule"]] += len(e.get("agent_ids") or [e["agent_id"]])
    outcomes = Counter(e["type"] for _, e in storm.ended)
    t0 = storm.saves[0]
    print(
        f"storm {number}: turns run {len(storm.started)} {dict(outcomes)}; "
        f"triggers admitted {triggers}, coalesced {triggers - len(storm.started)}; "
        f"refused {rules.total()} {dict(rules)} in {len(storm.refused)} events; "
        f"{len(storm.all)} events in all; "
        f"{storm.end - t0:.2f} s from the first save to the last event"
    )
    stages: list[tuple[str, float]] = []
    announced = [a for a, _ in storm.changes]
    waits = [a - s for a, s in zip(announced, storm.saves, strict=False)]
    stages.append(("save -> content_changed (longest)", max(waits, default=0.0)))
    refusing = [
        max((a for a, e in storm.refused if e["trigger_id"] == c["id"]), default=at)
        - at
        for at, c in storm.changes
    ]
    stages.append(("content_changed -> its last refusal", max(refusing, default=0)))
    if storm.started:
        turns = max(a for a, _ in storm.ended) - storm.started[0][0]
        stages.append(("first turn start -> last turn end", turns))
    slowest = max(stages, key=lambda s: s[1])
    print(
        "  stages: "
        + "; ".join(f"{label} {seconds:.2f} s" for label, seconds in stages)
        + f"; slowest: {slowest[0].split(' (')[0]}"
    )


# ---- the embedded model -------------------------------------------------------------


async def model_part(
    work: Path, threads: int | None, levers: list[str], stream: bool
) -> bool:
    """Typing while the embedded model generates; whether the target held."""
    root = work / "model"
    generate(root)
    model: dict[str, Any] = {"provider": "local", "timeout_s": 300, "retries": 0}
    if threads is not None:
        model["threads"] = threads
    if stream:
        model["stream"] = True
    client, typing = await start_server(root, {"model": model}, "model")
    try:
        return await model_session(client, typing, root, levers, model)
    finally:
        await client.stop()


def generating(client: LspClient, run_id: str) -> bool:
    """Whether ``run_id`` has a model request out (the model is generating)."""
    waiting = 0
    for _, event in events(client):
        if event.get("run_id") != run_id:
            continue
        if event["type"] == "model_request":
            waiting += 1
        elif event["type"] in ("model_response", *END_TYPES):
            waiting = 0
    return waiting > 0


def model_pid(server: int) -> int | None:
    """The embedded model's process (a child of ``server``)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command_line = (entry / "cmdline").read_bytes()
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == server and b"local_server" in command_line:
                return int(entry.name)
        except (OSError, ValueError, IndexError):
            continue
    return None


def model_threads(pid: int) -> list[int]:
    """The threads of process ``pid`` now (llama.cpp may start more later)."""
    try:
        return [int(t.name) for t in (Path("/proc") / str(pid) / "task").iterdir()]
    except OSError:
        return []


PAUSE_DEFAULT = "generating"
"""``model.pause_for_editor``'s default (``remora_core/agents/model_pause.py``)."""


@dataclass(frozen=True)
class Lever:
    """How the model's threads are scheduled while the person types."""

    label: str
    policy: int | None
    """``os.SCHED_*``; ``None``: as the server started them (shipped)."""
    nice: int | None = None
    pinned: bool = False
    """Every thread on the last CPU only (``sched_setaffinity``)."""
    pause: str = PAUSE_DEFAULT
    """``model.pause_for_editor`` (a change restarts the project and model)."""


LEVERS = {
    "shipped": Lever("shipped", None),
    "nopause": Lever("shipped but pause_for_editor off", None, pause="off"),
    "always": Lever("shipped, pause_for_editor always", None, pause="always"),
    "idle": Lever("SCHED_IDLE", os.SCHED_IDLE),
    "nice10": Lever("nice 10 (SCHED_OTHER)", os.SCHED_OTHER, 10),
    "nice0": Lever("nice 0", os.SCHED_OTHER, 0),
    "nice0-nopause": Lever(
        "nice 0, no pause: every lever off", os.SCHED_OTHER, 0, pause="off"
    ),
    "idle-pinned": Lever("SCHED_IDLE on the last CPU", os.SCHED_IDLE, pinned=True),
}


def scheduling(pid: int) -> str:
    """The policy and niceness of every thread of ``pid``, e.g. ``idle/10``."""
    names = {os.SCHED_OTHER: "other", os.SCHED_IDLE: "idle", os.SCHED_BATCH: "batch"}
    found = set()
    for thread in model_threads(pid):
        with contextlib.suppress(OSError):
            policy = names.get(os.sched_getscheduler(thread), "?")
            found.add(f"{policy}/{os.getpriority(os.PRIO_PROCESS, thread)}")
    return ", ".join(sorted(found)) or "?"


def waited_ms(pids: tuple[int, ...]) -> float:
    """How long the main threads of ``pids`` (the event loops of the server
    and this client) have waited for a core so far, in ms
    (``/proc/PID/schedstat``'s run delay).
    """
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = Path("/proc") / str(pid) / "task" / str(pid) / "schedstat"
            total += int(stat.read_text().split()[1])
    return total / 1e6


def apply(pid: int, policy: int, nice: int, cpus: set[int]) -> str:
    """Set every thread's policy, niceness and CPUs (as root, or only
    lowering priority: an unprivileged bench cannot undo SCHED_IDLE or nice);
    what they are now.
    """
    for thread in model_threads(pid):
        with contextlib.suppress(OSError):
            os.sched_setscheduler(thread, policy, os.sched_param(0))
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, thread, nice)
        with contextlib.suppress(OSError):
            os.sched_setaffinity(thread, cpus)
    return scheduling(pid) + f" on CPUs {','.join(map(str, sorted(cpus)))}"


TIMING = re.compile(r"\|\s+(prompt eval|eval) time =\s*([\d.]+) ms /\s*(\d+) tokens")


def model_speed(log: Path, offset: int) -> dict[str, tuple[int, float]]:
    """llama.cpp's own timings logged since ``offset``: ``{"prompt eval" |
    "eval": (tokens, ms)}`` (prompt reading and generation, summed).
    """
    found = {"prompt eval": (0, 0.0), "eval": (0, 0.0)}
    with contextlib.suppress(OSError), log.open("rb") as file:
        file.seek(offset)
        for match in TIMING.finditer(file.read().decode("utf-8", "replace")):
            tokens, ms = found[match[1]]
            found[match[1]] = (tokens + int(match[3]), ms + float(match[2]))
    return found


def per_second(tokens: int, ms: float) -> str:
    """``"12.3 tokens/s"``, or ``"—"`` when nothing was timed."""
    return f"{tokens / ms * 1000:.1f} tokens/s" if ms and tokens > 1 else "—"


async def while_generating(client: LspClient, typing: Typing, node: str) -> Generated:
    """Rounds typed while the model generates (asked again until enough)."""
    found = Generated()
    typists = (client.pid, os.getpid())
    deadline = time.monotonic() + MODEL_TIMEOUT_S
    while len(found.during) < 2 * QUIET_ROUNDS and time.monotonic() < deadline:
        run = await command(
            client, "remora.agent.chat", {"node_id": node, "message": SHORT_ASK}
        )
        run_id = run["run_id"]
        found.runs.append(run_id)
        while not generating(client, run_id):
            if any(
                e.get("run_id") == run_id and e["type"] in END_EVENTS_SET
                for _, e in events(client)
            ):
                break
            await asyncio.sleep(0.01)
        while generating(client, run_id) and len(found.during) < 2 * QUIET_ROUNDS:
            before = waited_ms(typists)
            found.during.append(await typing.round())
            found.waited_ms += waited_ms(typists) - before
        await wait_for_end(client, run_id, MODEL_TIMEOUT_S)
        await command(client, "remora.agent.forget", {"node_id": node})
    for _, event in events(client):
        if event.get("run_id") in found.runs and event["type"] == "model_response":
            found.tokens += (event.get("usage") or {}).get("output_tokens", 0)
    for run_id in found.runs:
        times = [a for a, e in events(client) if e.get("run_id") == run_id]
        found.seconds += max(times) - min(times)
    return found


@dataclass
class Generated:
    """Typing while the model generated: latencies, the runs, their output."""

    during: list[float] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    tokens: int = 0
    seconds: float = 0.0
    timings: dict[str, tuple[int, float]] = field(default_factory=dict)
    """llama.cpp's own: prompt eval and eval (tokens, ms)."""
    waited_ms: float = 0.0
    """How long the server and this client waited for a core meanwhile."""


async def warm_up(client: LspClient, callee: str, what: str) -> None:
    """One ask, waited for (the model started and its prompt read)."""
    began = time.perf_counter()
    first = await command(
        client, "remora.agent.chat", {"node_id": callee, "message": "Hello"}
    )
    end = await wait_for_end(client, first["run_id"], MODEL_TIMEOUT_S)
    print(f"{what}: {end['type']} in {time.perf_counter() - began:.1f} s")


async def set_pause(
    client: LspClient, model: dict[str, Any], pause: str, old: int, callee: str
) -> int:
    """Push ``model.pause_for_editor: pause`` as an editor does (the project
    and its model restart); the new model's pid once it answered an ask.
    """
    await client.notify(
        "workspace/didChangeConfiguration",
        {"settings": {"remora": {"model": {**model, "pause_for_editor": pause}}}},
    )
    deadline = time.monotonic() + MODEL_TIMEOUT_S
    while model_pid(client.pid) == old:  # the old project closes first
        if time.monotonic() > deadline:
            raise TimeoutError("the model did not stop with its project")
        await asyncio.sleep(0.1)
    ids = await node_ids(client)
    if ids["callee"] != callee:
        raise RuntimeError("the callee's id changed across the restart")
    await warm_up(client, callee, f"pause_for_editor {pause}: warm-up ask")
    pid = model_pid(client.pid)
    if pid is None:
        raise RuntimeError("the restarted model's process was not found")
    return pid


async def model_session(
    client: LspClient,
    typing: Typing,
    root: Path,
    levers: list[str],
    model: dict[str, Any],
) -> bool:
    """Warm up; type quietly, then while the model generates under each lever
    in turn (the first is the target's), quietly between and after. A lever
    with another ``pause_for_editor`` pushes it first (the project and its
    model restart, then a warm-up ask); its quiet figure is the rounds typed
    under the same setting.
    """
    ids = await node_ids(client)
    callee = ids["callee"]
    await warm_up(client, callee, "warm-up ask (model start included)")
    pid = model_pid(client.pid)
    if pid is None:
        print("PROBLEM: the embedded model's process was not found")
        return False
    command_line = (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")
    threads = command_line[command_line.index(b"--threads") + 1].decode()
    shipped = scheduling(pid)
    print(f"model: {threads} llama.cpp threads, scheduled {shipped} (policy/nice)")
    log = root / ".remora" / "local-model.log"
    await asyncio.sleep(QUIET_S)
    await typing.rounds_of(WARMUP_ROUNDS)
    quiet: dict[str, list[float]] = {}
    runs: dict[str, Generated] = {}
    paused_by: dict[str, str] = {}
    typists = (client.pid, os.getpid())
    quiet_waited = 0.0
    pause = PAUSE_DEFAULT
    for name in levers:
        lever = LEVERS[name]
        if lever.pause != pause:
            pid = await set_pause(client, model, lever.pause, pid, callee)
            pause = lever.pause
            shipped = scheduling(pid)
            await asyncio.sleep(QUIET_S)
            await typing.rounds_of(WARMUP_ROUNDS)
        print(f"quiet, pause_for_editor {pause} ({load()}) ...", flush=True)
        before = waited_ms(typists)
        quiet.setdefault(pause, []).extend(await typing.rounds_of(QUIET_ROUNDS))
        quiet_waited += waited_ms(typists) - before
        policy, nice = os.sched_getscheduler(pid), os.getpriority(os.PRIO_PROCESS, pid)
        cpus = os.sched_getaffinity(pid)
        now = shipped
        if lever.policy is not None:
            now = apply(
                pid,
                lever.policy,
                nice if lever.nice is None else lever.nice,
                {max(cpus)} if lever.pinned else cpus,
            )
        print(f"while the model generates, {lever.label}: {now} ({load()}) ...")
        offset = log.stat().st_size if log.exists() else 0
        runs[lever.label] = found = await while_generating(client, typing, callee)
        paused_by[lever.label] = pause
        found.timings = model_speed(log, offset)
        apply(pid, policy, nice, cpus)  # back as shipped
    print(f"quiet, pause_for_editor {pause} ({load()}) ...", flush=True)
    before = waited_ms(typists)
    quiet.setdefault(pause, []).extend(await typing.rounds_of(QUIET_ROUNDS))
    quiet_waited += waited_ms(typists) - before

    print(f"\nembedded model ({threads} llama.cpp threads), {load()}")
    rounds = sum(len(values) for values in quiet.values())
    print(
        f" quiet: the server and this client waited for a core "
        f"{quiet_waited / rounds:.2f} ms per round"
    )
    problems = order_problems(client) + typing.problems
    ratios = {}
    for label, found in runs.items():
        speed = found.tokens / found.seconds if found.seconds else 0.0
        print(
            f" {label} (pause_for_editor {paused_by[label]}): {len(found.runs)} "
            f"asks, {found.tokens} completion tokens "
            f"in {found.seconds:.1f} s of runs ({speed:.1f} tokens/s); llama.cpp: "
            f"generation {per_second(*found.timings.get('eval', (0, 0.0)))}, "
            f"prompt {per_second(*found.timings.get('prompt eval', (0, 0.0)))}; "
            f"the server and this client waited for a core "
            f"{found.waited_ms / max(1, len(found.during)):.2f} ms per round"
        )
        if not found.during:
            problems.append(f"{label}: no round typed while the model generated")
            continue
        ratios[label] = ratio_line(
            "while generating", quiet[paused_by[label]], found.during
        )
    for problem in problems:
        print(f"PROBLEM: {problem}")
    shipped_ratio = next(iter(ratios.values()), math.inf)
    return not problems and shipped_ratio <= TARGET_RATIO


async def run(
    part: str | None, threads: int | None, levers: list[str], stream: bool
) -> int:
    """Both parts (or one); the exit status."""
    good = True
    with tempfile.TemporaryDirectory(prefix="remora-bench-storm-") as tmp:
        if part in (None, "storm"):
            good &= await storm_part(Path(tmp))
        if part in (None, "model"):
            good &= await model_part(Path(tmp), threads, levers, stream)
    return 0 if good else 1


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--part", choices=["storm", "model"])
    parser.add_argument(
        "--threads",
        type=int,
        help="model.threads for the embedded model (default: the server's own)",
    )
    parser.add_argument(
        "--levers",
        default="shipped,nopause",
        help=f"how the model's threads are scheduled while the person types, in "
        f"turn; the first is the target's (of {', '.join(LEVERS)}; default "
        "%(default)s)",
    )
    parser.add_argument(
        "--stream",
        action="store_true",
        help="model.stream: the reply read token by token on the server's loop",
    )
    args = parser.parse_args()
    levers = args.levers.split(",")
    if unknown := sorted(set(levers) - set(LEVERS)):
        parser.error(f"unknown lever {', '.join(unknown)}")
    LOGS.mkdir(parents=True, exist_ok=True)
    print(f"{load()}, {os.cpu_count()} cores")
    sys.exit(asyncio.run(run(args.part, args.threads, levers, args.stream)))


if __name__ == "__main__":
    main()
