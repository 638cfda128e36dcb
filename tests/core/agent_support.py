"""Helpers for the agent tests: a real project on a scripted model server.

The project, its store, the kernel, pydantic-ai and the OpenAI client are all
real; only the model is scripted, at its HTTP boundary
(``remora_lsp.testing.model_server``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from remora_core.events.models import HumanChat
from remora_core.trust import Trust

from remora_lsp.testing.model_server import ModelServer
from tests.core.swarm_support import TIMEOUT, all_events, node, quiet, settings
from tests.project_harness import Project

SHOP = '''"""A tiny shop."""


def total(prices):
    return sum(prices)


def tax(amount, rate=0.2):
    return amount * rate


class Cart:
    """Items to buy."""

    def __init__(self):
        self.items = []

    def add(self, price):
        self.items.append(price)
        return total(self.items)

    def checkout(self):
        subtotal = total(self.items)
        return subtotal + tax(subtotal)
'''


class AgentHarness:
    """A project in ``root`` whose agents talk to ``server``."""

    def __init__(self, root: Path, server: ModelServer) -> None:
        self.root = root
        self.server = server
        self.project: Project | None = None
        self.told: list[str] = []
        """Messages the project showed the user."""
        root.mkdir(parents=True, exist_ok=True)
        (root / "shop.py").write_text(SHOP, encoding="utf-8")

    async def start(
        self, *, trusted: bool = False, trust: Trust | None = None, **sections: Any
    ) -> Project:
        """Start the project; ``trusted``: the repository's own bundles,
        extensions and tools are used (the person trusts it); ``trust``: all
        of it given.
        """
        model = {
            "base_url": self.server.url,
            "name": "scripted",
            "retry_backoff_s": 0.01,
            **sections.pop("model", {}),
        }
        config = settings(model=model, **sections)
        self.project = Project(
            self.root,
            config,
            notify=self.told.append,
            trust=trust or Trust.for_settings(config.model, trusted=trusted),
        )
        await self.project.start()
        await quiet(self.project.swarm)
        return self.project

    async def stop(self) -> None:
        if self.project is not None:
            await self.project.close()
            self.project = None

    def id(self, qualified_name: str, path: str = "shop.py") -> str:
        assert self.project is not None
        return node(self.project.graph, path, qualified_name).id

    async def ask(
        self,
        qualified_name: str,
        message: str,
        timeout: float = TIMEOUT,
        path: str = "shop.py",
    ) -> list[Any]:
        """A person asks a node's agent (of ``path``); the events of the run,
        once quiet.
        """
        assert self.project is not None
        swarm = self.project.swarm
        before = (await all_events(swarm))[-1].seq if await all_events(swarm) else 0
        to = self.id(qualified_name, path)
        await swarm.emit(HumanChat(to_agent=to, message=message))
        await quiet(swarm, timeout)
        return [s.event for s in await all_events(swarm) if s.seq > before]

    async def send(self, qualified_name: str, message: str) -> None:
        """A person asks, without waiting for the run."""
        assert self.project is not None
        await self.project.swarm.emit(
            HumanChat(to_agent=self.id(qualified_name), message=message)
        )

    async def events(self) -> list[Any]:
        assert self.project is not None
        return [s.event for s in await all_events(self.project.swarm)]

    async def wait_for(self, kind: str, timeout: float = TIMEOUT) -> Any:
        """The first event of ``kind`` (polling the log)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            found = [e for e in await self.events() if e.type == kind]
            if found:
                return found[0]
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"no {kind} event within {timeout} s")
            await asyncio.sleep(0.02)


def of_type(events: list[Any], kind: str) -> list[Any]:
    """The events of one type."""
    return [e for e in events if e.type == kind]
