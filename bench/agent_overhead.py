"""Engine overhead per agent turn: remora vs a bare pydantic-ai run, scripted model.

Run with the project's interpreter (``.venv/bin/python bench/agent_overhead.py``).

Both sides talk to the **same** scripted OpenAI-compatible server
(``remora_lsp/testing/model_server.py``, a thread of this process on 127.0.0.1) in the
same run, so the model costs the same on both sides and the difference is
what remora adds around a turn. Two exchanges ("shapes") are measured:

- ``text``: one request, the model answers with a plain text;
- ``tool``: the model calls ``rewrite_self`` with a new definition, then
  answers with a text (two requests).

Four sides, in two like-for-like pairs (each pair sends the model the same
tools, so the difference is the engine, not the size of the request):

- **bare**: ``pydantic_ai.Agent(OpenAIChatModel(name, provider=OpenAIProvider(
  openai_client=AsyncOpenAI(base_url, api_key, max_retries=0))))`` with a short
  instruction and one ``rewrite_self(new_source)`` tool that returns a fixed
  text; timed around ``await agent.run(prompt)``.
- **remora, 1 tool**: the functions' agents use a project bundle whose
  ``tools`` list is ``[rewrite_self]`` (a bundle narrowing the core tools, as
  the shipped ``docstring`` bundle does).
- **bare+13 tools**: the bare agent offering the 13 core tools' JSON schemas
  (stub functions, built once).
- **remora, 13 tools**: the default ``code_agent`` bundle (every core tool).

Targets (issue 4): remora p50 / bare p50 <= 1.5 and remora p50 - bare p50 <=
10 ms ("our own time") for both pairs and both shapes. Also printed, not a
target: remora with 13 tools against the one-tool bare run, which adds what
sending 13 tool schemas costs inside pydantic-ai and the OpenAI SDK.

**remora** is a real :class:`~remora_core.project.Project` on a temporary
folder (store on disk, every event persisted) holding one module of
``text_<n>`` / ``tool_<n>`` functions (``swarm.cooldown_ms`` 0, protocol
``tools``); one project per remora side. Timed
from just before ``await swarm.emit(HumanChat(...))`` to the moment a bus
consumer receives that run's ``agent_completed`` (persisted). Every ask goes to
a function asked for the first time (empty chat history, as in the bare run);
between asks the script waits until the runner is idle (the run's end
recorded), so each turn meets an idle engine. What remora does in between:
persist the trigger, match and admit it, record the run, ``agent_started``,
build the system prompt (source, callers, callees, bundle), load the chat
history, pick the agent's tools, ``model_request`` /
``model_response`` events per request, the tool's ``tool_called`` /
``tool_result`` / ``rewrite_proposed`` events and the proposal (validated by
parsing, diffed, written to the store), saving the chat history, and
``agent_completed``.

As the server does once a project has started, the heap is then frozen
(``gc.freeze()``). Rounds alternate the sides so drift on the machine hits all
alike. The fake server answers with two writes (headers, then body); the
script turns Nagle's algorithm off on its sockets (``TCP_NODELAY``), else a
delayed ACK adds ~40 ms to some answers at random (``--nagle`` keeps it, as
the tests run). Prints p50/p95 per shape and side, then per pair the ratio
remora p50 / bare p50 (target <= 1.5) and "our own time" = remora p50 - bare
p50 (target <= 10 ms); exit status 1 if a target fails or a run did not end as
expected. ``--profile``
runs cProfile over the remora rounds and prints where the time goes.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import pstats
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests

from remora_core.config import RemoraConfig
from remora_core.events.models import HumanChat
from remora_core.trust import Trust

from remora_lsp.testing.model_server import ModelServer, Reply
from tests.project_harness import Project

RUNS = 200
WARMUP = 20
SHAPES = ("text", "tool")
BARE, REMORA_1 = "bare", "remora, 1 tool"
BARE_13, REMORA_13 = "bare+13 tools", "remora, 13 tools"
SIDES = (BARE, REMORA_1, BARE_13, REMORA_13)
PAIRS = ((REMORA_1, BARE), (REMORA_13, BARE_13))
"""(remora side, its like-for-like bare peer): the targets."""
ONE_TOOL_BUNDLE = """\
name: bench_rewriter
description: Rewrites its node; offers the model only rewrite_self.
system_prompt: |
  Do exactly what you are asked.
