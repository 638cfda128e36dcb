"""Trust and keys end to end (DESIGN §12): the real server, two scripted model
servers on 127.0.0.1 — the person's and one a repository points at — and
clients with Neovim's and VS Code's capabilities.

What is asserted is what a person (or an attacker's server) would see: which
server gets a request and with which ``Authorization`` header, which tools and
instructions reach the model, whether the repository's code ran (it leaves a
file behind), the questions and messages in the editor.
"""

from __future__ import annotations

import json

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from remora_lsp.testing.model_server import ModelServer
from tests.lsp.conftest import EDITORS, session
from tests.lsp.helpers import Buffer, eventually
from tests.lsp.test_agent_runs import LONG_S, chat, command, finished, node_of
from tests.lsp.test_command_line import remora

KEY = "sk-test-5ecret-k3y-0123456789"
KEY_VARIABLE = "REMORA_TEST_KEY"

EXTENSION = '''"""A repository's extension: it leaves a file behind when it runs."""
from pathlib import Path

from remora_core.agents.extensions import ExtensionNode, tool

Path(__file__).with_name("ran.txt").write_text("the repository's code ran")


class Marker(ExtensionNode):
    system_prompt = "EXTENSION-MARKER: answer in French."

    @tool
    async def repository_tool(self, text: str) -> str:
        """Echo a text."""
        return text
'''

PYM = '''"""Say hello."""
from remora import Input

name: str = Input(description="who to greet")

f"hello {name}"
'''


def person_settings(server: ModelServer, **model) -> dict:
    """The person's settings, as an editor sends them."""
    return {
        "model": {
            "base_url": server.url,
            "name": "scripted",
            "protocol": "tools",
            "retry_backoff_s": 0.01,
            "retries": 0,
            **model,
        },
        "swarm": {"cooldown_ms": 0},
    }


def with_trust(settings: dict, trusted: bool | None) -> dict:
    """``settings`` as initializationOptions, with the client's workspace trust."""
    if trusted is None:
        return settings
    return {**settings, "workspaceTrust": trusted}


class Questions:
    """Answers the server's ``window/showMessageRequest`` and records them.

    ``answers`` maps a word of the question ("trust", "key") to the title
    picked; a question no entry matches is dismissed.
    """

    def __init__(self, **answers: str | None) -> None:
        self.answers = answers
        self.asked: list[types.ShowMessageRequestParams] = []

    def __call__(self, client) -> None:
        @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def show_message_request(params: types.ShowMessageRequestParams):
            self.asked.append(params)
            kind = "key" if "API key" in params.message else "trust"
            title = self.answers.get(kind)
            return None if title is None else types.MessageActionItem(title=title)

    def about(self, kind: str) -> list[str]:
        """The messages of the questions of one kind."""
        return [
            q.message
            for q in self.asked
            if ("key" if "API key" in q.message else "trust") == kind
        ]


def authorization(server: ModelServer, index: int) -> str | None:
    """The ``Authorization`` header of request ``index`` to ``server``."""
    headers = {k.lower(): v for k, v in server.headers[index].items()}
    return headers.get("authorization")


def tool_names(request: dict) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


def system_text(request: dict) -> str:
    return "\n".join(
        str(m.get("content")) for m in request["messages"] if m["role"] == "system"
    )


def shown(client) -> list[str]:
    """Every ``window/showMessage`` text so far."""
    return [m.message for m in client.messages]


async def ask_once(client, text: str = "Hello?") -> dict:
    """Ask ``Service.helper``'s agent; its last event once the run ended."""
    buffer = Buffer(client, "pkg/service.py")
    helper = await eventually(
        lambda: node_of(client, buffer, "def helper"), timeout=LONG_S
    )
    run_id = await chat(client, helper, text)
    return await finished(client, run_id)


def write_bundle(workspace, yaml: str, scripts: dict[str, str] | None = None) -> None:
    """The repository's own ``code_agent`` bundle (every node uses it)."""
    directory = workspace / ".remora" / "bundles" / "code_agent"
    (directory / "tools").mkdir(parents=True, exist_ok=True)
    (directory / "bundle.yaml").write_text(yaml, encoding="utf-8")
    for name, text in (scripts or {}).items():
        (directory / "tools" / name).write_text(text, encoding="utf-8")


def write_extension(workspace) -> None:
    models = workspace / ".remora" / "models"
    models.mkdir(parents=True, exist_ok=True)
    (models / "marker.py").write_text(EXTENSION, encoding="utf-8")


