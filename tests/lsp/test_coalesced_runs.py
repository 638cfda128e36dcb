"""Every run id the editor is given ends with an event (issue 11 part 5).

Quick chats to one agent are coalesced into one turn; each ``remora.agent.chat``
still answered with its own run id. Each of those ids must end with a
``remora/event`` (the coalesced ones naming the run that answered them), and
``remora.agent.cancel`` must work on each.
"""

from __future__ import annotations

from tests.fakes.model_server import ModelServer, Reply
from tests.lsp.conftest import session
from tests.lsp.helpers import Buffer, eventually
from tests.lsp.test_agent_runs import command, node_of, of_type, settings


async def chat_five_times(client, node_id) -> list[str]:
    return [
        (
            await command(
                client, "remora.agent.chat", {"node_id": node_id, "message": f"#{n}"}
            )
        )["run_id"]
        for n in range(5)
    ]


def ended(client, run_id, kind):
    return [e for e in of_type(client, kind) if e["run_id"] == run_id]


async def test_five_quick_chats_each_end_with_an_event(workspace):
    with ModelServer() as model:
        config = settings(model)
        config["swarm"]["cooldown_ms"] = 4000  # the five arrive during cooldown
        async with session("visual-studio-code", workspace, config) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            first = await command(
                client, "remora.agent.chat", {"node_id": helper, "message": "hi"}
            )
            await eventually(lambda: ended(client, first["run_id"], "agent_completed"))
            run_ids = await chat_five_times(client, helper)
            for run_id in run_ids:
                await eventually(lambda r=run_id: ended(client, r, "agent_completed"))
            turns = of_type(client, "agent_started")
            assert len(turns) == 2  # the five were answered by one turn
            answered_by = {
                run_id: ended(client, run_id, "agent_completed")[0].get("answered_by")
                for run_id in run_ids
            }
            assert answered_by[run_ids[0]] is None
            assert {answered_by[r] for r in run_ids[1:]} == {run_ids[0]}
            assert len(model.requests) == 2


async def test_cancelling_any_of_them_cancels_the_turn_that_answers_them(workspace):
    with ModelServer() as model:
        config = settings(model)
        config["swarm"]["cooldown_ms"] = 4000
        async with session("visual-studio-code", workspace, config) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            first = await command(
                client, "remora.agent.chat", {"node_id": helper, "message": "hi"}
            )
            await eventually(lambda: ended(client, first["run_id"], "agent_completed"))
            model.script.append(Reply(text="too late", delay_s=30))
            run_ids = await chat_five_times(client, helper)
            await eventually(lambda: len(of_type(client, "model_request")) == 2)
            cancelled = await command(
                client, "remora.agent.cancel", {"run_id": run_ids[2]}
            )
            assert cancelled == {"cancelled": True}
            for run_id in run_ids:
                await eventually(lambda r=run_id: ended(client, r, "agent_cancelled"))
            assert (
                await command(client, "remora.agent.cancel", {"run_id": run_ids[4]})
            ) == {"cancelled": False}  # already over
