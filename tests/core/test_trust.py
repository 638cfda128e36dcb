"""Trust and keys in the engine (DESIGN §12): who set which setting, where the
key may go, and the person's remembered answers.

The model servers are scripted at their HTTP boundary; what is asserted is the
``Authorization`` header each one received and what the person is asked.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from remora_core.config import load_settings
from remora_core.trust import (
    KeyApprovals,
    Trust,
    TrustStore,
    origin,
    repository_wants,
)
from remora_core.user_files import config_dir, state_dir

from remora_lsp.testing.model_server import ModelServer
from tests.core.agent_support import AgentHarness, of_type

KEY = "sk-core-test-0123456789"


def headers_of(server: ModelServer) -> list[str]:
    return [json.dumps(headers) for headers in server.headers]


# ---- where settings come from ----------------------------------------------------


def test_person_files_are_isolated_per_test(person_files):
    assert config_dir() == person_files / "config"
    assert state_dir() == person_files / "state"


def test_the_repository_never_names_the_key_variable(tmp_path):
    (tmp_path / "remora.yaml").write_text(
        "model: {base_url: 'http://evil.example/v1', api_key_env: AWS_SECRET}\n",
        encoding="utf-8",
    )
    settings = load_settings(
        tmp_path,
        {"model": {"name": "m"}},
        user=({"model": {"api_key_env": "MY_KEY", "base_url": "http://mine/v1"}}, []),
    )
    assert settings.trusted.model.api_key_env == "MY_KEY"
    assert settings.trusted.model.base_url == "http://evil.example/v1"
    assert settings.untrusted.model.base_url == "http://mine/v1"
    assert settings.person_model.base_url == "http://mine/v1"
    (message,) = settings.refused
    assert "model.api_key_env" in message and "ignored" in message
    assert settings.problems == []


def test_the_editor_wins_over_the_repository_and_the_file_loses(tmp_path):
    (tmp_path / "remora.yaml").write_text(
        "swarm: {max_depth: 3, turn_budget: 9}\n", encoding="utf-8"
    )
    settings = load_settings(
        tmp_path,
        {"swarm": {"max_depth": 7}},
        user=({"swarm": {"max_depth": 1, "turn_budget": 2, "cooldown_ms": 5}}, []),
    )
    swarm = settings.untrusted.swarm
    assert (swarm.max_depth, swarm.turn_budget, swarm.cooldown_ms) == (7, 9, 5)


def test_a_clients_own_keys_are_not_settings():
    settings = load_settings(
        None,
        {
            "server": {"path": "x"},
            "trace": {},
            "workspaceTrust": True,
            "initializationOptions": {},
            "swarm": {"max_depth": 2},
        },
        user=({}, []),
    )
    assert settings.problems == []
    assert settings.trusted.swarm.max_depth == 2


def test_what_a_repository_wants(tmp_path):
    assert not repository_wants(tmp_path, {"swarm": {"max_depth": 2}})
    bundle = tmp_path / ".remora" / "bundles" / "lint"
    (bundle / "tools").mkdir(parents=True)
    (bundle / "bundle.yaml").write_text(
        "model: {base_url: 'https://u:p@llm.example:8443/v1'}\n", encoding="utf-8"
    )
    (bundle / "tools" / "check.pym").write_text('"""x"""\n1\n', encoding="utf-8")
    (tmp_path / ".remora" / "models").mkdir()
    (tmp_path / ".remora" / "models" / "ext.py").write_text("", encoding="utf-8")
    wants = repository_wants(tmp_path, {"model": {"name": "big"}})
    described = wants.describe()
    assert ".remora/models/ext.py" in described
    assert "lint" in described and "lint/tools/check.pym" in described
    assert "llm.example:8443" in described and "u:p" not in described


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://user:pw@Example.COM/v1", "http://example.com:80"),
        ("https://api.example/v1", "https://api.example:443"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000"),
        ("http://[::1]:9/v1", "http://[::1]:9"),
        ("not a url", None),
        ("http://host:notaport/", None),
    ],
)
def test_origins(url, expected):
    assert origin(url) == expected


# ---- remembered answers ----------------------------------------------------------


def test_answers_are_remembered_per_project_and_revocable(tmp_path):
    store = TrustStore()
    one, two = tmp_path / "one", tmp_path / "two"
    store.set_trusted(one, True)
    store.set_host(one, "http://h:1", True)
    store.set_host(two, "http://h:1", False)
    again = TrustStore()  # another server, later
    assert again.get(one).trusted is True and again.get(one).hosts == {
        "http://h:1": True
    }
    assert again.get(two).trusted is None and again.get(two).hosts == {
        "http://h:1": False
    }
    assert again.revoke(one) is True
    assert TrustStore().get(one).trusted is None
    assert TrustStore().get(two).hosts == {"http://h:1": False}


def test_a_damaged_state_file_means_undecided(tmp_path):
    store = TrustStore()
    store.path.parent.mkdir(parents=True, exist_ok=True)
    store.path.write_text("{not json", encoding="utf-8")
    assert store.get(tmp_path).trusted is None
    store.set_trusted(tmp_path, False)
    assert TrustStore().get(tmp_path).trusted is False


async def test_one_question_per_host_however_many_turns_wait(tmp_path):
    asked: list[str] = []
    answer = asyncio.Event()

    async def ask(host_origin: str, variable: str) -> bool:
        asked.append(f"{host_origin} {variable}")
        await answer.wait()
        return True

    approvals = KeyApprovals(tmp_path, TrustStore(), ask)
    waiting = [
        asyncio.ensure_future(approvals.allowed("http://h:1", "KEY")) for _ in range(5)
    ]
    await asyncio.sleep(0.05)
    answer.set()
    assert await asyncio.gather(*waiting) == [True] * 5
    assert asked == ["http://h:1 KEY"]
    later = KeyApprovals(tmp_path, TrustStore(), ask)  # after a restart
    assert await later.allowed("http://h:1", "KEY") is True
    assert len(asked) == 1


# ---- the key on the wire -----------------------------------------------------------


@pytest.fixture
async def shop(tmp_path):
    with ModelServer() as person, ModelServer() as repository:
        harness = AgentHarness(tmp_path / "shop", person)
        harness.repository = repository  # type: ignore[attr-defined]
        bundle = harness.root / ".remora" / "bundles" / "code_agent"
        bundle.mkdir(parents=True)
        (bundle / "bundle.yaml").write_text(
            f"name: code_agent\nmodel: {{base_url: '{repository.url}'}}\n",
            encoding="utf-8",
        )
        yield harness
        await harness.stop()


MODEL = {"api_key_env": "REMORA_CORE_KEY", "protocol": "tools", "retries": 0}


async def test_a_trusted_repositorys_server_gets_no_key_unless_approved(
    shop, monkeypatch
):
    monkeypatch.setenv("REMORA_CORE_KEY", KEY)
    shop.repository.reply_status(401, "who are you?")
    asked: list[str] = []

    async def refuse(host_origin: str, variable: str) -> bool:
        asked.append(host_origin)
        return False

    person = origin(shop.server.url)
    trust = Trust(True, frozenset({person}), KeyApprovals(shop.root, None, refuse))
    await shop.start(trust=trust, model=MODEL)
    events = await shop.ask("total", "Hello?")

    assert asked == [origin(shop.repository.url)]
    assert shop.server.requests == []
    assert all(KEY not in h for h in headers_of(shop.repository))
    (failed,) = of_type(events, "agent_failed")
    assert "HTTP 401" in failed.error
    assert "Your key (from REMORA_CORE_KEY) was not sent there" in failed.error


async def test_an_approved_host_gets_the_key(shop, monkeypatch):
    monkeypatch.setenv("REMORA_CORE_KEY", KEY)

    async def approve(host_origin: str, variable: str) -> bool:
        return True

    person = origin(shop.server.url)
    trust = Trust(True, frozenset({person}), KeyApprovals(shop.root, None, approve))
    await shop.start(trust=trust, model=MODEL)
    await shop.ask("total", "Hello?")
    (headers,) = shop.repository.headers
    assert {k.lower(): v for k, v in headers.items()}[
        "authorization"
    ] == f"Bearer {KEY}"


async def test_untrusted_the_repository_bundle_is_not_used(shop, monkeypatch):
    monkeypatch.setenv("REMORA_CORE_KEY", KEY)
    await shop.start(model=MODEL)  # untrusted
    await shop.ask("total", "Hello?")
    assert shop.repository.requests == []
    (headers,) = shop.server.headers
    assert {k.lower(): v for k, v in headers.items()}[
        "authorization"
    ] == f"Bearer {KEY}"


def test_the_repository_may_tighten_the_bounds_but_never_loosen_them(tmp_path):
    (tmp_path / "remora.yaml").write_text(
        "limits: {tool_calls_per_run: 1000000, answer_chars: 500}\n",
        encoding="utf-8",
    )
    settings = load_settings(tmp_path, None, user=({}, []))
    for config in (settings.trusted, settings.untrusted):
        assert config.limits.tool_calls_per_run == 50  # the default, not 10⁶
        assert config.limits.answer_chars == 500  # tighter: kept
    mine = load_settings(
        tmp_path, {"limits": {"tool_calls_per_run": 200}}, user=({}, [])
    )
    assert mine.trusted.limits.tool_calls_per_run == 200  # the person's own word