# ---- where the key goes --------------------------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_repository_bundle_gets_the_key_only_once_the_person_approves(
    editor, workspace, monkeypatch
):
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    with ModelServer() as person, ModelServer() as repository:
        write_bundle(
            workspace,
            f"name: code_agent\nmodel: {{base_url: '{repository.url}'}}\n",
        )
        settings = person_settings(person, api_key_env=KEY_VARIABLE)

        # Untrusted: the person's model and the shipped bundle, with the key.
        async with session(editor, workspace, with_trust(settings, False)) as client:
            assert (await ask_once(client))["type"] == "agent_completed"
            told = [m for m in shown(client) if "is not trusted" in m]
        assert repository.requests == []
        assert authorization(person, 0) == f"Bearer {KEY}"
        assert len(told) == 1 and "code_agent" in told[0]

        # Trusted, and the person lets the key go to the repository's server.
        questions = Questions(key="Send my key")
        host = repository.url.split("//")[1].split("/")[0]
        async with session(
            editor, workspace, with_trust(settings, True), setup=questions
        ) as client:
            assert (await ask_once(client))["type"] == "agent_completed"
            (state,) = await command(client, "remora.trust.get", {})
            assert state["trusted"] is True and state["decided_by"] == "client"
            assert state["hosts"] == {host: True}
            with pytest.raises(JsonRpcInvalidParams, match="workspace trust"):
                await command(client, "remora.trust.set", {"trusted": False})
        (question,) = questions.about("key")
        assert host in question and KEY_VARIABLE in question
        assert questions.about("trust") == []  # the client decided trust
        assert len(person.requests) == 1  # the bundle's server was used
        assert authorization(repository, 0) == f"Bearer {KEY}"

        # Remembered across a restart; revoked, the person is asked again.
        questions = Questions(key="Don't send")
        async with session(
            editor, workspace, with_trust(settings, True), setup=questions
        ) as client:
            await ask_once(client)
            assert questions.asked == []
            assert authorization(repository, -1) == f"Bearer {KEY}"
            await command(client, "remora.trust.revoke", {})
            sent = len(repository.requests)
            await eventually(lambda: ask_again(client), timeout=LONG_S)
            assert len(questions.about("key")) == 1
            assert len(repository.requests) == sent + 1
            assert KEY not in json.dumps(repository.headers[-1])


async def ask_again(client) -> bool:
    """Ask again once the restarted project serves the node."""
    try:
        return (await ask_once(client))["type"] == "agent_completed"
    except Exception:  # the project is still restarting
        return False


@pytest.mark.parametrize("editor", EDITORS)
async def test_the_repository_cannot_choose_the_key_variable_or_endpoint(
    editor, workspace, monkeypatch
):
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    monkeypatch.setenv("SOME_SECRET_VAR", "aws-secret-0123456789")
    with ModelServer() as person, ModelServer() as repository:
        # The person's model is in their own settings file (below remora.yaml).
        config = workspace.parent / "person" / "config"
        config.mkdir(parents=True)
        (config / "config.yaml").write_text(
            f"model: {{base_url: '{person.url}', name: scripted, protocol: tools,"
            f" api_key_env: {KEY_VARIABLE}, retries: 0}}\n",
            encoding="utf-8",
        )
        monkeypatch.setenv("REMORA_CONFIG_HOME", str(config))
        (workspace / "remora.yaml").write_text(
            f"model: {{base_url: '{repository.url}', name: scripted,"
            " api_key_env: SOME_SECRET_VAR}\n"
            "swarm: {cooldown_ms: 0}\n",
            encoding="utf-8",
        )
        # Untrusted: the repository's model settings do not count at all.
        async with session(editor, workspace, {"workspaceTrust": False}) as client:
            await ask_once(client)
            refused = [m for m in shown(client) if "model.api_key_env" in m]
        assert repository.requests == []
        assert authorization(person, 0) == f"Bearer {KEY}"
        assert len(refused) == 1 and "ignored" in refused[0]

        # Trusted: its server is used, but it names no variable and gets no key.
        questions = Questions(key="Don't send")
        async with session(
            editor, workspace, {"workspaceTrust": True}, setup=questions
        ) as client:
            await ask_once(client)
        assert len(questions.about("key")) == 1
        assert len(repository.requests) >= 1
        for headers in repository.headers:
            assert KEY not in json.dumps(headers)
            assert "aws-secret-0123456789" not in json.dumps(headers)


