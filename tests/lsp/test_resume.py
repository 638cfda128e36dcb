"""Nothing dropped on a restart, end to end: the real server killed with
``kill -9`` and started again on the same project, a scripted model.

What is asserted is what a person sees after the restart: the question asked
again and listed as waiting, the agent going on with the answer; an
interrupted run retried with the same message; an interrupted graph run going
on without running again what had finished.
"""

from __future__ import annotations

import contextlib
import signal

import pytest
from pytest_lsp import ClientServerConfig

from remora_lsp.testing.model_server import ModelServer, Reply
from tests.lsp.conftest import (
    EDITORS,
    SERVER,
    initialize_params,
    plain,
    record_server_messages,
    session,
)
from tests.lsp.helpers import Buffer, eventually, wait_indexed
from tests.lsp.test_agent_runs import (
    LONG_S,
    chat,
    command,
    finished,
    node_of,
    of_type,
    settings,
)
from tests.lsp.test_command_line import remora
from tests.lsp.test_graphs import DOC, graph, respond
from tests.lsp.test_one_writer import stop_client


@contextlib.asynccontextmanager
async def killed_after(editor: str, workspace, model: ModelServer):
    """A session whose server is killed (``SIGKILL``) when the block ends."""
    client = await ClientServerConfig(server_command=[str(SERVER), "-v"]).start()
    try:
        record_server_messages(client)
        client.editor, client.root = editor, workspace
        await client.initialize_session(
            initialize_params(editor, workspace, initialization_options=settings(model))
        )
        await wait_indexed(client)
        yield client
        client._server.send_signal(signal.SIGKILL)
        await client._server.wait()
    finally:
        await stop_client(client)


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_question_survives_kill_9_and_the_answer_resumes_the_agent(
    editor, workspace
):
    with ModelServer() as model:
        model.reply_tool_call("ask_user", {"question": "Which colour?"})
        async with killed_after(editor, workspace, model) as client:
            helper = await node_of(
                client, Buffer(client, "pkg/service.py"), "def helper"
            )
            run_id = await chat(client, helper, "Paint the helper")
            (blocked,) = await eventually(
                lambda: of_type(client, "agent_blocked", run_id=run_id), timeout=LONG_S
            )
            # A second agent's question, which the person will not want.
            model.reply_tool_call("ask_user", {"question": "Rename it?"})
            order = await node_of(client, Buffer(client, "pkg/service.py"), "def order")
            other_run = await chat(client, order, "Tidy up")
            await eventually(
                lambda: of_type(client, "agent_blocked", run_id=other_run),
                timeout=LONG_S,
            )
        question_id = blocked["question_id"]
        asked: list[dict] = []

        def editor_asks(client) -> None:
            @client.feature("remora/askUser")
            def ask_user(params):
                asked.append(plain(params))
                return {"answer": None}  # the person does not answer now

        async with session(
            editor, workspace, settings(model), setup=editor_asks
        ) as client:
            # Asked again through the editor, and listed as waiting.
            await eventually(lambda: len(asked) == 2, timeout=LONG_S)
            assert {"question_id": question_id, "question": "Which colour?"} in asked
            waiting = await command(client, "remora.runs.list", {"status": "waiting"})
            assert [r["id"] for r in waiting] == [other_run, run_id]
            # The unwanted one: cancelling its run withdraws it.
            cancelled = await command(
                client, "remora.agent.cancel", {"run_id": other_run}
            )
            assert cancelled == {"cancelled": True}
            (withdrawn,) = await eventually(
                lambda: of_type(client, "agent_resumed", run_id=other_run)
            )
            assert withdrawn["outcome"] == "cancelled"
            card = await command(client, "remora.node.get", {"node_id": order})
            assert card["agent_status"] == "idle"
            waiting = await command(client, "remora.runs.list", {"status": "waiting"})
            assert [r["id"] for r in waiting] == [run_id]
            assert waiting[0]["question"] == {
                "question_id": question_id,
                "question": "Which colour?",
                "options": [],
            }
            card = await command(client, "remora.node.get", {"node_id": helper})
            assert card["agent_status"] == "blocked"

            model.reply_text("Blue it is.")
            answered = await command(
                client,
                "remora.agent.respond",
                {"question_id": question_id, "answer": "blue"},
            )
            assert answered == {"ok": True}
            (started,) = await eventually(
                lambda: of_type(client, "agent_started", agent_id=helper),
                timeout=LONG_S,
            )
            done = await finished(client, started["run_id"])
            assert done["type"] == "agent_completed" and done["result"] == "Blue it is."
            # A new turn with the request, the question and the answer.
            text = model.text_of(-1)
            assert "The request was: Paint the helper" in text
            assert "You asked the person: Which colour?" in text
            assert "The person answered: blue" in text
            (resumed,) = of_type(client, "agent_resumed", question_id=question_id)
            assert resumed["outcome"] == "answered"
            assert (
                await command(client, "remora.runs.list", {"status": "waiting"}) == []
            )
            again = await command(
                client,
                "remora.agent.respond",
                {"question_id": question_id, "answer": "red"},
            )
            assert again == {"ok": False}


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_run_interrupted_by_kill_9_is_retried_with_the_same_message(
    editor, workspace
):
    with ModelServer() as model:
        model.reply_delay(60, Reply(text="Too late."))
        async with killed_after(editor, workspace, model) as client:
            helper = await node_of(
                client, Buffer(client, "pkg/service.py"), "def helper"
            )
            run_id = await chat(client, helper, "Count the callers")
            await eventually(lambda: model.requests, timeout=LONG_S)
        async with session(editor, workspace, settings(model)) as client:
            runs = await command(client, "remora.runs.list", {"status": "interrupted"})
            assert [r["id"] for r in runs] == [run_id]
            model.reply_text("Two callers.")
            # From a terminal, through the server's control socket.
            code, out, err = await remora(workspace, "retry", run_id)
            assert code == 0, err
            retried = {"run_id": out.strip()}
            assert retried["run_id"].startswith("run_") and retried["run_id"] != run_id
            done = await finished(client, retried["run_id"])
            assert (
                done["type"] == "agent_completed" and done["result"] == "Two callers."
            )
            assert "Count the callers" in model.text_of(-1)
            listed = await command(client, "remora.runs.list", {})
            assert listed[0]["trigger"]["message"] == "Count the callers"
            # A run that ended is not retried: ask again instead.
            with pytest.raises(Exception, match="only a run a restart interrupted"):
                await command(
                    client, "remora.agent.retry", {"run_id": retried["run_id"]}
                )
            with pytest.raises(Exception, match="no run run_000000000000"):
                await command(
                    client, "remora.agent.retry", {"run_id": "run_000000000000"}
                )


