"""A node's conversation from the event log, and the last answer a card shows."""

from __future__ import annotations

from remora_core.events.models import HumanChat
from remora_core.history.conversation import conversation, last_answer
from remora_core.swarm.pipeline import Swarm
from remora_core.swarm.run_list import list_runs

from tests.core.swarm_support import build_graph, node, quiet, settings

TWO = "def a():\n    pass\n\n\ndef b():\n    pass\n"
LONG = "\n".join(f"line {n}" for n in range(1, 11))


async def test_the_conversation_of_two_agents_asking_each_other():
    graph = build_graph({"pp.py": TWO})
    a, b = node(graph, "pp.py", "a").id, node(graph, "pp.py", "b").id

    async def turn(turn):
        if turn.agent_id == b:
            return LONG
        if turn.events[0].event.type == "human_chat":
            await turn.ask(b, "Tell me everything.")
            return "Asked."
        return "Short answer."

    swarm = Swarm(None, graph, settings(), turn_function=turn)
    await swarm.start()
    try:
        await swarm.emit(HumanChat(to_agent=a, message="Ask b."))
        await quiet(swarm)
        mine = await conversation(swarm, a)
        shown = [(e["role"], e["kind"], e["text"]) for e in mine]
        assert shown[:2] == [
            ("person", "message", "Ask b."),
            ("agent", "request", "Tell me everything."),
        ]
        # a's first answer and b's reply race (b runs while a's turn ends).
        assert sorted(shown[2:4]) == [
            ("agent", "answer", "Asked."),
            ("node", "reply", LONG),
        ]
        assert shown[4] == ("agent", "answer", "Short answer.")
        assert mine[1]["to"] == {"id": b, "name": "b"}
        reply = next(e for e in mine if e["kind"] == "reply")
        assert reply["from"] == {"id": b, "name": "b"}
        theirs = await conversation(swarm, b, limit=2)
        assert [(e["role"], e["kind"]) for e in theirs] == [
            ("agent", "reply"),
            ("agent", "answer"),
        ]
        assert (await last_answer(swarm.events, a)) == {
            "text": "Short answer.",
            "truncated": False,
            "lines": 1,
            "run_id": mine[-1]["run_id"],
            "timestamp": mine[-1]["timestamp"],
        }
        long = await last_answer(swarm.events, b)
        assert long is not None and long["truncated"] and long["lines"] == 10
        assert long["text"] == "\n".join(LONG.splitlines()[:6])
        assert await last_answer(swarm.events, "rm_zzzzzzzz") is None
        # Without a database no run is recorded, so none is listed.
        assert await list_runs(swarm) == []
    finally:
        await swarm.close()
