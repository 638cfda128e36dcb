"""``remora graph run FILE|NAME [--wait]`` / ``status G`` / ``cancel G`` /
``resume G [--wait]``.

``run`` takes a graph file (YAML, the format of DESIGN §10) or the name of one
under ``.remora/graphs``. Without ``--wait`` it prints the graph run id (the
server runs it); with ``--wait`` — and always when no server runs, since the
graph then lives in this process — it waits for the end and prints the
outcome per step and node. ``resume`` goes on with a run a restart
interrupted (same id; the steps that had finished are not run again), and
waits the same way.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import yaml
from remora_core.bounded_yaml import load_yaml
from remora_core.graphs.spec import MAX_GRAPH_CHARS

from remora_cli import output

log = logging.getLogger(__name__)

NAME = "graph"
HELP = "run a batch graph, or show / cancel / resume a graph run"
POLL_S = 0.5


def add_arguments(parser) -> None:
    """``run FILE|NAME [--wait]``, ``status G``, ``cancel G``, ``resume G``."""
    parser.add_argument("action", choices=["run", "status", "cancel", "resume"])
    parser.add_argument("target", metavar="FILE|NAME|G")
    parser.add_argument("--wait", "-w", action="store_true", help="wait for the end")
    parser.add_argument("--timeout", type=float, default=3600.0, metavar="S")


class NotAGraph(Exception):
    """A graph file that cannot be read; the message says why, in one line."""


def _graph(target: str) -> object:
    """The graph a file holds (bounded YAML: no aliases, at most
    ``MAX_GRAPH_CHARS``), or the name of one under ``.remora/graphs``.
    """
    path = Path(target)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        try:
            return load_yaml(
                path.read_text(encoding="utf-8"), max_chars=MAX_GRAPH_CHARS
            )
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            problem = " ".join(str(error).split())[:300]
            raise NotAGraph(f"{target}: not a graph file: {problem}") from None
    return target


async def run(args, backend) -> int:
    """Do the action; 1 if a waited-for graph did not complete."""
    if args.action == "cancel":
        found = await backend.call("remora.graph.cancel", {"graph_run_id": args.target})
        output.emit_json(found) if args.json else output.say(
            "cancelled" if found["cancelled"] else "not running"
        )
        return 0
    if args.action == "status":
        return _show(args, await _status(backend, args.target))
    if args.action == "resume":
        started = await backend.call(
            "remora.graph.resume", {"graph_run_id": args.target}
        )
    else:
        try:
            graph = _graph(args.target)
        except NotAGraph as problem:
            output.tell(f"remora: {problem}")
            return 2  # usage: the file given is not a graph
        started = await backend.call("remora.graph.run", {"graph": graph})
    graph_run_id = started["graph_run_id"]
    if not args.wait and backend.via == "server":
        output.emit_json(started) if args.json else output.say(graph_run_id)
        return 0
    status = await asyncio.wait_for(_until_done(backend, graph_run_id), args.timeout)
    _show(args, status)
    return 0 if status["status"] == "completed" else 1


async def _status(backend, graph_run_id: str) -> dict:
    return await backend.call("remora.graph.status", {"graph_run_id": graph_run_id})


async def _until_done(backend, graph_run_id: str) -> dict:
    while True:
        status = await _status(backend, graph_run_id)
        if status["status"] != "running":
            return status
        await asyncio.sleep(POLL_S)


def _show(args, status: dict) -> int:
    if args.json:
        output.emit_json(status)
        return 0
    output.say(f"{status['graph_run_id']} {status['name']}: {status['status']}")
    rows = [
        (step["step"], node, outcome, status["proposals"].get(node, ""))
        for step in status["steps"]
        for node, outcome in step["nodes"].items()
    ]
    output.emit_table(("STEP", "NODE", "OUTCOME", "PROPOSAL"), rows, "no steps")
    return 0