tools:
  - rewrite_self
"""
RUN_TIMEOUT_S = 20.0
MODEL = "scripted"

TARGET_RATIO = 1.5
TARGET_OWN_MS = 10.0

NAME = re.compile(r"\b((?:text|tool)_\d+)\b")
ANSWER = "Done: I now add one more."


def new_source(name: str) -> str:
    """The rewrite the scripted model proposes for ``name``."""
    return f"def {name}(x):\n    return x + 2\n"


def responder(request: dict[str, Any]) -> Reply:
    """The scripted model: a tool call first for ``tool_*``, else a text."""
    messages = request["messages"]
    last = messages[-1]
    if last.get("role") == "tool":
        return Reply(text=ANSWER)
    prompt = str(last.get("content") or "")
    found = NAME.search(prompt)
    name = found.group(1) if found else "unknown"
    if name.startswith("tool_"):
        return Reply(tool_calls=[("rewrite_self", {"new_source": new_source(name)})])
    return Reply(text=ANSWER)


def module_source(count: int) -> str:
    """One module with ``count`` functions of each shape."""
    lines = ['"""Generated functions."""', ""]
    for shape in SHAPES:
        for n in range(count):
            lines += [f"def {shape}_{n}(x):", "    return x + 1", "", ""]
    return "\n".join(lines)


def prompt_for(name: str) -> str:
    """The person's request to ``name``."""
    return f"Please make {name} add two instead of one."


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[rank]


# ---- bare pydantic-ai --------------------------------------------------------------


PROPOSED = "Proposal pr_000000000000 created; a person will review it."


def bare_agent(base_url: str, *, core_tools: bool = False) -> Any:
    """The peer; ``core_tools``: offer remora's 13 core tool schemas (stubs)."""
    from openai import AsyncOpenAI
    from pydantic_ai import Agent, Tool
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    def rewrite_self(new_source: str) -> str:
        """Propose new source for yourself."""
        return PROPOSED

    def stub(**arguments: Any) -> str:
        return PROPOSED

    tools: list[Any] = [Tool(rewrite_self)]
    if core_tools:
        from remora_core.agents.toolset import CORE_TOOLS

        tools = []
        for function in CORE_TOOLS.values():
            definition = Tool(function, takes_ctx=True).tool_def  # built once
            tools.append(
                Tool.from_schema(
                    stub,
                    definition.name,
                    definition.description,
                    definition.parameters_json_schema,
                )
            )
    client = AsyncOpenAI(base_url=base_url, api_key="not-needed", max_retries=0)
    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(openai_client=client))
    return Agent(
        model, instructions="You are a function. Do what you are asked.", tools=tools
    )


async def bare_round(agent: Any, name: str) -> float:
    """One bare run; its seconds."""
    began = time.perf_counter()
    result = await agent.run(prompt_for(name))
    took = time.perf_counter() - began
    if result.output != ANSWER:
        raise RuntimeError(f"bare run answered {result.output!r}")
    return took


# ---- remora ------------------------------------------------------------------------


