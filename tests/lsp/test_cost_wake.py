"""What it cost and why it woke (issue 28 §3-§4), through the real server and
a scripted model on 127.0.0.1.

Costs: the tokens the model reports for each response are summed per run, per
node and per day, and the budgets (``agents.max_tokens_per_run`` / ``_per_day``)
stop a run with reason ``limit_reached``. Wakes: a muted node is not triggered
by another agent, a subscription a person adds fires, and the run it starts
names it — in the list of runs, the node's subscriptions and the conversation.
The command line shows the same (``remora usage``, ``ps``, ``mute``,
``subscriptions``, ``nodes NODE``).
"""

from __future__ import annotations

import pytest

from remora_lsp.testing.actions import command, model_settings, node
from remora_lsp.testing.actions import events as of_type
from remora_lsp.testing.actions import wait_for_run as finished
from remora_lsp.testing.model_server import ModelServer, Reply
from tests.lsp.conftest import EDITORS, session
from tests.lsp.helpers import eventually
from tests.lsp.test_command_line import remora

HELPER = "pkg/service.py::Service.helper"
ORDER = "pkg/service.py::order"
NEW_HELPER = '''def helper(self):
        """Order two b's."""
        return order("b", 2)'''
LONG_S = 60.0


async def chat(client, node_id: str, message: str) -> str:
    """Ask a node's agent; the run id."""
    started = await command(
        client, "remora.agent.chat", {"node_id": node_id, "message": message}
    )
    return started["run_id"]


async def runs_of(client, node_id: str) -> list[dict]:
    return await command(client, "remora.runs.list", {"node_id": node_id})


def run_in(runs: list[dict], run_id: str) -> dict:
    return next(r for r in runs if r["id"] == run_id)


@pytest.mark.parametrize("editor", EDITORS)
async def test_token_totals_are_the_sum_of_the_models_usage(editor, workspace):
    with ModelServer() as model:
        model.script.append(
            Reply(
                tool_calls=[("rewrite_self", {"new_source": NEW_HELPER})],
                usage=(1200, 80),
                cached=1000,
            )
        )
        model.script.append(Reply(text="Added a docstring.", usage=(1400, 20)))
        async with session(editor, workspace, model_settings(model)) as client:
            helper = await node(client, HELPER)
            run_id = await chat(client, helper, "Docstring please")
            assert (await finished(client, run_id))["type"] == "agent_completed"

            reported = of_type(client, "model_response", run_id=run_id)
            assert [r["usage"] for r in reported] == [
                {"input_tokens": 1200, "output_tokens": 80, "cached_tokens": 1000},
                {"input_tokens": 1400, "output_tokens": 20},
            ]
            run = run_in(await runs_of(client, helper), run_id)
            spent = run["usage"]
            assert (spent["input_tokens"], spent["output_tokens"]) == (2600, 100)
            assert (spent["cached_tokens"], spent["tokens"]) == (1000, 2700)
            assert spent["requests"] == 2 and spent["seconds"] > 0

            card = await command(client, "remora.node.get", {"node_id": helper})
            assert card["usage"]["tokens"] == 2700 and card["usage"]["runs"] == 1

            report = await command(client, "remora.usage", {"since": "today"})
            assert report["total"]["tokens"] == 2700
            by_node = {r["key"]: r for r in report["by_node"]}
            assert by_node[helper]["tokens"] == 2700
            assert by_node[helper]["name"] == "Service.helper"
            assert [d["tokens"] for d in report["by_day"]] == [2700]


async def test_a_run_budget_stops_the_run_with_limit_reached(workspace):
    settings = model_settings(model := ModelServer())
    settings["agents"] = {"max_tokens_per_run": 500}
    with model:
        # The first answer already passes the budget: its rewrite never runs.
        model.reply_tool_call(
            "rewrite_self", {"new_source": NEW_HELPER}, usage=(450, 100)
        )
        async with session("neovim", workspace, settings) as client:
            helper = await node(client, HELPER)
            run_id = await chat(client, helper, "Docstring please")
            end = await finished(client, run_id)

            assert end["type"] == "agent_failed"
            assert end["reason"] == "limit_reached"
            assert "500 tokens (agents.max_tokens_per_run)" in end["error"]
            limit = of_type(client, "limit_reached", run_id=run_id)
            assert limit[0]["limit"] == "agents.max_tokens_per_run"
            run = run_in(await runs_of(client, helper), run_id)
            assert (run["status"], run["reason"]) == ("failed", "limit_reached")
            assert run["usage"]["tokens"] == 550
            # Nothing half-applied: no proposal, one request.
            pending = await command(client, "remora.proposals.list", {})
            assert pending == [] and len(model.requests) == 1


