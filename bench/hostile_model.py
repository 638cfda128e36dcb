"""What one hostile model reply can create, without and with the ``limits``.

A scripted OpenAI-compatible server (``remora_lsp.testing.model_server``)
answers an agent's first request with one hostile reply: 5 tool calls with
2 MB arguments, 300 subscriptions, 40 memory values of 60 KB, 40 questions at
once, then a 2 MB
answer. The same reply is played twice in this run against a real project:
``unbounded`` (every ``limits`` setting raised out of reach, as on main before
issue 11 part 4) and ``bounded`` (the defaults). Printed per run: the largest
event (what one ``remora/event`` notification carries), the store's growth
(database + WAL, bytes), subscriptions and memory kept, questions opened, and
the ratio unbounded / bounded.

Run from the repository root: ``.venv/bin/python bench/hostile_model.py``.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from remora_lsp.testing.model_server import ModelServer, Reply
from tests.core.agent_support import AgentHarness
from tests.core.swarm_support import all_events

UNBOUNDED = {
    "event_argument_chars": 10**9,
    "tool_calls_per_run": 10**6,
    "subscriptions_per_agent": 10**6,
    "kv_bytes_per_agent": 10**12,
    "answer_chars": 10**9,
    "history_bytes": 10**12,
}


def hostile_reply() -> Reply:
    """The one reply: every kind of thing a reply can make, in bulk."""
    huge = "x" * 2_000_000
    calls: list[tuple[str, object]] = [("kv_get", {"key": huge}) for _ in range(5)]
    calls += [
        ("subscribe", {"event_types": ["content_changed"], "tags": [f"t{i}"]})
        for i in range(300)
    ]
    calls += [("kv_set", {"key": f"k{i}", "value": "v" * 60_000}) for i in range(40)]
    calls += [("ask_user", {"question": f"Question {i}?"}) for i in range(40)]
    return Reply(tool_calls=calls)


def store_bytes(root: Path) -> int:
    """The store's size on disk: the database and its WAL."""
    folder = root / ".remora"
    return sum(p.stat().st_size for p in folder.glob("remora.db*"))


async def measure(name: str, limits: dict[str, int]) -> dict[str, float]:
    """Play the hostile reply against a fresh project with ``limits``."""
    with tempfile.TemporaryDirectory() as tmp, ModelServer() as server:
        shop = AgentHarness(Path(tmp) / "shop", server)
        project = await shop.start(
            model={"protocol": "tools"},
            agents={"question_timeout_s": 0.5},
            limits=limits,
        )
        before = store_bytes(shop.root)
        seen = len(await all_events(project.swarm))
        server.script.append(hostile_reply())
        server.reply_text("blah " * 400_000)
        await shop.ask("total", "Do your worst.", timeout=300)
        events = (await all_events(project.swarm))[seen:]
        questions = sum(1 for s in events if s.event.type == "agent_blocked")
        refusals = sum(1 for s in events if s.event.type == "limit_reached")
        held = len(project.swarm.index.of_agent(shop.id("total")))
        kv = project.agents.services.kv
        memory = len(await kv.keys(shop.id("total")))
        await shop.stop()
        grown = store_bytes(shop.root) - before
        largest = max(len(s.event.model_dump_json()) for s in events)
    figures = {
        "largest event (bytes)": largest,
        "store growth (bytes)": grown,
        "events": len(events),
        "subscriptions kept": held,
        "memory keys kept": memory,
        "questions opened": questions,
        "limit_reached events": refusals,
    }
    print(f"{name}:")
    for key, value in figures.items():
        print(f"  {key:24} {value:>14,}")
    return figures


async def main() -> None:
    """Both runs, then the ratios."""
    unbounded = await measure("unbounded", UNBOUNDED)
    bounded = await measure("bounded (defaults)", {})
    print("ratio unbounded / bounded:")
    for key in ("largest event (bytes)", "store growth (bytes)"):
        print(f"  {key:24} {unbounded[key] / max(1, bounded[key]):>14.1f}x")


if __name__ == "__main__":
    asyncio.run(main())