class RemoraSide:
    """A started project and the timing of one ask."""

    def __init__(
        self, root: Path, base_url: str, count: int, *, one_tool: bool
    ) -> None:
        self.root = root
        root.mkdir(parents=True)
        (root / "funcs.py").write_text(module_source(count), encoding="utf-8")
        if one_tool:
            bundle = root / ".remora" / "bundles" / "bench_rewriter"
            bundle.mkdir(parents=True)
            (bundle / "bundle.yaml").write_text(ONE_TOOL_BUNDLE, encoding="utf-8")
        self.config = RemoraConfig.model_validate(
            {
                "bundles": {"function": "bench_rewriter"} if one_tool else {},
                "model": {
                    "provider": "openai_compatible",
                    "base_url": base_url,
                    "name": MODEL,
                    "protocol": "tools",
                },
                "swarm": {"cooldown_ms": 0},
                "discovery": {"workers": 1},
            }
        )
        # The bench's own bundle is the repository's: the project must be trusted.
        self.project = Project(
            root,
            self.config,
            trust=Trust.for_settings(self.config.model, trusted=True),
        )
        self.completed: dict[str, float] = {}
        self.failed: dict[str, str] = {}
        self.arrived = asyncio.Event()
        self.ids: dict[str, str] = {}

    async def start(self) -> None:
        """Start the project and listen for the ends of runs."""
        project = self.project
        await project.start()
        await asyncio.wait_for(project.indexed.wait(), 60)
        for node in project.graph.file_nodes("funcs.py"):
            self.ids[node.qualified_name] = node.id

        def on_end(stored: Any) -> None:
            event = stored.event
            now = time.perf_counter()
            if event.type == "agent_completed":
                self.completed[event.agent_id] = now
            else:
                self.failed[event.agent_id] = getattr(event, "error", event.type)
            self.arrived.set()

        project.swarm.bus.subscribe(
            "bench", on_end, types={"agent_completed", "agent_failed"}
        )
        await asyncio.wait_for(project.swarm.runner.idle(), 60)

    async def round(self, name: str) -> float:
        """Ask ``name``'s agent; seconds from emit to ``agent_completed``."""
        agent_id = self.ids[name]
        swarm = self.project.swarm
        self.arrived.clear()
        began = time.perf_counter()
        await swarm.emit(HumanChat(to_agent=agent_id, message=prompt_for(name)))
        deadline = began + RUN_TIMEOUT_S
        while agent_id not in self.completed and agent_id not in self.failed:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), deadline - time.perf_counter())
        if agent_id in self.failed:
            raise RuntimeError(f"remora run of {name} failed: {self.failed[agent_id]}")
        took = self.completed[agent_id] - began
        # The next ask meets an idle engine (run end recorded, nothing pending).
        await asyncio.wait_for(swarm.runner.idle(), RUN_TIMEOUT_S)
        return took

    async def check(self) -> list[str]:
        """Problems: tool-shaped asks without exactly one pending proposal each."""
        proposals = self.project.agents.services.proposals  # type: ignore[union-attr]
        problems = []
        for name, node_id in self.ids.items():
            if not name.startswith("tool_") or node_id not in self.completed:
                continue
            pending = proposals.pending(node_id=node_id)
            if len(pending) != 1 or "x + 2" not in pending[0].new_source:
                problems.append(f"{name}: {len(pending)} proposals")
        return problems

    async def close(self) -> None:
        """Close the project."""
        await self.project.close()


# ---- the run -----------------------------------------------------------------------