async def test_a_day_budget_spent_ends_the_next_run_before_the_model(workspace):
    settings = model_settings(model := ModelServer())
    settings["agents"] = {"max_tokens_per_day": 1000}
    with model:
        model.reply_text("Fine.", usage=(900, 200))
        async with session("visual-studio-code", workspace, settings) as client:
            helper = await node(client, HELPER)
            first = await finished(client, await chat(client, helper, "Hello"))
            assert first["reason"] == "limit_reached"
            assert "1,000 tokens (agents.max_tokens_per_day)" in first["error"]

            second_id = await chat(client, helper, "Hello again")
            second = await finished(client, second_id)
            assert second["reason"] == "limit_reached"
            assert "did not call the model" in second["error"]
            assert len(model.requests) == 1  # the second run never asked
            report = await command(client, "remora.usage", {})
            assert report["total"]["tokens"] == 1100


async def test_a_muted_node_is_not_woken_by_another_agent(workspace):
    with ModelServer() as model:
        async with session("neovim", workspace, model_settings(model)) as client:
            helper = await node(client, HELPER)
            order = await node(client, ORDER)
            muted = await command(client, "remora.node.mute", {"node_id": order})
            assert muted == {"node_id": order, "muted": True, "changed": True}

            model.reply_tool_call(
                "message_node", {"node_id": order, "request": "Heads up"}
            )
            model.reply_text("Told order.")
            run_id = await chat(client, helper, "Tell order")
            assert (await finished(client, run_id))["type"] == "agent_completed"
            sent = of_type(client, "agent_message", run_id=run_id)
            assert sent and sent[0]["to_agent"] == order
            assert await runs_of(client, order) == []  # not even queued
            card = await command(client, "remora.node.get", {"node_id": order})
            assert card["muted"] is True

            # A person's message still wakes it, and unmuted it wakes again.
            asked = await chat(client, order, "Are you there?")
            assert (await finished(client, asked))["type"] == "agent_completed"
            await command(client, "remora.node.unmute", {"node_id": order})
            model.reply_tool_call(
                "message_node", {"node_id": order, "request": "Heads up again"}
            )
            model.reply_text("Told order again.")
            await finished(client, await chat(client, helper, "Tell order again"))

            async def woken() -> list[dict]:
                runs = await runs_of(client, order)
                return [r for r in runs if r["trigger"]["kind"] == "message"]

            runs = await eventually(woken, timeout=LONG_S)
            assert runs[0]["trigger"]["subscription"]["text"] == "messages to it"


async def test_a_subscription_added_fires_and_the_run_names_it(workspace):
    with ModelServer() as model:
        async with session(
            "visual-studio-code", workspace, model_settings(model)
        ) as client:
            helper = await node(client, HELPER)
            order = await node(client, ORDER)
            pattern = {"event_types": ["agent_completed"], "nodes": [helper]}
            added = await command(
                client,
                "remora.subscriptions.add",
                {"node_id": order, "pattern": pattern},
            )
            sub_id = added["subscription_id"]

            await finished(client, await chat(client, helper, "Hello"))

            async def woken() -> list[dict]:
                runs = await runs_of(client, order)
                return [r for r in runs if r["status"] == "done"]

            run = (await eventually(woken, timeout=LONG_S))[0]
            assert run["trigger"]["kind"] == "agent_completed"
            assert run["trigger"]["subscription"] == {"id": sub_id, "text": sub_id}

            listed = await command(
                client, "remora.subscriptions.list", {"node_id": order}
            )
            assert [s["id"] for s in listed["subscriptions"]] == [
                f"sub_msg_{order}",
                f"sub_own_{order}",
                sub_id,
            ]
            mine = listed["subscriptions"][2]
            assert mine["text"] == f"agent_completed about {helper}"
            assert mine["fired"] == 1
            assert mine["matched"][0]["run_id"] == run["id"]
            assert mine["matched"][0]["event_type"] == "agent_completed"

            history = await command(client, "remora.agent.history", {"node_id": order})
            end = next(e for e in history if e["run_id"] == run["id"])
            assert end["woken_by"] == {
                "id": sub_id,
                "text": sub_id,
                "event_type": "agent_completed",
            }

            removed = await command(
                client,
                "remora.subscriptions.remove",
                {"node_id": order, "subscription_id": sub_id},
            )
            assert removed == {"ok": True}