class HangsOnTotal:
    """The graphs' scripted model (``test_graphs.respond``), hanging on the
    node ``total`` while ``hang`` is set (the server is killed meanwhile).
    """

    def __init__(self) -> None:
        self.hang = True

    def __call__(self, body: dict) -> Reply:
        messages = body["messages"]
        system = " ".join(
            str(m.get("content")) for m in messages if m.get("role") == "system"
        )
        if self.hang and "`total`" in system and messages[-1].get("role") != "tool":
            return Reply(text="Too late.", delay_s=60)
        return respond(body)


@pytest.mark.parametrize("editor", EDITORS)
@pytest.mark.workspace("batch")
async def test_a_graph_killed_mid_run_resumes_without_running_finished_nodes_again(
    editor, workspace
):
    model_script = HangsOnTotal()
    with ModelServer(responder=model_script) as model:
        async with killed_after(editor, workspace, model) as client:
            buffer = Buffer(client, "inventory/stock.py")
            count = await node_of(client, buffer, "def count")
            total = await node_of(client, buffer, "def total")
            spec = graph("continue", max_concurrency=1)
            for step in spec["steps"]:
                step["targets"] = {"ids": [count, total]}
            started = await command(client, "remora.graph.run", {"graph": spec})
            graph_run_id = started["graph_run_id"]
            # count's two steps end; total's first one hangs on the model.
            await eventually(
                lambda: of_type(
                    client, "graph_step_finished", node_id=count, last=True
                ),
                timeout=LONG_S,
            )
            await eventually(
                lambda: any("`total`" in str(r) for r in model.requests),
                timeout=LONG_S,
            )
            count_proposal = of_type(
                client, "graph_step_finished", node_id=count, last=True
            )[0]["proposal_id"]
        model_script.hang = False
        async with session(editor, workspace, settings(model)) as client:
            status = await command(
                client, "remora.graph.status", {"graph_run_id": graph_run_id}
            )
            assert status["status"] == "interrupted"
            resumed = await command(
                client, "remora.graph.resume", {"graph_run_id": graph_run_id}
            )
            assert resumed == {"graph_run_id": graph_run_id}
            done = await eventually(
                lambda: of_type(
                    client,
                    "graph_completed",
                    graph_run_id=graph_run_id,
                    outcome="completed",
                ),
                timeout=LONG_S,
            )
            assert sorted(done[0]["finished_nodes"]) == sorted([count, total])
            # count finished before the kill: it did not run again.
            assert of_type(client, "agent_started", agent_id=count) == []
            assert len(of_type(client, "agent_started", agent_id=total)) == 2
            status = await command(
                client, "remora.graph.status", {"graph_run_id": graph_run_id}
            )
            assert status["status"] == "completed"
            assert status["counts"] == {"completed": 4}
            assert status["proposals"][count] == count_proposal
            pending = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            by_node = {p["node_id"]: p["new_source"] for p in pending}
            assert by_node[count] == f"def count(x: list):\n{DOC}    return len(x)"
            assert by_node[total] == f"def total(x: list):\n{DOC}    return sum(x)"
            # Listed once; a finished run does not go on again.
            runs = await command(client, "remora.graph.runs", {})
            assert [r["graph_run_id"] for r in runs] == [graph_run_id]
            with pytest.raises(Exception, match="only an interrupted run goes on"):
                await command(
                    client, "remora.graph.resume", {"graph_run_id": graph_run_id}
                )


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_question_also_survives_a_clean_restart(editor, workspace):
    with ModelServer() as model:
        model.reply_tool_call("ask_user", {"question": "Which size?"})
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            run_id = await chat(client, helper, "Resize the helper")
            (blocked,) = await eventually(
                lambda: of_type(client, "agent_blocked", run_id=run_id), timeout=LONG_S
            )
        # The server stopped cleanly (shutdown, exit): the question waits again.
        async with session(editor, workspace, settings(model)) as client:
            waiting = await command(client, "remora.runs.list", {"status": "waiting"})
            assert [r["id"] for r in waiting] == [run_id]
            assert waiting[0]["question"]["question"] == "Which size?"
            model.reply_text("Large it is.")
            answered = await command(
                client,
                "remora.agent.respond",
                {"question_id": blocked["question_id"], "answer": "large"},
            )
            assert answered == {"ok": True}
            (started,) = await eventually(
                lambda: of_type(client, "agent_started", agent_id=helper),
                timeout=LONG_S,
            )
            done = await finished(client, started["run_id"])
            assert done["result"] == "Large it is."
            assert "The person answered: large" in model.text_of(-1)