async def run(runs: int, warmup: int, profile: bool, nodelay: bool) -> int:
    """Measure every side, print; the exit status."""
    count = runs + warmup
    results: dict[tuple[str, str], list[float]] = {
        (side, shape): [] for side in SIDES for shape in SHAPES
    }
    profiler = cProfile.Profile() if profile else None
    with (
        ModelServer(responder=responder, model=MODEL) as server,
        tempfile.TemporaryDirectory(prefix="remora-bench-agent-") as tmp,
    ):
        if nodelay:
            # The fake answers with two writes (headers, then body): with Nagle
            # on, the second waits for the client's delayed ACK (~40 ms on Linux).
            server.httpd.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
        print(f"scripted model at {server.url}", flush=True)
        bare = {
            BARE: bare_agent(server.url),
            BARE_13: bare_agent(server.url, core_tools=True),
        }
        remora = {
            REMORA_1: RemoraSide(Path(tmp) / "one", server.url, count, one_tool=True),
            REMORA_13: RemoraSide(Path(tmp) / "all", server.url, count, one_tool=False),
        }
        print("starting the projects ...", flush=True)
        for side in remora.values():
            await side.start()
        gc.collect()
        gc.freeze()  # what the server does once a project has started
        print(
            f"{runs} rounds per shape (+{warmup} warm-up), the sides alternating ...",
            flush=True,
        )
        try:
            for shape in SHAPES:
                for n in range(count):
                    name = f"{shape}_{n}"
                    took: dict[str, float] = {}
                    for label, agent in bare.items():
                        took[label] = await bare_round(agent, name)
                    for label, project in remora.items():
                        if profiler is not None and n >= warmup:
                            profiler.enable()
                        took[label] = await project.round(name)
                        if profiler is not None:
                            profiler.disable()
                    if n >= warmup:
                        for label, seconds in took.items():
                            results[(label, shape)].append(seconds)
            problems = [p for side in remora.values() for p in await side.check()]
            requests = len(server.requests)
        finally:
            for side in remora.values():
                await side.close()

    expected = len(SIDES) * count * (1 + 2)  # per side: text 1 request, tool 2
    print()
    print(
        f"{runs} turns per shape (+{warmup} warm-up); scripted model in-process; "
        "store on disk (WAL); cooldown 0; protocol tools"
    )
    print(f"{'':<32} {'p50 ms':>9} {'p95 ms':>9} {'mean ms':>9}")
    for shape in SHAPES:
        for side in SIDES:
            ms = [v * 1000 for v in results[(side, shape)]]
            print(
                f"{side + ' / ' + shape:<32} {statistics.median(ms):>9.2f} "
                f"{percentile(ms, 0.95):>9.2f} {statistics.fmean(ms):>9.2f}"
            )
    failures = 0
    if problems:
        print(
            f"PROBLEM: {len(problems)} tool turns without their proposal: "
            f"{problems[:5]}"
        )
        failures += 1
    if requests != expected:
        print(f"PROBLEM: the model got {requests} requests, expected {expected}")
        failures += 1

    def p50(side: str, shape: str) -> float:
        return statistics.median(results[(side, shape)]) * 1000

    print()
    for shape in SHAPES:
        for ours_side, peer in PAIRS:
            ours, theirs = p50(ours_side, shape), p50(peer, shape)
            ratio, own = ours / theirs, ours - theirs
            ok_ratio, ok_own = ratio <= TARGET_RATIO, own <= TARGET_OWN_MS
            print(
                f"{shape}: {ours_side} / {peer}: p50 ratio {ratio:4.2f} "
                f"(target <= {TARGET_RATIO:g}) {'pass' if ok_ratio else 'FAIL'}; "
                f"our own time {own:5.2f} ms (target <= {TARGET_OWN_MS:g}) "
                f"{'pass' if ok_own else 'FAIL'}"
            )
            failures += (not ok_ratio) + (not ok_own)
        ours, theirs = p50(REMORA_13, shape), p50(BARE, shape)
        print(
            f"{shape}: {REMORA_13} / {BARE} (not like for like, not a target): "
            f"p50 ratio {ours / theirs:4.2f}, {ours - theirs:5.2f} ms more"
        )
    if profiler is not None:
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("cumulative").print_stats(45)
        stats.sort_stats("tottime").print_stats(30)
        print("\ncProfile of the remora rounds (main thread only):")
        print(out.getvalue())
    return 1 if failures else 0


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--warmup", type=int, default=WARMUP)
    parser.add_argument(
        "--profile", action="store_true", help="cProfile the remora rounds"
    )
    parser.add_argument(
        "--nagle",
        action="store_true",
        help="leave Nagle's algorithm on in the scripted server (as the tests run it)",
    )
    args = parser.parse_args()
    sys.exit(asyncio.run(run(args.runs, args.warmup, args.profile, not args.nagle)))


if __name__ == "__main__":
    main()