# ---- the repository's code -----------------------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_repository_code_runs_only_in_a_trusted_workspace(editor, workspace):
    write_extension(workspace)
    write_bundle(workspace, "name: code_agent\n", {"greet.pym": PYM})
    ran = workspace / ".remora" / "models" / "ran.txt"
    with ModelServer() as person:
        settings = person_settings(person)
        async with session(editor, workspace, with_trust(settings, False)) as client:
            assert (await ask_once(client))["type"] == "agent_completed"
            told = [m for m in shown(client) if "is not trusted" in m]
        assert not ran.exists()
        first = person.requests[0]
        assert not {"repository_tool", "greet"} & tool_names(first)
        assert "EXTENSION-MARKER" not in system_text(first)
        assert "rewrite_self" in tool_names(first)  # the shipped bundle's tools
        assert len(told) == 1
        assert ".remora/models/marker.py" in told[0] and "greet.pym" in told[0]

        async with session(editor, workspace, with_trust(settings, True)) as client:
            assert (await ask_once(client))["type"] == "agent_completed"
            assert not [m for m in shown(client) if "is not trusted" in m]
        assert ran.exists()
        last = person.requests[-1]
        assert {"repository_tool", "greet"} <= tool_names(last)
        assert "EXTENSION-MARKER" in system_text(last)


async def test_the_trust_question_is_asked_once_remembered_and_revocable(workspace):
    """A client that does not pass its own trust (Neovim) is asked, once."""
    write_extension(workspace)
    ran = workspace / ".remora" / "models" / "ran.txt"
    with ModelServer() as person:
        settings = person_settings(person)
        questions = Questions(trust="Trust")
        async with session("neovim", workspace, settings, setup=questions) as client:
            (question,) = questions.about("trust")
            assert workspace.name in question
            assert ".remora/models/marker.py" in question
            await eventually(lambda: ask_again(client), timeout=LONG_S)
            assert "repository_tool" in tool_names(person.requests[-1])
        assert ran.exists()

        ran.unlink()
        questions = Questions(trust="Don't trust")
        async with session("neovim", workspace, settings, setup=questions) as client:
            await ask_once(client)
            assert questions.asked == []  # remembered
            assert "repository_tool" in tool_names(person.requests[-1])
            (state,) = await command(client, "remora.trust.get", {})
            assert state["trusted"] is True and state["decided_by"] == "person"

            ran.unlink()
            (state,) = await command(client, "remora.trust.revoke", {})
            assert state["trusted"] is False and state["decided_by"] == "undecided"
            sent = len(person.requests)
            await eventually(lambda: ask_again(client), timeout=LONG_S)
            assert "repository_tool" not in tool_names(person.requests[sent])
            assert not ran.exists()

        questions = Questions(trust="Don't trust")
        async with session("neovim", workspace, settings, setup=questions) as client:
            await eventually(lambda: questions.about("trust"), timeout=LONG_S)
            await eventually(
                lambda: [m for m in shown(client) if "is not trusted" in m]
            )
            told = [m for m in shown(client) if "is not trusted" in m]
            assert len(told) == 1 and "remora trust --yes" in told[0]
            await ask_once(client)
            assert "repository_tool" not in tool_names(person.requests[-1])
        assert not ran.exists()
        assert len(questions.asked) == 1


async def test_the_command_line_shows_trust_and_answers_for_the_person(workspace):
    """Without an editor nobody is asked: ``remora trust`` is how a person
    answers, and the repository's code runs only after ``--yes``.
    """
    write_extension(workspace)
    ran = workspace / ".remora" / "models" / "ran.txt"

    code, out, err = await remora(workspace, "trust")
    assert code == 0, err
    assert f"{workspace.as_uri()}: not trusted (nobody has answered: untrusted)" in out
    assert "it wants to run its Python code (.remora/models/marker.py)" in out
    assert not ran.exists()

    code, out, err = await remora(workspace, "trust", "--yes")
    assert code == 0, err
    assert ": trusted (your remembered answer)" in out
    code, out, err = await remora(workspace, "trust")  # remembered: a new process
    assert code == 0, err
    assert ": trusted (your remembered answer)" in out

    code, out, err = await remora(workspace, "trust", "--forget")
    assert code == 0, err
    assert ": not trusted (nobody has answered: untrusted)" in out
    code, out, err = await remora(workspace, "trust")
    assert code == 0, err
    assert ": not trusted (nobody has answered: untrusted)" in out
    assert not ran.exists()  # reading trust never runs the repository's code

    code, _, err = await remora(workspace, "trust", "--yes", "--no")
    assert code != 0 and "not allowed with argument" in err


async def test_an_editor_that_manages_trust_refuses_the_command_lines_answer(
    workspace,
):
    write_extension(workspace)
    with ModelServer() as person:
        settings = with_trust(person_settings(person), False)
        async with session("visual-studio-code", workspace, settings):
            code, out, err = await remora(workspace, "trust", "--yes")
            assert code != 0 and out == ""
            assert "workspace trust" in err.lower() or "editor" in err.lower(), err
            code, out, err = await remora(workspace, "trust")
            assert code == 0, err
            assert "not trusted (your editor's workspace trust)" in out


