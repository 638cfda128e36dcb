"""A project that emits events and runs turns until it is killed (crash tests).

``python worker.py ROOT LOG GENERATION SEED [DIE_AT]`` opens the project at
``ROOT`` (its real store, ``ROOT/.remora/remora.db``), prints ``starting`` once
imported, makes sure the custom subscriptions of :data:`SPECS` exist (adding
those that are missing, on the first start), prints ``ready`` and then loops
forever: it emits events (chats to random agents, tagged messages,
``content_changed`` of random nodes) while agents' turns run (each sleeps a
little, then messages its parent or children, so cascades grow until the
cascade rules stop them).

Every time an ``await`` of ``Swarm.emit`` (directly or through ``Turn.emit``)
returns, and every time ``Swarm.subscribe`` returns, one line is appended to
``LOG`` with a single ``write`` on an ``O_APPEND`` descriptor: the engine has
said it is committed, so it must survive a ``SIGKILL`` from then on.

Lines: ``ev GEN SOURCE EVENT_ID`` (SOURCE: ``main`` for the loop, ``turn``
for a turn) and ``sub GEN SUB_ID AGENT_ID PATTERN_JSON``.

:func:`open_project` is shared with the test, which starts the engine on the
same store after each kill to check what survived. With ``DIE_AT`` (an event
type), the worker kills itself with ``SIGKILL`` just before appending the first
event of that type: a crash at one exact point.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests.project_harness

from remora_core.config import RemoraConfig
from remora_core.events.models import (
    AgentMessage,
    ContentChanged,
    Event,
    HumanChat,
    ToolCalled,
)
from remora_core.events.store import StoredEvent
from remora_core.events.subscriptions import Pattern
from remora_core.model import NodeStatus
from remora_core.swarm.turns import Turn, TurnFunction

from tests.project_harness import Project

SOURCE = '''"""A small module for the crash test."""


class Alpha:
    def one(self):
        return 1

    def two(self):
        return self.one() + 1


class Beta:
    def run(self):
        return helper()

    def stop(self):
        return None


def helper():
    return 42
'''

SPECS: list[tuple[str, Pattern]] = [
    (
        "Alpha",
        Pattern(event_types=("agent_message",), from_agents=("rm_*",), tags=("alpha",)),
    ),
    ("Beta.run", Pattern(event_types=("content_changed",), path_glob="app*.py")),
    ("helper", Pattern(event_types=("agent_completed", "agent_failed"))),
    (
        "Beta",
        Pattern(event_types=("human_chat", "agent_message"), to_agent="__ALPHA_ONE__"),
    ),
]
"""(qualified name of the holder, pattern) of the custom subscriptions; the
to_agent placeholder is replaced by the id of ``Alpha.one``."""

CONFIG = {
    "swarm": {"cooldown_ms": 10, "max_depth": 3, "turn_budget": 6},
    "agents": {"max_concurrency": 3},
}


def config() -> RemoraConfig:
    """The settings every start uses."""
    return RemoraConfig.model_validate(CONFIG)


def write_workspace(root: Path) -> None:
    """The project's one source file."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text(SOURCE, encoding="utf-8")


def by_name(project: Project) -> dict[str, str]:
    """Qualified name -> id of the active nodes (the file node under its path)."""
    return {
        node.qualified_name: node.id
        for node in project.graph.active()
        if node.status is NodeStatus.ACTIVE
    }


def resolved_specs(project: Project) -> list[tuple[str, Pattern]]:
    """SPECS with holder names and placeholders replaced by ids."""
    names = by_name(project)
    specs: list[tuple[str, Pattern]] = []
    for holder, pattern in SPECS:
        if pattern.to_agent == "__ALPHA_ONE__":
            pattern = pattern.model_copy(update={"to_agent": names["Alpha.one"]})
        specs.append((names[holder], pattern))
    return specs