# ---- the command line ----------------------------------------------------------------


async def test_the_command_line_shows_costs_and_changes_what_wakes_a_node(workspace):
    with ModelServer() as model:
        model.reply_text("Hello to you.", usage=(1200, 34))
        async with session("neovim", workspace, model_settings(model)):
            code, out, err = await remora(workspace, "ask", HELPER, "Hello", "--wait")
            assert code == 0, err

            code, out, err = await remora(workspace, "usage", "--since", "today")
            assert code == 0, err
            lines = out.splitlines()
            assert lines[0].startswith("1 runs since ")
            assert lines[0].endswith(
                ": 1,234 tokens (1,200 in, 34 out, 0 cached), " + lines[0].split()[-1]
            )
            assert any(line.split()[:2] == ["DAY", "RUNS"] for line in lines), out
            (helper_row,) = [line for line in lines if "Service.helper" in line]
            assert helper_row.split()[2:7] == ["1", "1,200", "34", "0", "1,234"]

            code, out, err = await remora(workspace, "ps", "--all")
            assert code == 0, err
            assert "TOKENS/TIME" in out.splitlines()[0]
            (run_line,) = [
                line for line in out.splitlines() if "Service.helper" in line
            ]
            assert "person [messages to it]" in run_line and "1,234 / " in run_line

            code, out, err = await remora(workspace, "mute", ORDER)
            assert code == 0, err
            assert out.strip().endswith(" is muted")
            pattern = '{"event_types": ["agent_completed"]}'
            code, out, err = await remora(
                workspace, "subscriptions", ORDER, "--add", pattern
            )
            assert code == 0, err
            assert "added sub_" in err

            code, out, err = await remora(workspace, "nodes", ORDER)
            assert code == 0, err
            lines = out.splitlines()
            assert lines[0].split()[1:] == ["function", "order"]
            assert "0 runs, 0 tokens" in lines[2]
            assert any(
                line.endswith("is muted: only a person's message wakes it")
                for line in lines
            )
            kinds = [line.split()[1] for line in lines if line.startswith("sub_")]
            assert kinds == ["default", "default", "own"], out
            assert any(
                "agent_completed" in line for line in lines if line.startswith("sub_")
            )


# ---- a graph run's budget ------------------------------------------------------


@pytest.mark.workspace("batch")
async def test_a_graph_runs_budget_stops_its_later_runs(workspace):
    def answer(body: dict) -> Reply:
        return Reply(text="Nothing to change.", usage=(60, 10))

    settings = model_settings(model := ModelServer(responder=answer))
    settings["agents"] = {"max_tokens_per_graph_run": 100}
    spec = {
        "name": "look",
        "max_concurrency": 1,
        "error_policy": "continue",
        "steps": [
            {
                "id": "look",
                "bundle": "docstring",
                "targets": {"path": "inventory/**/*.py", "kind": ["function"]},
                "instruction": "Look at yourself.",
            }
        ],
    }
    with model:
        async with session("neovim", workspace, settings) as client:
            started = await command(client, "remora.graph.run", {"graph": spec})
            graph_run_id = started["graph_run_id"]
            await eventually(
                lambda: of_type(client, "graph_completed", graph_run_id=graph_run_id),
                timeout=LONG_S,
            )
            ends = of_type(client, "agent_completed") + of_type(client, "agent_failed")
            assert sorted(e["type"] for e in ends) == [
                "agent_completed",
                "agent_failed",
                "agent_failed",
            ]
            failed = of_type(client, "agent_failed")
            assert {e["reason"] for e in failed} == {"limit_reached"}
            assert all("agents.max_tokens_per_graph_run" in e["error"] for e in failed)
            # The first run spent 70, the second stopped at its answer (140 in
            # all); the third never asked the model.
            assert len(model.requests) == 2
            report = await command(client, "remora.usage", {})
            (graph,) = report["by_graph"]
            assert (graph["key"], graph["tokens"], graph["runs"]) == (
                graph_run_id,
                140,
                3,
            )
