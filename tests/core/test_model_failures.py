"""A model endpoint that is down, slow, failing or answering garbage.

Every failure ends the run with an ``agent_failed`` whose message a person
understands, retries show as ``model_request`` attempts, and the engine keeps
serving other agents. The model is a scripted OpenAI-compatible server (or a
closed port); the project, kernel, pydantic-ai and the OpenAI client are real.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from typing import Any

import pytest
from remora_core.model import AgentStatus

from remora_lsp.testing.model_server import Reply
from tests.core.agent_support import of_type

FAST = {"retry_backoff_s": 0.01, "protocol": "tools"}


def failure(events: list[Any]) -> str:
    """The error of the run's single ``agent_failed``."""
    (failed,) = of_type(events, "agent_failed")
    assert not of_type(events, "agent_completed")
    return failed.error


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def wait_until(check, timeout: float = 10.0) -> None:
    """Poll ``check`` until it holds (the server notices a hang-up on its own)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition never held"
        await asyncio.sleep(0.02)


# ---- the endpoint ------------------------------------------------------------------


async def test_endpoint_down(shop):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    await shop.start(model={**FAST, "base_url": url, "retries": 2})
    events = await shop.ask("total", "Hello?")

    error = failure(events)
    assert error.startswith(f"Cannot reach the model server (scripted at {url})")
    assert "tried 3 times" in error and "model.base_url" in error
    requests = of_type(events, "model_request")
    assert [r.attempt for r in requests] == [1, 2, 3]
    assert [r.retry_reason for r in requests] == ["", *["connection failed"] * 2]
    assert not of_type(events, "model_response")


async def test_slow_model_times_out(shop):
    shop.server.reply_delay(10)
    await shop.start(model={**FAST, "timeout_s": 0.3, "retries": 0})
    events = await shop.ask("total", "Hello?")

    error = failure(events)
    assert "did not answer within 0.3 s (model.timeout_s)" in error
    assert error.startswith("The model (scripted at http://127.0.0.1:")


async def test_http_500_once_is_retried(shop):
    shop.server.reply_status(500, "overloaded")
    shop.server.reply_text("Fine now.")
    await shop.start(model={**FAST, "retries": 2})
    events = await shop.ask("total", "Hello?")

    requests = of_type(events, "model_request")
    assert [(r.attempt, r.retry_reason) for r in requests] == [
        (1, ""),
        (2, "HTTP 500"),
    ]
    assert of_type(events, "agent_completed")[0].result == "Fine now."
    assert not of_type(events, "agent_failed")
    assert len(shop.server.requests) == 2


async def test_a_stream_cut_short_is_retried_not_taken_as_the_answer(shop):
    # The first answer loses its last chunk (no finish_reason, no [DONE]): had it
    # been taken as complete, the run would end with "Half an ans".
    shop.server.reply_text("Half an answer that", cut_short=True)
    shop.server.reply_text("The whole answer.")
    await shop.start(model={**FAST, "retries": 2, "stream": True})
    events = await shop.ask("total", "Hello?")

    requests = of_type(events, "model_request")
    assert [r.attempt for r in requests] == [1, 2]
    assert "ended before its last chunk" in requests[1].retry_reason
    assert of_type(events, "agent_completed")[0].result == "The whole answer."
    assert len(shop.server.requests) == 2


async def test_a_stream_always_cut_short_fails_the_run_saying_so(shop):
    shop.server.responder = lambda request: Reply(text="Never finished", cut_short=True)
    await shop.start(model={**FAST, "retries": 1, "stream": True})
    events = await shop.ask("total", "Hello?")

    error = failure(events)
    assert error.startswith("The model server (scripted at http://127.0.0.1:")
    assert "cut its streamed answer short (tried 2 times)" in error
    assert "no finish_reason" in error and "model.stream: false" in error
    assert [r.attempt for r in of_type(events, "model_request")] == [1, 2]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
async def test_http_500_always_fails_the_run(shop, stream):
    shop.server.responder = lambda request: Reply(
        status=500, body=b'{"error": {"message": "the GPU is on fire"}}'
    )
    await shop.start(model={**FAST, "retries": 1, "stream": stream})
    events = await shop.ask("total", "Hello?")

    error = failure(events)
    assert "answered HTTP 500 (tried 2 times)" in error
    assert "the GPU is on fire" in error
    assert [r.attempt for r in of_type(events, "model_request")] == [1, 2]


async def test_http_400_is_not_retried(shop):
    shop.server.reply_status(400, "model 'scripted' does not support tools")
    await shop.start(model={**FAST, "retries": 3})
    events = await shop.ask("total", "Hello?")

    error = failure(events)
    assert "answered HTTP 400" in error and "tried" not in error
    assert "does not support tools" in error
    assert len(of_type(events, "model_request")) == 1
    assert len(shop.server.requests) == 1


async def test_invalid_json_answer(shop):
    shop.server.reply_raw(b"<html>502 Bad Gateway</html>")
    await shop.start(model={**FAST, "retries": 0})
    events = await shop.ask("total", "Hello?")

    error = failure(events)
    assert error.startswith("The model server (scripted at http://127.0.0.1:")
    assert "sent an answer that is not a chat completion" in error
    assert "model.base_url" in error


# ---- bad tool calls ----------------------------------------------------------------


async def test_unknown_tool_is_refused_and_the_run_goes_on(shop):
    shop.server.reply_tool_call("delete_everything", {"really": True})
    shop.server.reply_text("Sorry, I will not.")
    await shop.start(model=FAST)
    events = await shop.ask("total", "Clean up.")

    called = of_type(events, "tool_called")[0]
    assert called.tool == "delete_everything"
    result = of_type(events, "tool_result")[0]
    assert result.tool == "delete_everything" and not result.ok
    assert "delete_everything" in result.summary
    retry = [m for m in shop.server.messages(1) if m["role"] == "tool"][-1]
    assert "Unknown tool name" in retry["content"]
    assert "rewrite_self" in retry["content"]  # the tools it may use
    assert of_type(events, "agent_completed")[0].result == "Sorry, I will not."


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"node_id": 42}, "node_id: Input should be a valid string"),
        ({}, "node_id: Field required"),
        ("{not json", "Invalid JSON"),
    ],
    ids=["wrong-type", "missing", "not-json"],
)
async def test_bad_tool_arguments_are_refused_and_the_run_goes_on(
    shop, arguments, problem
):
    shop.server.reply_tool_call("read_node", arguments)
    shop.server.reply_text("Let me stop here.")
    await shop.start(model=FAST)
    events = await shop.ask("total", "Read something.")

    called = of_type(events, "tool_called")[0]
    assert called.tool == "read_node"
    result = of_type(events, "tool_result")[0]
    assert result.tool == "read_node" and not result.ok
    assert result.summary.startswith("Invalid arguments: ")
    assert problem in result.summary
    retry = [m for m in shop.server.messages(1) if m["role"] == "tool"][-1]
    assert json.loads(retry["content"])["error"]  # the model is told what was wrong
    assert problem.rsplit(": ", 1)[-1] in retry["content"]
    assert of_type(events, "agent_completed")[0].result == "Let me stop here."


# ---- the engine goes on ------------------------------------------------------------


async def test_one_agent_failing_does_not_stop_another(shop):
    def respond(request: dict[str, Any]) -> Reply:
        system = request["messages"][0]["content"]
        if f"(id {shop.id('total')})" in system:
            return Reply(status=400, body=b'{"error": {"message": "bad prompt"}}')
        return Reply(text="tax is fine.")

    shop.server.responder = respond
    project = await shop.start(model=FAST)
    await shop.send("total", "Hello?")
    await shop.send("tax", "Hello?")
    await project.swarm.runner.idle()

    events = await shop.events()
    (failed,) = of_type(events, "agent_failed")
    assert failed.agent_id == shop.id("total") and "bad prompt" in failed.error
    (completed,) = of_type(events, "agent_completed")
    assert completed.agent_id == shop.id("tax") and completed.result == "tax is fine."
    assert project.graph.get(shop.id("total")).agent_status is AgentStatus.ERROR
    assert project.graph.get(shop.id("tax")).agent_status is AgentStatus.IDLE

    shop.server.responder = None
    shop.server.reply_text("Better now.")
    events = await shop.ask("total", "Again?")
    assert of_type(events, "agent_completed")[0].result == "Better now."


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
async def test_cancelling_a_run_closes_its_request(shop, stream):
    shop.server.reply_delay(30)
    project = await shop.start(model={**FAST, "stream": stream})
    await shop.send("total", "Take your time.")
    request = await shop.wait_for("model_request")
    await wait_until(lambda: len(shop.server.requests) == 1)  # it is in flight
    assert project.graph.get(shop.id("total")).agent_status is AgentStatus.RUNNING

    assert project.swarm.runner.cancel_run(request.run_id)
    cancelled = await shop.wait_for("agent_cancelled")
    assert cancelled.run_id == request.run_id
    await project.swarm.runner.idle()
    await wait_until(lambda: shop.server.closed_early == 1)
    assert project.graph.get(shop.id("total")).agent_status is AgentStatus.IDLE
    assert not of_type(await shop.events(), "agent_failed")


async def test_run_timeout(shop):
    shop.server.reply_delay(30)
    await shop.start(model=FAST, agents={"run_timeout_s": 0.5})
    events = await shop.ask("total", "Take your time.")

    error = failure(events)
    assert "longer than 0.5 s (agents.run_timeout_s)" in error
    await wait_until(lambda: shop.server.closed_early == 1)


def keeps_calling_tools(request: dict[str, Any]) -> Reply:
    return Reply(tool_calls=[("kv_get", {"key": "again"})])


async def test_max_turns_exhausted(shop):
    shop.server.responder = keeps_calling_tools
    await shop.start(model=FAST)
    events = await shop.ask("total", "Loop.")

    error = failure(events)
    assert error.startswith(
        "The run stopped at its limit of 8 model requests (agents.max_turns)"
    )
    assert "pydantic.dev" not in error
    assert len(shop.server.requests) == 8 == len(of_type(events, "model_request"))


async def test_max_turns_from_a_bundle_wins(shop):
    bundle = shop.root / ".remora" / "bundles" / "short"
    bundle.mkdir(parents=True)
    (bundle / "bundle.yaml").write_text(
        "name: short\nlimits: {max_turns: 3}\n", encoding="utf-8"
    )
    shop.server.responder = keeps_calling_tools
    await shop.start(
        trusted=True,
        model=FAST,
        agents={"max_turns": 5},
        bundles={"function": "short"},
    )
    events = await shop.ask("total", "Loop.")

    error = failure(events)
    assert "limit of 3 model requests (limits.max_turns of bundle short)" in error
    assert len(shop.server.requests) == 3


# ---- configuration -----------------------------------------------------------------


async def test_no_model_configured(shop, monkeypatch):
    import remora_core.agents.local as local

    monkeypatch.setattr(local, "local_extra_installed", lambda: False)
    await shop.start(model={"base_url": None})
    events = await shop.ask("total", "Hello?")

    error = failure(events)
    assert "No model is configured" in error
    assert "model.base_url" in error and "remora-lsp[local]" in error
    assert not of_type(events, "model_request")
    assert shop.server.requests == []


async def test_api_key_is_sent_and_never_shown(shop, monkeypatch, caplog):
    key = "sk-test-5ecret-k3y"
    monkeypatch.setenv("TEST_KEY", key)
    caplog.set_level(logging.DEBUG)
    shop.server.reply_status(500, "try again")
    shop.server.reply_tool_call("kv_set", {"key": "a", "value": 1})
    shop.server.reply_status(401, "invalid api key")
    project = await shop.start(model={**FAST, "api_key_env": "TEST_KEY"})
    events = await shop.ask("total", "Hello?")

    assert of_type(events, "agent_failed")
    for headers in shop.server.headers:
        lowered = {k.lower(): v for k, v in headers.items()}
        assert lowered["authorization"] == f"Bearer {key}"
    assert len(shop.server.headers) == 3
    for event in await shop.events():
        assert key not in event.model_dump_json()
    for record in caplog.records:
        assert key not in record.getMessage()
        assert key not in str(record.args)
    endpoint = await project.agents.services.models.endpoint()
    assert key not in repr(endpoint) and key not in endpoint.describe()


async def test_api_key_variable_unset(shop, monkeypatch):
    monkeypatch.delenv("REMORA_TEST_MISSING_KEY", raising=False)
    await shop.start(model={**FAST, "api_key_env": "REMORA_TEST_MISSING_KEY"})
    events = await shop.ask("total", "Hello?")

    error = failure(events)
    assert "REMORA_TEST_MISSING_KEY" in error and "not set" in error
    assert shop.server.requests == []


async def test_model_that_keeps_calling_an_unknown_tool(shop):
    shop.server.responder = lambda request: Reply(tool_calls=[("nope", {})])
    await shop.start(model=FAST)
    events = await shop.ask("total", "Loop.")

    error = failure(events)
    assert "gave answers that could not be used: Tool 'nope' exceeded" in error
    assert "model.protocol: fenced" in error and "pydantic.dev" not in error
    assert {r.ok for r in of_type(events, "tool_result")} == {False}


async def test_a_deterministic_server_is_not_asked_the_same_thing_twice():
    """The embedded model at temperature 0 answers a request that made it fail
    (HTTP 500) the same way every time: no retries for it, unlike a server.
    """
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.models.function import FunctionModel
    from remora_core.agents.resilient import ObservedModel

    calls: list[int] = []

    def failing(messages, info):
        calls.append(1)
        raise ModelHTTPError(500, "local", body="does not match the peg-native format")

    attempts: list[int] = []
    for retry_http, expected in ((True, 3), (False, 1)):
        calls.clear()
        attempts.clear()
        model = ObservedModel(
            FunctionModel(failing),
            on_request=lambda attempt, reason: attempts.append(attempt),
            on_response=lambda usage, finish: None,
            retries=2,
            backoff_s=0.0,
            retry_http_errors=retry_http,
        )
        with pytest.raises(ModelHTTPError):
            await Agent(model).run("hi")
        assert len(calls) == expected
        assert attempts == list(range(1, expected + 1))