async def open_project(root: Path, turn_function: TurnFunction) -> Project:
    """Start the project at ``root`` (its store, reconciliation, the swarm)."""
    project = Project(root, config(), turn_function=turn_function)
    await project.start()
    return project


def pattern_json(pattern: Pattern) -> dict[str, object]:
    """A pattern as the store keeps it (for comparisons)."""
    return json.loads(pattern.model_dump_json(exclude_none=True))


class Log:
    """The side log of what the engine said was committed."""

    def __init__(self, path: Path, generation: int) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.generation = generation

    def write(self, *fields: str) -> None:
        line = " ".join((fields[0], str(self.generation), *fields[1:])) + "\n"
        os.write(self.fd, line.encode())


async def main(root: Path, log_path: Path, generation: int, seed: int) -> None:
    rng = random.Random(seed)
    log = Log(log_path, generation)
    holder: dict[str, Project] = {}

    async def turn(turn: Turn) -> str:
        await asyncio.sleep(rng.uniform(0.002, 0.02))
        project = holder["project"]
        node = project.graph.get(turn.agent_id)
        if rng.random() < 0.1:
            raise RuntimeError("this agent fails sometimes")
        stored = await turn.emit(
            ToolCalled(
                agent_id=turn.agent_id,
                tool="read_node",
                arguments={"id": turn.agent_id},
            )
        )
        log.write("ev", "turn", stored.event.id)
        target = (
            "parent" if node is not None and node.parent_id else "broadcast:children"
        )
        for recipient in project.swarm.recipients(turn.agent_id, target):
            stored = await turn.emit(
                AgentMessage(
                    from_agent=turn.agent_id,
                    to_agent=recipient,
                    message=f"seen {len(turn.events)} event(s)",
                    tags=("alpha",) if rng.random() < 0.3 else (),
                )
            )
            log.write("ev", "turn", stored.event.id)
        return "ok"

    print("starting", flush=True)
    project = await open_project(root, turn)
    holder["project"] = project
    swarm = project.swarm
    for agent, pattern in resolved_specs(project):
        if any(s.pattern == pattern for s in swarm.index.of_agent(agent)):
            continue
        subscription_id = await swarm.subscribe(agent, pattern)
        log.write(
            "sub", subscription_id, agent, pattern.model_dump_json(exclude_none=True)
        )
    print("ready", flush=True)

    names = by_name(project)
    agents = sorted(names.values())
    while True:
        roll = rng.random()
        if roll < 0.6:
            event = HumanChat(to_agent=rng.choice(agents), message="what do you do?")
        elif roll < 0.85:
            event = AgentMessage(
                from_agent=rng.choice(agents),
                to_agent=rng.choice(agents),
                message="hello",
                tags=("alpha",),
            )
        else:
            node = project.graph.get(rng.choice(agents))
            assert node is not None
            event = ContentChanged(path=node.file_path, node_ids=(node.id,))
        stored = await swarm.emit(event)
        log.write("ev", "main", stored.event.id)
        await asyncio.sleep(rng.uniform(0, 0.004))


def die_before_appending(event_type: str) -> None:
    """Make this process SIGKILL itself when an event of ``event_type`` is about
    to be appended: a crash at one exact point, for a deterministic test.
    """
    from remora_core.events.store import EventStore

    enqueue = EventStore.enqueue  # every event enters the log through it

    def enqueue_or_die(self: EventStore, event: Event) -> asyncio.Future[StoredEvent]:
        if event.type == event_type:
            os.kill(os.getpid(), signal.SIGKILL)
        return enqueue(self, event)

    EventStore.enqueue = enqueue_or_die  # type: ignore[method-assign]


if __name__ == "__main__":
    root_arg, log_arg, generation_arg, seed_arg = sys.argv[1:5]
    if len(sys.argv) > 5:
        die_before_appending(sys.argv[5])
    asyncio.run(main(Path(root_arg), Path(log_arg), int(generation_arg), int(seed_arg)))
