"""Seeing the swarm over LSP: a node's whole conversation, the runs, and the
last answer in hover and the node card.

A scripted model answers per agent (its system prompt names the agent's id);
``Service.helper`` asks ``order`` with ``message_node`` and reads its answer
in the same cascade.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.fakes.model_server import ModelServer, Reply
from tests.lsp.conftest import EDITORS, plain, session
from tests.lsp.helpers import Buffer, eventually, raw_request
from tests.lsp.test_agent_runs import (
    LONG_S,
    chat,
    command,
    finished,
    node_of,
    of_type,
    settings,
)

LONG_ANSWER = "\n".join(f"Size {n}: {n * 10} cm" for n in range(1, 13))
"""Twelve lines: longer than a card shows whole."""


class PerAgent:
    """Replies scripted per agent id; anything else answers "Done."."""

    def __init__(self) -> None:
        self.scripts: dict[str, deque[Reply]] = {}

    def add(self, agent_id: str, *replies: Reply) -> None:
        self.scripts.setdefault(agent_id, deque()).extend(replies)

    def __call__(self, request: dict[str, Any]) -> Reply:
        system = str(request["messages"][0].get("content") or "")
        for agent_id, script in self.scripts.items():
            if f"(id {agent_id})" in system and script:
                return script.popleft()
        return Reply(text="Done.")


@pytest.mark.parametrize("editor", EDITORS)
async def test_history_runs_and_card_show_agents_asking_each_other(editor, workspace):
    script = PerAgent()
    with ModelServer(responder=script) as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            order = await node_of(client, buffer, "def order")
            script.add(
                helper,
                Reply(
                    tool_calls=[
                        ("message_node", {"node_id": order, "request": "Which sizes?"})
                    ]
                ),
                Reply(text="I asked order."),
                Reply(text="order lists twelve sizes."),
            )
            script.add(order, Reply(text=LONG_ANSWER))
            run_id = await chat(client, helper, "Ask order which sizes exist.")
            await finished(client, run_id)
            # helper's second turn, triggered by order's reply
            await eventually(
                lambda: len(of_type(client, "agent_completed", agent_id=helper)) == 2,
                timeout=LONG_S,
            )

            request, reply = of_type(client, "agent_message")
            assert (request["from_name"], request["to_name"]) == (
                "Service.helper",
                "order",
            )
            assert (reply["from_agent"], reply["to_agent"]) == (order, helper)
            assert reply["reply_to"] == request["id"]

            history = await command(client, "remora.agent.history", {"node_id": helper})
            shown = [(e["role"], e["kind"], e["text"]) for e in history]
            assert shown[:2] == [
                ("person", "message", "Ask order which sizes exist."),
                ("agent", "request", "Which sizes?"),
            ]
            # helper's first answer and order's reply race: order runs while
            # helper's first turn ends.
            assert sorted(shown[2:4]) == [
                ("agent", "answer", "I asked order."),
                ("node", "reply", LONG_ANSWER),
            ]
            assert shown[4] == ("agent", "answer", "order lists twelve sizes.")
            assert history[1]["to"] == {"id": order, "name": "order"}
            reply_entry = next(e for e in history if e["kind"] == "reply")
            assert reply_entry["from"] == {"id": order, "name": "order"}
            assert history[0]["run_id"] == run_id
            assert [e["timestamp"] for e in history] == sorted(
                e["timestamp"] for e in history
            )

            theirs = await command(client, "remora.agent.history", {"node_id": order})
            assert [(e["role"], e["kind"], e["text"]) for e in theirs] == [
                ("node", "request", "Which sizes?"),
                ("agent", "reply", LONG_ANSWER),
                ("agent", "answer", LONG_ANSWER),
            ]
            last = await command(
                client, "remora.agent.history", {"node_id": order, "limit": 1}
            )
            assert [e["kind"] for e in last] == ["answer"]

            runs = await command(client, "remora.runs.list", {})
            # Newest first (order's run may start before helper's first ends).
            assert [
                (r["node"]["name"], r["status"], r["trigger"]["text"]) for r in runs
            ] == [
                ("Service.helper", "done", f"reply from {order} (order)"),
                ("order", "done", f"message from {helper} (Service.helper)"),
                ("Service.helper", "done", "person"),
            ]
            assert runs[-1]["id"] == run_id and runs[-1]["outcome"] == "I asked order."
            assert runs[1]["outcome"] == LONG_ANSWER
            assert all(r["started_at"] <= r["ended_at"] for r in runs)
            only = await command(client, "remora.runs.list", {"node_id": order})
            assert [r["node"]["id"] for r in only] == [order]
            assert await command(client, "remora.runs.list", {"status": "failed"}) == []

            card = await command(client, "remora.node.get", {"node_id": order})
            answer = card["last_answer"]
            assert answer["truncated"] is True and answer["lines"] == 12
            assert answer["text"] == "\n".join(LONG_ANSWER.splitlines()[:6])
            line, character = buffer.position("order(name")
            hover = plain(
                await raw_request(
                    client,
                    "textDocument/hover",
                    {
                        "textDocument": {"uri": buffer.uri},
                        "position": {"line": line, "character": character},
                    },
                )
            )
            text = hover["contents"]["value"]
            assert "> Size 6: 60 cm" in text and "Size 7" not in text
            assert "12 lines in all" in text and ":RemoraHistory" in text

            card = await command(client, "remora.node.get", {"node_id": helper})
            assert card["last_answer"]["text"] == "order lists twelve sizes."
            assert card["last_answer"]["truncated"] is False


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_queued_run_is_listed_and_can_be_cancelled(editor, workspace):
    with ModelServer() as model:
        model.reply_delay(30.0, Reply(text="Slow."))
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            first = await chat(client, helper, "Think slowly.")
            await eventually(lambda: of_type(client, "agent_started", run_id=first))
            second = await chat(client, helper, "And then this.")
            runs = await command(client, "remora.runs.list", {"node_id": helper})
            assert [(r["id"], r["status"]) for r in runs] == [
                (second, "queued"),
                (first, "running"),
            ]
            assert runs[0]["trigger"]["message"] == "And then this."
            queued = await command(client, "remora.runs.list", {"status": "queued"})
            assert [r["id"] for r in queued] == [second]

            assert await command(client, "remora.agent.cancel", {"run_id": second}) == {
                "cancelled": True
            }
            cancelled = await finished(client, second)
            assert cancelled["type"] == "agent_cancelled"
            runs = await command(client, "remora.runs.list", {"node_id": helper})
            assert [(r["id"], r["status"]) for r in runs] == [
                (second, "cancelled"),
                (first, "running"),
            ]
            assert runs[0]["outcome"] == "cancelled before it started"
            await command(client, "remora.agent.cancel", {"run_id": first})
            await finished(client, first)
            runs = await command(client, "remora.runs.list", {"node_id": helper})
            assert [(r["id"], r["status"]) for r in runs] == [
                (second, "cancelled"),
                (first, "cancelled"),
            ]


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_run_waiting_for_a_person_is_listed_as_waiting(editor, workspace):
    with ModelServer() as model:
        model.reply_tool_call("ask_user", {"question": "Which colour?"})
        model.reply_text("Blue it is.")

        def setup(client):
            @client.feature("remora/askUser")
            async def ask_user(params):
                asked.append(params)
                await answered.wait()  # the person thinks for a while
                return {"answer": "blue"}

        asked: list[Any] = []
        answered = asyncio.Event()
        async with session(editor, workspace, settings(model), setup=setup) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            run_id = await chat(client, helper, "Pick a colour.")
            await eventually(lambda: of_type(client, "agent_blocked"), timeout=LONG_S)

            async def status():
                runs = await command(client, "remora.runs.list", {"node_id": helper})
                return runs[0]["status"] if runs else None

            assert (await status()) == "waiting"
            waiting = await command(client, "remora.runs.list", {"status": "waiting"})
            assert [r["id"] for r in waiting] == [run_id]
            answered.set()
            await finished(client, run_id)
            assert (await status()) == "done"
            history = await command(client, "remora.agent.history", {"node_id": helper})
            assert [(e["role"], e["kind"], e["text"]) for e in history] == [
                ("person", "message", "Pick a colour."),
                ("agent", "question", "Which colour?"),
                ("person", "answer_given", "blue"),
                ("agent", "answer", "Blue it is."),
            ]


@pytest.mark.parametrize("editor", EDITORS)
async def test_bad_history_and_run_arguments_are_explained(editor, workspace):
    async with session(editor, workspace) as client:
        for name, argument, words in [
            ("remora.agent.history", {"node_id": "nope"}, "a node is named by its id"),
            ("remora.agent.history", {"node_id": "rm_zzzzzzzz"}, "no node with id"),
            ("remora.agent.history", {"node_id": "rm_zzzzzzzz", "limit": 0}, "limit"),
            ("remora.runs.list", {"status": "sleeping"}, "status: Input should be"),
            ("remora.runs.list", {"node_id": 3}, "node_id: Input should be a valid"),
        ]:
            with pytest.raises(JsonRpcException) as failure:
                await command(client, name, argument)
            assert words in str(failure.value), (name, argument, failure.value)