async def test_no_question_when_the_repository_needs_no_trust(workspace):
    (workspace / "remora.yaml").write_text("swarm: {max_depth: 4}\n", encoding="utf-8")
    with ModelServer() as person:
        questions = Questions(trust="Trust")
        async with session(
            "neovim", workspace, person_settings(person), setup=questions
        ) as client:
            assert (await ask_once(client))["type"] == "agent_completed"
            (state,) = await command(client, "remora.trust.get", {})
        assert questions.asked == []
        assert state["wants"] == ""
        assert not [m for m in shown(client) if "trusted" in m]


# ---- what the client sends ----------------------------------------------------------


async def test_a_vs_code_configuration_answer_with_client_keys_is_not_reported(
    workspace,
):
    def configure(client) -> None:
        client.set_configuration(
            {
                "server": {"path": "/opt/remora-lsp", "args": ["-v"]},
                "trace": {"server": "verbose"},
                "initializationOptions": {"ids": {"inline_comments": True}},
                "workspaceTrust": True,
                "swarm": {"max_depth": 4},
                "colour": "blue",
            },
            section="remora",
        )

    async with session(
        "visual-studio-code", workspace, {"workspaceTrust": True}, setup=configure
    ) as client:
        await eventually(lambda: [m for m in shown(client) if "invalid settings" in m])
        (message,) = [m for m in shown(client) if "invalid settings" in m]
        assert "colour" in message  # a real unknown key is still reported
        for key in ("server", "trace", "initializationOptions", "workspaceTrust"):
            assert key not in message


# ---- redaction ---------------------------------------------------------------------


@pytest.mark.parametrize("secret", ["key", "userinfo"])
async def test_secrets_never_leave_the_model_layer(secret, workspace, monkeypatch):
    """A server that echoes the request's headers in its 401, a base_url with a
    password: neither the key nor the password reaches an event, the runs
    table, the log file at -vv, or a message in the editor.
    """
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    password = "pa55w0rd-s3cret-4567"
    log_file = workspace.parent / "server.log"
    with ModelServer() as person:
        person.reply_echo_headers(401)
        url = person.url
        if secret == "userinfo":
            url = url.replace("http://", f"http://remora:{password}@")
        settings = person_settings(person, base_url=url, api_key_env=KEY_VARIABLE)
        async with session(
            "visual-studio-code",
            workspace,
            settings,
            args=("-vv", "--log-file", str(log_file)),
        ) as client:
            failed = await ask_once(client)
            await eventually(
                lambda: [m for m in client.log_messages if "HTTP 401" in m.message]
            )
            events = json.dumps(client.events)
            forwarded = [m.message for m in client.log_messages]
            shown_messages = shown(client)
        echoed = person.headers[0]
        secrets = [KEY, password]
        if secret == "userinfo":  # sent as basic auth, echoed base64-encoded
            basic = {k.lower(): v for k, v in echoed.items()}["authorization"]
            assert basic.startswith("Basic ")
            secrets.append(basic.split()[1])
        else:
            assert authorization(person, 0) == f"Bearer {KEY}"
        assert failed["type"] == "agent_failed"
        assert "HTTP 401" in failed["error"]
        for value in secrets:
            assert value not in failed["error"]
        assert "[redacted]" in failed["error"]
        log_text = log_file.read_text(encoding="utf-8")
        assert "DEBUG" in log_text and "[redacted]" in log_text
        import sqlite3

        with sqlite3.connect(workspace / ".remora" / "remora.db") as db:
            errors = [row[0] for row in db.execute("SELECT error FROM runs")]
        assert any("[redacted]" in (e or "") for e in errors)
        for text in (events, log_text, json.dumps(errors), *forwarded, *shown_messages):
            for value in secrets:
                assert value not in text


async def test_messages_shown_in_the_editor_are_scrubbed(workspace):
    """A repository extension that fails with a URL carrying credentials: the
    message the person is shown names the problem, not the password.
    """
    models = workspace / ".remora" / "models"
    models.mkdir(parents=True)
    (models / "deploy.py").write_text(
        'raise RuntimeError("cannot reach http://bot:hunter2-0123456789@ci.example/")\n',
        encoding="utf-8",
    )
    with ModelServer() as person:
        settings = with_trust(person_settings(person), True)
        async with session("neovim", workspace, settings) as client:
            await ask_once(client)
            await eventually(lambda: [m for m in shown(client) if "deploy.py" in m])
            (message,) = [m for m in shown(client) if "deploy.py" in m]
            logged = [
                m.message for m in client.log_messages if "deploy.py" in m.message
            ]
        assert "http://[redacted]@ci.example/" in message
        assert logged and all("hunter2" not in m for m in logged)
        assert "hunter2" not in message
