"""Several servers for one model, and their slots (``model.endpoints``,
``model.max_concurrency``; issue 30).

Real projects and real clients against scripted servers at the HTTP boundary
(``remora_lsp.testing.model_server``): which server got each request, with
which ``Authorization`` header, what ``remora.runs.list`` shows meanwhile,
and what the person is told about bad settings. No timing is asserted: a
server holds its answer until the test has seen what it waits for.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import pytest
from remora_core.agents.endpoint_pool import EndpointPool
from remora_core.config import load_settings, validate
from remora_core.swarm.run_list import RunStatus, list_runs
from remora_core.trust import Trust, repository_wants

from remora_lsp.testing.model_server import ModelServer, Reply
from tests.core.agent_support import AgentHarness, of_type
from tests.core.swarm_support import TIMEOUT, all_events, quiet

KEY = "sk-endpoints-test-0123456789"


def refused_url() -> str:
    """A URL where nothing listens (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def authorization(server: ModelServer) -> list[str]:
    return [
        {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        for headers in server.headers
    ]


async def until(check: Any, timeout: float = TIMEOUT) -> None:
    """Poll ``check`` (sync or async) until it is true."""

    async def poll() -> None:
        while True:
            result = check()
            if asyncio.iscoroutine(result):
                result = await result
            if result:
                return
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


@pytest.fixture
async def two(tmp_path):
    """The shop project with two scripted servers of the same model."""
    with ModelServer() as first, ModelServer() as second:
        harness = AgentHarness(tmp_path / "shop", first)
        harness.second = second  # type: ignore[attr-defined]
        yield harness
        await harness.stop()


# ---- spreading --------------------------------------------------------------------


async def test_requests_in_flight_go_to_the_server_with_fewer(two):
    """Two runs at once: the second request goes to the idle server. The
    first server holds its answer until the second has a request, so both
    are in flight together.
    """
    first, second = two.server, two.second
    second_asked = threading.Event()

    def hold(request: dict[str, Any]) -> Reply:
        second_asked.wait(TIMEOUT)
        return Reply(text="First.")

    def note(request: dict[str, Any]) -> Reply:
        second_asked.set()
        return Reply(text="Second.")

    first.responder, second.responder = hold, note
    model = {
        "protocol": "tools",
        "endpoints": [{"base_url": first.url}, {"base_url": second.url}],
        "max_concurrency": 4,
    }
    project = await two.start(model=model)
    await two.send("total", "Hello?")
    await two.send("tax", "Hello?")
    await quiet(project.swarm)

    assert len(first.requests) == 1 and len(second.requests) == 1
    completed = of_type(await two.events(), "agent_completed")
    assert sorted(e.result for e in completed) == ["First.", "Second."]


def test_the_pool_picks_the_least_outstanding_and_queues_when_full():
    async def scenario() -> None:
        pool = EndpointPool([("http://a:1/v1", 2), ("http://b:1/v1", 1)])
        a, b = pool.servers
        assert pool.capacity == 3
        taken = [await pool.acquire() for _ in range(3)]
        assert taken == [a, b, a]  # a tie goes to the first listed
        waiting = asyncio.ensure_future(pool.acquire())
        await asyncio.sleep(0)
        assert not waiting.done() and pool.waiting == 1  # every slot taken
        pool.release(b)
        assert await waiting is b
        assert pool.waiting == 0

    asyncio.run(scenario())


# ---- failover ------------------------------------------------------------------


async def test_a_server_that_refuses_is_set_aside_and_tried_again_later(two):
    gone = refused_url()
    alive = two.server
    model = {
        "protocol": "tools",
        "retry_backoff_s": 30,  # a retry elsewhere does not wait for it
        "endpoints": [{"base_url": gone}, {"base_url": alive.url}],
    }
    project = await two.start(model=model)
    pool = project.agents.services.models.pool
    down, _alive = pool.servers

    events = await two.ask("total", "Hello?")
    requests = of_type(events, "model_request")
    assert [r.attempt for r in requests] == [1, 2]
    assert requests[1].retry_reason == "connection failed"
    assert of_type(events, "agent_completed")
    assert len(alive.requests) == 1
    assert not pool.up(down) and down.failures == 1

    # While it is set aside, requests go straight to the other server.
    events = await two.ask("tax", "Hello?")
    assert [r.attempt for r in of_type(events, "model_request")] == [1]
    assert len(alive.requests) == 2

    # Later it is tried again (here: its time is moved past).
    later = down.down_until + 1
    pool.clock = lambda: later
    events = await two.ask("total", "Again?")
    assert [r.attempt for r in of_type(events, "model_request")] == [1, 2]
    assert down.failures == 2  # refused again: set aside for longer
    assert down.down_until - pool.clock() > 5  # longer than the first time


async def test_a_server_that_times_out_is_set_aside(two):
    slow, fast = two.server, two.second
    slow.responder = lambda request: Reply(text="Too late.", delay_s=TIMEOUT)
    model = {
        "protocol": "tools",
        "timeout_s": 0.5,
        "endpoints": [{"base_url": slow.url}, {"base_url": fast.url}],
    }
    project = await two.start(model=model)
    events = await two.ask("total", "Hello?")
    assert [e.result for e in of_type(events, "agent_completed")] == ["Done."]
    assert len(fast.requests) == 1
    slow_server = project.agents.services.models.pool.servers[0]
    assert not project.agents.services.models.pool.up(slow_server)


async def test_when_every_server_refuses_the_run_fails_saying_so(two):
    model = {
        "protocol": "tools",
        "retries": 1,
        "retry_backoff_s": 0.01,
        "endpoints": [{"base_url": refused_url()}, {"base_url": refused_url()}],
    }
    await two.start(model=model)
    events = await two.ask("total", "Hello?")
    (failed,) = of_type(events, "agent_failed")
    assert "connect" in failed.error.lower()


# ---- backpressure ----------------------------------------------------------------


async def test_runs_beyond_the_slots_wait_as_queued(two):
    server = two.server
    go = threading.Event()

    def held(request: dict[str, Any]) -> Reply:
        go.wait(TIMEOUT)
        return Reply(text="Done.")

    server.responder = held
    model = {"protocol": "tools", "max_concurrency": 1}
    project = await two.start(model=model, agents={"max_concurrency": 4})
    swarm = project.swarm
    for name in ("total", "tax", "Cart.add"):
        await two.send(name, "Hello?")

    async def one_running_two_queued() -> bool:
        runs = await list_runs(swarm)
        statuses = sorted(r["status"] for r in runs)
        return statuses == ["queued", "queued", "running"]

    await until(lambda: len(server.requests) == 1)
    await until(one_running_two_queued)
    assert len(server.requests) == 1  # one slot: one request at a time
    queued = await list_runs(swarm, status=RunStatus.QUEUED)
    assert len(queued) == 2
    go.set()
    await quiet(swarm)
    ends = of_type([s.event for s in await all_events(swarm)], "agent_completed")
    assert len(ends) == 3


# ---- settings --------------------------------------------------------------------


def test_bad_endpoints_are_reported_and_the_rest_is_kept():
    config, problems = validate(
        {
            "model": {
                "name": "m",
                "endpoints": [
                    {"base_url": "http://gpu-1:8000/v1"},
                    {"base_url": "gpu-2:8000"},
                ],
            }
        }
    )
    assert config.model.name == "m" and config.model.endpoints == []
    (problem,) = problems
    assert problem.startswith("model.endpoints.1.base_url")
    assert "is not an http(s) URL" in problem and "http://127.0.0.1:8000/v1" in problem

    config, problems = validate(
        {
            "model": {
                "endpoints": [
                    {"base_url": "http://gpu-1:8000/v1"},
                    {"base_url": "http://gpu-1:8000/v1/", "max_concurrency": 8},
                ],
                "max_concurrency": 0,
            }
        }
    )
    assert config.model.endpoints == [] and config.model.max_concurrency is None
    assert sorted(problems) == [
        "model.endpoints: Value error, lists http://gpu-1:8000/v1 more than once",
        "model.max_concurrency: Input should be greater than or equal to 1",
    ]

    config, problems = validate(
        {"model": {"endpoints": [{"base_url": "http://a:1/v1", "slots": 3}]}}
    )
    assert problems == ["model.endpoints.0.slots: Extra inputs are not permitted"]


def test_each_endpoint_takes_its_own_slots_or_the_models():
    config, _ = validate(
        {
            "model": {
                "max_concurrency": 16,
                "endpoints": [
                    {"base_url": "http://gpu-1:8000/v1", "max_concurrency": 32},
                    {"base_url": "http://gpu-2:8000/v1"},
                ],
            },
            "agents": {"max_concurrency": 100},
        }
    )
    assert config.model.servers() == [
        ("http://gpu-1:8000/v1", 32),
        ("http://gpu-2:8000/v1", 16),
    ]
    assert config.model.slots() == 48
    assert validate({"model": {"base_url": "http://a:1/v1"}})[0].model.slots() is None


# ---- keys ------------------------------------------------------------------------


async def test_the_key_goes_to_each_of_the_persons_endpoints(two, monkeypatch):
    monkeypatch.setenv("REMORA_ENDPOINTS_KEY", KEY)
    first, second = two.server, two.second
    go = threading.Event()

    def hold(request: dict[str, Any]) -> Reply:
        go.wait(TIMEOUT)
        return Reply(text="Done.")

    first.responder = hold
    second.responder = lambda request: (go.set(), Reply(text="Done."))[1]
    model = {
        "protocol": "tools",
        "api_key_env": "REMORA_ENDPOINTS_KEY",
        "endpoints": [{"base_url": first.url}, {"base_url": second.url}],
    }
    project = await two.start(model=model)
    await two.send("total", "Hello?")
    await two.send("tax", "Hello?")
    await quiet(project.swarm)
    assert authorization(first) == [f"Bearer {KEY}"]
    assert authorization(second) == [f"Bearer {KEY}"]


async def test_a_repositorys_endpoints_get_no_key(two, monkeypatch):
    """A trusted repository lists another server among the endpoints: the
    person's key goes only to the server the person configured.
    """
    monkeypatch.setenv("REMORA_ENDPOINTS_KEY", KEY)
    mine, theirs = two.server, two.second
    two.root.joinpath("remora.yaml").write_text(
        "model:\n"
        "  endpoints:\n"
        f"    - base_url: '{theirs.url}'\n"
        f"    - base_url: '{mine.url}'\n",
        encoding="utf-8",
    )
    person = {
        "model": {
            "base_url": mine.url,
            "name": "scripted",
            "api_key_env": "REMORA_ENDPOINTS_KEY",
            "protocol": "tools",
        }
    }
    settings = load_settings(two.root, None, user=(person, []))
    assert [e.base_url for e in settings.trusted.model.endpoints] == [
        theirs.url,
        mine.url,
    ]
    wants = repository_wants(two.root, settings.repository)
    assert theirs.url.split("/")[2] in wants.hosts
    trust = Trust.for_settings(settings.person_model, trusted=True)
    go = threading.Event()

    def hold(request: dict[str, Any]) -> Reply:
        go.wait(TIMEOUT)
        return Reply(text="Done.")

    theirs.responder = hold
    mine.responder = lambda request: (go.set(), Reply(text="Done."))[1]
    await two.start(trust=trust, model=dict(settings.trusted.model.model_dump()))
    await two.send("total", "Hello?")
    await two.send("tax", "Hello?")
    await quiet(two.project.swarm)

    assert authorization(mine) == [f"Bearer {KEY}"]
    assert len(theirs.headers) == 1
    assert KEY not in authorization(theirs)[0]


# ---- the lean client -------------------------------------------------------------


async def test_the_lean_client_sends_what_the_sdk_client_sends():
    """``LeanOpenAI`` skips the SDK's walk of the body, not a byte of it."""
    from openai import AsyncOpenAI
    from remora_core.agents.lean_client import LeanOpenAI

    tool = {
        "type": "function",
        "function": {
            "name": "rewrite_self",
            "description": "Propose.",
            "parameters": {
                "type": "object",
                "properties": {"new_source": {"type": "string"}},
                "required": ["new_source"],
            },
        },
    }
    arguments: dict[str, Any] = {
        "model": "scripted",
        "messages": [
            {"role": "system", "content": "You are f."},
            {"role": "user", "content": [{"type": "text", "text": "Doc?"}]},
        ],
        "tools": [tool],
        "temperature": 0.2,
        "extra_body": {"structured_outputs": {"regex": "a+"}},
        "extra_headers": {"X-Trace": "1"},
        "timeout": 5,
    }
    with ModelServer() as server:
        for kind in (AsyncOpenAI, LeanOpenAI):
            client = kind(base_url=server.url, api_key=KEY, max_retries=0)
            answer = await client.chat.completions.create(**arguments)
            assert answer.choices[0].message.content == "Done."
            stream = await client.chat.completions.create(stream=True, **arguments)
            assert [chunk async for chunk in stream]
            await client.close()
        sdk, sdk_stream, lean, lean_stream = server.requests
        assert lean == sdk and lean_stream == sdk_stream
        assert sdk["structured_outputs"] == {"regex": "a+"}
        first, _, third, _ = server.headers
        for name in ("authorization", "x-trace", "content-type"):
            assert {k.lower(): v for k, v in third.items()}[name] == {
                k.lower(): v for k, v in first.items()
            }[name]
