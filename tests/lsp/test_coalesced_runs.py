"""Every run id the editor is given ends with an event (issue 11 part 5).

Quick chats to one agent are coalesced into one turn; each ``remora.agent.chat``
still answered with its own run id. Each of those ids must end with a
``remora/event`` (the coalesced ones naming the run that answered them), and
``remora.agent.cancel`` must work on each.

The five chats are sent while a first, slow turn of the same agent runs, so
they are deferred and coalesced whatever the speed of the machine.
"""

from __future__ import annotations

from remora_lsp.testing.model_server import ModelServer, Reply
from tests.lsp.conftest import session
from tests.lsp.helpers import Buffer, eventually
from tests.lsp.test_agent_runs import command, node_of, of_type, settings


async def chat(client, node_id, message) -> str:
    started = await command(
        client, "remora.agent.chat", {"node_id": node_id, "message": message}
    )
    return started["run_id"]


def ended(client, run_id, kind):
    return [e for e in of_type(client, kind) if e["run_id"] == run_id]


async def five_chats_during_a_slow_turn(client, model, helper) -> tuple[str, list[str]]:
    model.script.append(Reply(text="slow", delay_s=30))
    first = await chat(client, helper, "hi")
    await eventually(lambda: len(model.requests) == 1)  # the first turn runs
    return first, [await chat(client, helper, f"#{n}") for n in range(5)]


async def test_five_quick_chats_each_end_with_an_event(workspace):
    with ModelServer() as model:
        async with session("visual-studio-code", workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            first, run_ids = await five_chats_during_a_slow_turn(client, model, helper)
            await command(client, "remora.agent.cancel", {"run_id": first})
            for run_id in run_ids:
                await eventually(lambda r=run_id: ended(client, r, "agent_completed"))
            turns = [t["run_id"] for t in of_type(client, "agent_started")]
            assert turns == [first, run_ids[0]]  # the five: one turn
            answered_by = {
                run_id: ended(client, run_id, "agent_completed")[0].get("answered_by")
                for run_id in run_ids
            }
            assert answered_by[run_ids[0]] is None
            assert {answered_by[r] for r in run_ids[1:]} == {run_ids[0]}
            assert len(model.requests) == 2


async def test_cancelling_any_of_them_cancels_the_turn_that_answers_them(workspace):
    with ModelServer() as model:
        async with session("visual-studio-code", workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            first, run_ids = await five_chats_during_a_slow_turn(client, model, helper)
            model.script.append(Reply(text="too late", delay_s=30))
            await command(client, "remora.agent.cancel", {"run_id": first})
            await eventually(lambda: len(model.requests) == 2)  # the five's turn
            cancelled = await command(
                client, "remora.agent.cancel", {"run_id": run_ids[2]}
            )
            assert cancelled == {"cancelled": True}
            for run_id in run_ids:
                await eventually(lambda r=run_id: ended(client, r, "agent_cancelled"))
            assert (
                ended(client, run_ids[2], "agent_cancelled")[0]["answered_by"]
                == (run_ids[0])
            )
            again = await command(client, "remora.agent.cancel", {"run_id": run_ids[4]})
            assert again == {"cancelled": False}  # already over
