"""Whether the engine keeps a model cluster's slots busy (issue 30, section 1).

Run with the project's interpreter: ``.venv/bin/python bench/scale_model.py``
(``--slots 8 64`` for some N only; ``--profile N`` writes a cProfile of the
engine at N to ``bench/scale_model.N.prof``).

The endpoint is ``bench/slot_endpoint.py`` in a process of its own: an
OpenAI-compatible server with N parallel slots and a fixed latency L
(``LATENCY_S``) per request, queueing the rest, as vLLM or SGLang do. The
project is generated: ``FILES`` × ``FUNCTIONS`` small functions (1,000
nodes), opened as a real :class:`~remora_core.project.Project` (store on
disk, every event persisted) in a child process per N, with
``agents.max_concurrency``, ``model.max_concurrency`` and the graph's
``max_concurrency`` all N. One graph step (bundle ``docstring``) runs on
every node: the endpoint answers a turn's first request with a
``rewrite_self`` call and the next with a closing text, so each node is a
proposal and two requests.

Printed per N:

- **throughput**: requests answered / the graph's wall time (``graphs.run``
  to ``graph_completed``, the checkpoint before the run included), against
  the endpoint's own limit measured in the same run (a bare client keeping
  N requests in flight, ``PEER_ROUNDS`` × N requests) and N / L. Target:
  ≥ ``TARGET_RATIO`` × the measured limit;
- **CPU per turn**: the engine process's CPU time (every thread) over the
  graph / its runs. Target: at the largest N at most ``TARGET_CPU_RATIO`` ×
  the smallest N of the same node count ("flat"); with it, the garbage
  collections of each generation during the graph (a full one holds the
  event loop for tens of milliseconds: ``agents/collector_pace.py``);
- **peak memory**: the engine process's peak RSS. Target: between the
  smallest and largest N of the same node count it grows by at most
  ``TARGET_MB_PER_RUN`` MB per concurrent run.

N = 1 runs over ``SMALL_NODES`` nodes (1,000 would take 17 minutes).

**Failover**: two endpoints of ``FAILOVER_SLOTS`` slots each in
``model.endpoints``; the second stops listening and drops its connections
after answering ``FAILOVER_AFTER`` requests (half-way). Target: every node
ends, with a proposal or a clear failure, and the graph completes.

The load of the machine (``uptime``) is printed with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.*

BENCH = Path(__file__).resolve().parent
LATENCY_S = 0.5
SLOTS = (1, 8, 32, 64)
FILES, FUNCTIONS = 50, 20
NODES = FILES * FUNCTIONS
SMALL_NODES = 30
PEER_ROUNDS = 4
TARGET_RATIO = 0.9
TARGET_CPU_RATIO = 1.3
TARGET_MB_PER_RUN = 1.0
FAILOVER_SLOTS = 16
FAILOVER_AFTER = 500
RUN_TIMEOUT_S = 1800.0


# ---- the endpoint ---------------------------------------------------------------


class Endpoint:
    """``slot_endpoint.py`` in a process of its own."""

    def __init__(self, slots: int, latency: float, fail_after: int | None = None):
        command = [
            sys.executable,
            str(BENCH / "slot_endpoint.py"),
            "--slots",
            str(slots),
            "--latency",
            str(latency),
        ]
        if fail_after is not None:
            command += ["--fail-after", str(fail_after)]
        self.slots = slots
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()

    def stats(self) -> dict[str, Any]:
        """The endpoint's counters (``GET /stats``)."""
        import httpx2 as httpx

        return httpx.get(f"{self.url}/stats", timeout=10).json()

    def close(self) -> None:
        """Stop the process (it ends when its stdin closes)."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


async def peer(url: str, slots: int) -> float:
    """The endpoint's own limit: requests per second of a bare client that
    keeps ``slots`` requests in flight.
    """
    import httpx2 as httpx

    body = {
        "model": "scripted",
        "messages": [
            {"role": "system", "content": "def f0_1(x):"},
            {"role": "user", "content": "Add a docstring."},
        ],
    }
    total = PEER_ROUNDS * slots
    limits = httpx.Limits(max_connections=slots, max_keepalive_connections=slots)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def worker() -> None:
            for _ in range(PEER_ROUNDS):
                response = await client.post(f"{url}/chat/completions", json=body)
                response.raise_for_status()

        began = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(slots)))
        return total / (time.perf_counter() - began)


# ---- the engine (child process) ---------------------------------------------------


def generated_project(root: Path) -> None:
    """``FILES`` modules of ``FUNCTIONS`` functions each."""
    for f in range(FILES):
        body = [f"def f{f}_{n}(x):\n    return x + {n}\n" for n in range(FUNCTIONS)]
        package = root / f"pkg{f // 10}"
        package.mkdir(parents=True, exist_ok=True)
        (package / f"mod{f}.py").write_text("\n\n".join(body), encoding="utf-8")


def settings(urls: list[str], slots: int) -> dict[str, Any]:
    """The engine's settings for ``slots`` at the endpoints ``urls``."""
    model: dict[str, Any] = {
        "provider": "openai_compatible",
        "name": "scripted",
        "protocol": "tools",
        "timeout_s": 30,
        "retry_backoff_s": 0.2,
    }
    if len(urls) == 1:
        model |= {"base_url": urls[0], "max_concurrency": slots}
    else:
        model["endpoints"] = [
            {"base_url": url, "max_concurrency": slots // len(urls)} for url in urls
        ]
    return {
        "model": model,
        "swarm": {"cooldown_ms": 0, "turn_budget": 100_000},
        "agents": {"max_concurrency": slots},
    }


async def engine(
    urls: list[str], slots: int, nodes: int, profile: Path | None
) -> dict[str, Any]:
    """One graph over ``nodes`` functions; what it took."""
    from remora_core.config import RemoraConfig
    from remora_core.model import NodeKind
    from remora_core.trust import Trust

    from tests.project_harness import Project

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generated_project(root)
        config = RemoraConfig.model_validate(settings(urls, slots))
        project = Project(root, config, trust=Trust.for_settings(config.model))
        await project.start()
        await project.indexed.wait()
        try:
            ids = sorted(
                n.id for n in project.graph.active() if n.kind is NodeKind.FUNCTION
            )[:nodes]
            assert project.agents is not None and project.graphs is not None
            await project.agents._load_kernel()  # the import is not the graph's
            done = asyncio.get_running_loop().create_future()

            def on_end(stored: Any) -> None:
                if not done.done():
                    done.set_result(stored.event)

            project.swarm.bus.subscribe("bench", on_end, types={"graph_completed"})
            spec = {
                "name": "docstrings",
                "max_concurrency": min(slots, 64),
                "error_policy": "continue",
                "steps": [
                    {"id": "doc", "bundle": "docstring", "targets": {"ids": ids}}
                ],
            }
            rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            profiler = None
            if profile is not None:
                import cProfile

                profiler = cProfile.Profile(time.thread_time)  # CPU, not wall
                profiler.enable()
            collections = [g["collections"] for g in gc.get_stats()]
            cpu, main_cpu = time.process_time(), time.thread_time()
            began = time.perf_counter()
            await project.graphs.run(spec)
            event = await asyncio.wait_for(done, RUN_TIMEOUT_S)
            took = time.perf_counter() - began
            cpu = time.process_time() - cpu
            main_cpu = time.thread_time() - main_cpu
            collections = [
                g["collections"] - before
                for g, before in zip(gc.get_stats(), collections, strict=True)
            ]
            if profiler is not None and profile is not None:
                profiler.disable()
                profiler.dump_stats(profile)
            await project.swarm.runner.idle()
            proposals = project.agents.services.proposals.pending()
            runs = await project.swarm.runs.recent(
                status=None, node_id=None, limit=10 * nodes
            )
            failures = sorted({r.error or "" for r in runs if r.error})
        finally:
            await project.close()
    return {
        "seconds": took,
        "cpu_s": cpu,
        "main_cpu_s": main_cpu,
        "collections": collections,
        "runs": len(runs),
        "counts": event.counts,
        "outcome": event.outcome,
        "proposals": len(proposals),
        "failures": failures[:3],
        "rss_before_mb": rss_before,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def child(arguments: argparse.Namespace) -> None:
    """The engine's side of one measurement, as JSON on stdout."""
    result = asyncio.run(
        engine(arguments.urls, arguments.child, arguments.nodes, arguments.prof)
    )
    print(json.dumps(result))


def run_engine(
    urls: list[str], slots: int, nodes: int, profile: Path | None = None
) -> dict[str, Any]:
    """The engine's side in a fresh process (its own CPU time and peak RSS)."""
    command = [sys.executable, __file__, "--child", str(slots), "--nodes", str(nodes)]
    command += ["--urls", *urls]
    if profile is not None:
        command += ["--prof", str(profile)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the engine failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---- what each lever of the client buys (in one process, same run) ----------------

LEVER_ROUNDS = 21
LEVER_SLOTS = 64


async def lever_cpu(url: str) -> dict[str, float]:
    """Client CPU per request (ms) with and without each lever of the
    model client, against an endpoint of ``LEVER_SLOTS`` slots answering at
    once: ``LEVER_SLOTS`` requests in flight through pydantic-ai's model (the
    13 core tools, a system prompt), rounds of the variants interleaved, the
    least of each kept (load only adds).
    """
    from openai import AsyncOpenAI
    from pydantic_ai.messages import ModelRequest, SystemPromptPart, UserPromptPart
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.providers.openai import OpenAIProvider
    from remora_core.agents.chat_model import ChatModel
    from remora_core.agents.lean_client import LeanOpenAI
    from remora_core.agents.providers import SHARD_SLOTS
    from remora_core.agents.toolset import core_tools

    tools = [tool.tool_def for tool in core_tools().values()]
    parameters = ModelRequestParameters(function_tools=tools)
    system = "You are the agent of a function.\n" * 40 + "def f0_1(x):\n"
    messages = [
        ModelRequest(parts=[SystemPromptPart(system), UserPromptPart("Add a doc.")])
    ]

    def models(kind: type[AsyncOpenAI], clients: int) -> list[ChatModel]:
        return [
            ChatModel(
                "scripted",
                provider=OpenAIProvider(
                    openai_client=kind(base_url=url, api_key="x", max_retries=0)
                ),
            )
            for _ in range(clients)
        ]

    shards = LEVER_SLOTS // SHARD_SLOTS
    variants = {
        "SDK client, one": models(AsyncOpenAI, 1),
        "lean client, one": models(LeanOpenAI, 1),
        f"lean client, {shards} (shards)": models(LeanOpenAI, shards),
    }
    best = dict.fromkeys(variants, float("inf"))
    for _round in range(LEVER_ROUNDS):
        for name, chat in variants.items():
            cpu = time.process_time()
            await asyncio.gather(
                *(
                    chat[i % len(chat)].request(messages, None, parameters)
                    for i in range(LEVER_SLOTS)
                )
            )
            per = (time.process_time() - cpu) / LEVER_SLOTS * 1000
            if _round:  # the first round opens connections
                best[name] = min(best[name], per)
    return best


def levers() -> None:
    """Print what the client's levers buy per request."""
    endpoint = Endpoint(LEVER_SLOTS, 0.0)
    try:
        best = asyncio.run(lever_cpu(endpoint.url))
    finally:
        endpoint.close()
    base = next(iter(best.values()))
    print(
        f"client CPU per request, {LEVER_SLOTS} in flight (least of "
        f"{LEVER_ROUNDS - 1} rounds):"
    )
    for name, ms in best.items():
        print(f"  {name:28s} {ms:6.2f} ms  ({ms / base:.2f})")


# ---- the measurements -------------------------------------------------------------


def uptime() -> str:
    """The machine's load, as ``uptime`` shows it."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def one(slots: int, profile: Path | None) -> dict[str, Any]:
    """Throughput, CPU and memory at ``slots``."""
    nodes = SMALL_NODES if slots == 1 else NODES
    endpoint = Endpoint(slots, LATENCY_S)
    try:
        limit = asyncio.run(peer(endpoint.url, slots))
        before = endpoint.stats()["answered"]
        result = run_engine([endpoint.url], slots, nodes, profile)
        answered = endpoint.stats()["answered"] - before
    finally:
        endpoint.close()
    result |= {
        "slots": slots,
        "nodes": nodes,
        "requests": answered,
        "throughput": answered / result["seconds"],
        "limit": limit,
        "ideal": slots / LATENCY_S,
        "uptime": uptime(),
    }
    result["ratio"] = result["throughput"] / limit
    ok = result["ratio"] >= TARGET_RATIO and result["counts"].get("completed") == nodes
    print(
        f"N={slots:3d}: {nodes} nodes, {answered} requests in {result['seconds']:.1f} s"
        f" = {result['throughput']:.1f}/s; endpoint limit {limit:.1f}/s measured"
        f" (N/L {result['ideal']:.0f}/s): ratio {result['ratio']:.3f}"
        f" (target >= {TARGET_RATIO}) {'ok' if ok else 'MISSED'}"
    )
    print(
        f"       CPU {result['cpu_s'] / max(result['runs'], 1) * 1000:.1f} ms per turn"
        f" ({result['cpu_s']:.1f} s, the event loop's thread"
        f" {result['main_cpu_s'] / max(result['runs'], 1) * 1000:.1f} ms;"
        f" garbage collections young/middle/full"
        f" {'/'.join(map(str, result['collections']))});"
        f" peak RSS {result['peak_rss_mb']:.0f} MB;"
        f" {result['proposals']} proposals; load: {result['uptime']}",
        flush=True,
    )
    if result["failures"]:
        print(f"       failures: {result['failures']}")
    result["ok"] = ok
    return result


def failover() -> bool:
    """Two endpoints, one of which goes away half-way: every node ends."""
    steady = Endpoint(FAILOVER_SLOTS, LATENCY_S)
    failing = Endpoint(FAILOVER_SLOTS, LATENCY_S, fail_after=FAILOVER_AFTER)
    try:
        result = run_engine([steady.url, failing.url], 2 * FAILOVER_SLOTS, NODES)
        served = steady.stats()["answered"]
    finally:
        steady.close()
        failing.close()
    counts = result["counts"]
    ended = counts.get("completed", 0) + counts.get("failed", 0)
    ok = result["outcome"] == "completed" and ended == NODES
    print(
        f"failover: 2 endpoints x {FAILOVER_SLOTS} slots, the second gone after "
        f"{FAILOVER_AFTER} answers: graph {result['outcome']} in "
        f"{result['seconds']:.1f} s, {ended}/{NODES} nodes ended {counts} "
        f"({result['proposals']} proposals; the steady endpoint answered {served}) "
        f"{'ok' if ok else 'MISSED'}"
    )
    if result["failures"]:
        print(f"       failures: {result['failures']}")
    return ok


def main() -> None:
    """Parse the options and measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, nargs="*", default=list(SLOTS))
    parser.add_argument("--profile", type=int, help="profile the engine at this N")
    parser.add_argument("--no-failover", action="store_true")
    parser.add_argument(
        "--levers", action="store_true", help="only the client levers' CPU"
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--nodes", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--urls", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--prof", type=Path, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child is not None:
        child(arguments)
        return
    print(f"load: {uptime()}; L = {LATENCY_S} s per request; pid {os.getpid()}")
    levers()
    if arguments.levers:
        return
    results = []
    for slots in sorted(arguments.slots):
        profile = None
        if arguments.profile == slots:
            profile = BENCH / f"scale_model.{slots}.prof"
        results.append(one(slots, profile))
    good = all(r["ok"] for r in results)
    same = [r for r in results if r["nodes"] == NODES]
    if len(same) >= 2:
        low, high = same[0], same[-1]
        cpu_low = low["cpu_s"] / max(low["runs"], 1)
        cpu_high = high["cpu_s"] / max(high["runs"], 1)
        cpu_ratio = cpu_high / cpu_low
        grown = (high["peak_rss_mb"] - low["peak_rss_mb"]) / (
            high["slots"] - low["slots"]
        )
        cpu_ok = cpu_ratio <= TARGET_CPU_RATIO
        mb_ok = grown <= TARGET_MB_PER_RUN
        print(
            f"CPU per turn N={high['slots']} / N={low['slots']}: {cpu_ratio:.2f} "
            f"(target <= {TARGET_CPU_RATIO}) {'ok' if cpu_ok else 'MISSED'}"
        )
        print(
            f"peak RSS per concurrent run: {grown:.2f} MB (target <= "
            f"{TARGET_MB_PER_RUN}) {'ok' if mb_ok else 'MISSED'}"
        )
        good = good and cpu_ok and mb_ok
    if not arguments.no_failover:
        good = failover() and good
    print(f"load: {uptime()}")
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
