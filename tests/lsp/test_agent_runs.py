"""Agent runs and proposals end to end: the real server, a scripted model on
127.0.0.1, and pytest-lsp clients with Neovim's and VS Code's capabilities.

What is asserted is what a person sees: the events, the progress, the
diagnostics, the buffer's text, the command results — and what reaches the
model (its requests are recorded by the scripted server).
"""

from __future__ import annotations

import pytest
from lsprotocol import types
from remora_core.agents.local import local_extra_installed

from remora_lsp.testing.actions import command, model_settings
from remora_lsp.testing.actions import events as of_type
from remora_lsp.testing.actions import wait_for_run as finished
from remora_lsp.testing.buffers import apply_edits
from remora_lsp.testing.client import initialize_params, launch
from remora_lsp.testing.model_server import ModelServer
from tests.lsp.conftest import EDITORS, plain, session
from tests.lsp.helpers import Buffer, eventually, raw_request

NEW_HELPER = '''def helper(self):
        """Order two b's."""
        return order("b", 2)'''
OTHER_HELPER = '''def helper(self):
        """Place an order of two b's."""
        return order("b", 2)'''
DOCSTRING = '"""Order two b\'s."""'
LONG_S = 60.0
"""Generous waits for runs (the kernel's first import takes a few seconds)."""
LOCAL_RUN_S = 600.0
"""One run of the embedded model: ~20 s on a quiet machine, minutes on a busy
2-core one."""


# ---- helpers (also used by test_agent_commands.py) -----------------------------------

settings = model_settings
"""The kit's settings for the scripted model (tools protocol, no cooldown)."""


async def code_actions(client, document_uri: str, line: int) -> list[dict]:
    """The code actions on ``line``, as the JSON the server sent."""
    position = {"line": line, "character": 0}
    found = await raw_request(
        client,
        "textDocument/codeAction",
        {
            "textDocument": {"uri": document_uri},
            "range": {"start": position, "end": position},
            "context": {"diagnostics": []},
        },
    )
    return plain(found) or []


async def node_of(client, buffer: Buffer, needle: str) -> str:
    """The id of the innermost node at the first occurrence of ``needle``."""
    line, character = buffer.position(needle)
    card = await command(
        client,
        "remora.node.at",
        {"uri": buffer.uri, "position": {"line": line, "character": character}},
    )
    return card["id"]


def remora_diagnostics(client, document_uri: str) -> list[types.Diagnostic]:
    return [d for d in client.diagnostics.get(document_uri, []) if d.source == "remora"]


async def chat(client, node_id: str, message: str) -> str:
    """Ask a node's agent; the run id."""
    started = await command(
        client, "remora.agent.chat", {"node_id": node_id, "message": message}
    )
    return started["run_id"]


async def propose(client, model: ModelServer, node_id: str, new_source: str):
    """Have ``node_id``'s agent propose ``new_source``; (run id, proposal id)."""
    model.reply_tool_call("rewrite_self", {"new_source": new_source})
    model.reply_text("Proposed.")
    run_id = await chat(client, node_id, "Improve yourself please")
    proposed = await eventually(
        lambda: of_type(client, "rewrite_proposed", run_id=run_id), timeout=LONG_S
    )
    completed = await finished(client, run_id)
    assert completed["type"] == "agent_completed", completed
    return run_id, proposed[0]["proposal_id"]


def proposal_ids(listed) -> list[str]:
    return [p["id"] for p in listed]


def last_user_message(model: ModelServer) -> str:
    """The last user message of the model's last request."""
    users = [m for m in model.messages(-1) if m.get("role") == "user"]
    content = users[-1]["content"]
    if isinstance(content, list):
        content = " ".join(str(c.get("text", "")) for c in content)
    return content


def progress_runs(client, title: str) -> list[tuple[str, list]]:
    """(token, reports) of every work-done progress titled ``title``."""
    return [
        (token, reports)
        for token, reports in client.progress_reports.items()
        if reports and getattr(reports[0], "title", None) == title
    ]


def ended(reports: list) -> bool:
    return bool(reports) and isinstance(reports[-1], types.WorkDoneProgressEnd)


class EditorEdits:
    """A ``workspace/applyEdit`` handler applying edits to a Buffer, or not.

    ``mode``: ``apply`` (like VS Code: edit the buffer, send didChange, answer
    applied), ``skip`` (like Neovim with an edit for an older version: answer
    applied but change nothing), ``refuse`` (answer not applied), ``error``
    (answer with a JSON-RPC error).
    """

    def __init__(self, client, buffer: Buffer) -> None:
        self.buffer = buffer
        self.mode = "apply"
        self.requests: list[dict] = []
        converter = client.protocol._converter

        @client.feature(types.WORKSPACE_APPLY_EDIT)
        def apply_edit(params: types.ApplyWorkspaceEditParams):
            edit = converter.unstructure(params.edit)
            self.requests.append(edit)
            if self.mode == "error":
                raise RuntimeError("the buffer is read-only")
            if self.mode == "refuse":
                return types.ApplyWorkspaceEditResult(
                    applied=False, failure_reason="the user said no"
                )
            if self.mode == "apply":
                apply_edits(self.buffer, edit)
            return types.ApplyWorkspaceEditResult(applied=True)


# ---- accept through the code action (the editor applies, then runs the command) ------


@pytest.mark.parametrize("editor", EDITORS)
async def test_ask_review_accept_through_the_code_action(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            line, character = buffer.position("def helper")
            card = await command(
                client,
                "remora.node.at",
                {"uri": buffer.uri, "position": {"line": line, "character": character}},
            )
            helper_id = card["id"]
            model.reply_tool_call("rewrite_self", {"new_source": NEW_HELPER})
            model.reply_text("Added a docstring.")

            started = await command(
                client,
                "remora.agent.chat",
                {"node_id": helper_id, "message": "Docstring please"},
            )
            run_id = started["run_id"]
            proposed = await eventually(lambda: of_type(client, "rewrite_proposed"))
            proposal_id = proposed[0]["proposal_id"]
            assert proposed[0]["run_id"] == run_id
            await eventually(lambda: of_type(client, "agent_completed"))

            diagnostics = await eventually(
                lambda: [
                    d
                    for d in client.diagnostics.get(buffer.uri, [])
                    if d.source == "remora"
                ]
            )
            assert diagnostics[0].code == proposal_id
            assert diagnostics[0].range.start.line == line

            actions = await code_actions(client, buffer.uri, line)
            titles = [a["title"] for a in actions]
            assert titles[0].startswith("Accept: rewrite (+1")
            assert "Reject with feedback…" in titles and "Show diff" in titles
            accept = actions[0]
            if "edit" not in accept:
                accept = plain(await raw_request(client, "codeAction/resolve", accept))
            apply_edits(buffer, accept["edit"])
            result = await command(
                client, "remora.proposal.accept", accept["command"]["arguments"][0]
            )
            assert result["applied"] is True
            await eventually(lambda: of_type(client, "rewrite_applied"))
            assert '"""Order two b\'s."""' in buffer.text
            listed = await command(
                client, "remora.proposals.list", {"status": "accepted"}
            )
            assert [p["id"] for p in listed] == [proposal_id]
            await eventually(
                lambda: (
                    not [
                        d
                        for d in client.diagnostics.get(buffer.uri, [])
                        if d.source == "remora"
                    ]
                )
            )


# ---- progress ------------------------------------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_a_run_shows_cancellable_progress_from_begin_to_end(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            run_id, _proposal = await propose(client, model, helper, NEW_HELPER)

            runs = await eventually(
                lambda: [
                    r
                    for _t, r in progress_runs(client, "Remora: Service.helper")
                    if ended(r)
                ]
            )
            assert len(runs) == 1
            begin, *reports, end = runs[0]
            assert isinstance(begin, types.WorkDoneProgressBegin)
            assert begin.cancellable is True
            messages = [r.message for r in reports]
            assert all(isinstance(r, types.WorkDoneProgressReport) for r in reports)
            assert "thinking…" in messages
            assert "calling rewrite_self" in messages
            assert "proposing a change" in messages
            # In the order the run did them.
            assert messages.index("thinking…") < messages.index("calling rewrite_self")
            assert messages.index("calling rewrite_self") < messages.index(
                "proposing a change"
            )
            assert end.message == "done"
            assert of_type(client, "agent_completed", run_id=run_id)


async def test_a_client_without_work_done_progress_gets_no_progress(workspace):
    """No ``window/workDoneProgress/create`` for a client that did not ask."""
    with ModelServer() as model:
        async with launch() as client:
            client.editor = "neovim"
            client.root = workspace
            params = initialize_params(
                "neovim", workspace, initialization_options=settings(model)
            )
            params.capabilities.window.work_done_progress = False
            await client.initialize_session(params)
            buffer = Buffer(client, "pkg/service.py")
            helper = await eventually(
                lambda: node_of(client, buffer, "def helper"), timeout=LONG_S
            )
            run_id, _proposal = await propose(client, model, helper, NEW_HELPER)
            assert of_type(client, "agent_completed", run_id=run_id)
            assert client.progress_reports == {}
            await client.shutdown_session()


# ---- reject --------------------------------------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_reject_with_feedback_runs_the_agent_again_with_it(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            _run, proposal_id = await propose(client, model, helper, NEW_HELPER)
            await eventually(lambda: remora_diagnostics(client, buffer.uri))
            asked_before = len(model.requests)

            model.reply_text("I will keep it to one line.")
            result = await command(
                client,
                "remora.proposal.reject",
                {"proposal_id": proposal_id, "feedback": "use a one-line docstring"},
            )
            run_id = result["run_id"]
            assert run_id.startswith("run_")
            (rejected,) = await eventually(
                lambda: of_type(client, "rewrite_rejected", proposal_id=proposal_id)
            )
            assert rejected["feedback"] == "use a one-line docstring"
            completed = await finished(client, run_id)
            assert completed["type"] == "agent_completed", completed
            started = of_type(client, "agent_started", run_id=run_id)
            assert started[0]["agent_id"] == helper
            assert rejected["id"] in started[0]["trigger_ids"]

            # The model got the feedback and the source it had proposed.
            assert len(model.requests) == asked_before + 1
            told = last_user_message(model)
            assert "use a one-line docstring" in told
            assert DOCSTRING in told

            listed = await command(
                client, "remora.proposals.list", {"status": "rejected"}
            )
            assert proposal_ids(listed) == [proposal_id]
            assert listed[0]["feedback"] == "use a one-line docstring"
            assert (
                await command(client, "remora.proposals.list", {"status": "pending"})
                == []
            )
            await eventually(lambda: not remora_diagnostics(client, buffer.uri))
            # A decided proposal cannot be decided again.
            again = await command(
                client, "remora.proposal.accept", {"proposal_id": proposal_id}
            )
            assert again == {"applied": False, "reason": "the proposal is rejected"}
            assert DOCSTRING not in buffer.text


@pytest.mark.parametrize("editor", EDITORS)
async def test_without_feedback_the_person_is_asked_with_remora_ask_user(
    editor, workspace
):
    """``remora/askUser`` serves both a rejection's feedback and ``ask_user``."""
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            asked: list[dict] = []

            @client.feature("remora/askUser")
            def ask_user(params):
                asked.append(plain(params))
                if params.question_id.startswith("feedback_"):
                    return {"answer": "name the quantity"}
                return {"answer": "blue"}

            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            _run, proposal_id = await propose(client, model, helper, NEW_HELPER)

            result = await command(
                client, "remora.proposal.reject", {"proposal_id": proposal_id}
            )
            assert asked[0]["question_id"] == f"feedback_{proposal_id}"
            assert asked[0]["question"]
            completed = await finished(client, result["run_id"])
            assert completed["type"] == "agent_completed", completed
            (rejected,) = of_type(client, "rewrite_rejected", proposal_id=proposal_id)
            assert rejected["feedback"] == "name the quantity"
            assert "name the quantity" in last_user_message(model)

            # ask_user without options goes through the same request.
            model.reply_tool_call("ask_user", {"question": "Which colour?"})
            model.reply_text("Blue it is.")
            run_id = await chat(client, helper, "Ask me a colour")
            completed = await finished(client, run_id)
            assert completed["type"] == "agent_completed", completed
            (blocked,) = of_type(client, "agent_blocked", run_id=run_id)
            assert blocked["question"] == "Which colour?" and blocked["options"] == []
            (resumed,) = of_type(client, "agent_resumed", run_id=run_id)
            assert resumed["outcome"] == "answered" and resumed["answer"] == "blue"
            assert asked[-1] == {
                "question_id": blocked["question_id"],
                "question": "Which colour?",
            }
            assert "The person answered: blue" in model.text_of(-1)


# ---- staleness -----------------------------------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_editing_the_node_first_makes_the_proposal_stale(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            edits = EditorEdits(client, buffer)
            helper = await node_of(client, buffer, "def helper")
            _run, proposal_id = await propose(client, model, helper, NEW_HELPER)
            await eventually(lambda: remora_diagnostics(client, buffer.uri))

            buffer.replace_text('return order("b", 2)', 'return order("b", 3)')
            (stale,) = await eventually(
                lambda: of_type(client, "rewrite_stale", proposal_id=proposal_id)
            )
            assert "Service.helper changed" in stale["reason"]
            listed = await command(client, "remora.proposals.list", {"uri": buffer.uri})
            assert [(p["id"], p["status"]) for p in listed] == [(proposal_id, "stale")]
            await eventually(lambda: not remora_diagnostics(client, buffer.uri))

            before = buffer.text
            result = await command(
                client, "remora.proposal.accept", {"proposal_id": proposal_id}
            )
            assert result["applied"] is False
            assert "stale" in result["reason"]
            assert edits.requests == []  # nothing was sent to the editor
            assert buffer.text == before and DOCSTRING not in buffer.text
            assert not of_type(client, "rewrite_applied")
            # The code action is gone too.
            line, _ = buffer.position("def helper")
            assert await code_actions(client, buffer.uri, line) == []


# ---- accept from the command alone ---------------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_accept_from_the_command_sends_the_edit_and_checks_it_landed(
    editor, workspace
):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            edits = EditorEdits(client, buffer)
            helper = await node_of(client, buffer, "def helper")
            _run, proposal_id = await propose(client, model, helper, NEW_HELPER)

            result = await command(
                client, "remora.proposal.accept", {"proposal_id": proposal_id}
            )
            assert result == {"applied": True}
            assert len(edits.requests) == 1
            await eventually(
                lambda: of_type(client, "rewrite_applied", proposal_id=proposal_id)
            )
            assert buffer.text.count(DOCSTRING) == 1
            assert NEW_HELPER in buffer.text
            await eventually(lambda: not remora_diagnostics(client, buffer.uri))

            # Neovim skips an edit made for an older version yet answers applied.
            _run, second = await propose(client, model, helper, OTHER_HELPER)
            await eventually(
                lambda: [
                    d
                    for d in remora_diagnostics(client, buffer.uri)
                    if d.code == second
                ]
            )
            edits.mode = "skip"
            before = buffer.text
            result = await command(
                client, "remora.proposal.accept", {"proposal_id": second}
            )
            assert result["applied"] is False
            assert "does not hold the proposal" in result["reason"]
            assert len(edits.requests) == 2
            assert buffer.text == before
            (skipped,) = await eventually(
                lambda: of_type(client, "rewrite_not_applied", proposal_id=second)
            )
            assert skipped["reason"] == result["reason"]
            assert not of_type(client, "rewrite_applied", proposal_id=second)
            pending = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            assert proposal_ids(pending) == [second]
            assert [d.code for d in remora_diagnostics(client, buffer.uri)] == [second]

            # The editor refusing is reported the same way; still pending.
            edits.mode = "refuse"
            result = await command(
                client, "remora.proposal.accept", {"proposal_id": second}
            )
            assert result == {"applied": False, "reason": "the user said no"}
            pending = await command(
                client, "remora.proposals.list", {"status": "pending"}
            )
            assert proposal_ids(pending) == [second]

            # So is the editor failing: an answer, not an error, and an event.
            edits.mode = "error"
            result = await command(
                client, "remora.proposal.accept", {"proposal_id": second}
            )
            assert result["applied"] is False
            assert "the buffer is read-only" in result["reason"]
            await eventually(
                lambda: (
                    len(of_type(client, "rewrite_not_applied", proposal_id=second)) == 3
                )
            )

            # Once the editor applies it, it is accepted.
            edits.mode = "apply"
            result = await command(
                client, "remora.proposal.accept", {"proposal_id": second}
            )
            assert result == {"applied": True}
            assert OTHER_HELPER in buffer.text and DOCSTRING not in buffer.text


# ---- accept right after the code action's edit; subscribers --------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_accept_after_the_code_action_edit_applies_once_and_wakes_subscribers(
    editor, workspace
):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            edits = EditorEdits(client, buffer)
            helper = await node_of(client, buffer, "def helper")
            runner = await node_of(client, buffer, "def run")

            # Service.run's agent follows helper's changes.
            model.reply_tool_call(
                "subscribe", {"nodes": [helper], "event_types": ["content_changed"]}
            )
            model.reply_text("Subscribed.")
            run_id = await chat(client, runner, "Watch helper for me")
            assert (await finished(client, run_id))["type"] == "agent_completed"
            (subscribed,) = of_type(client, "tool_result", run_id=run_id)
            assert subscribed["ok"] is True, subscribed

            _run, proposal_id = await propose(client, model, helper, NEW_HELPER)
            line, _ = buffer.position("def helper")
            await eventually(lambda: remora_diagnostics(client, buffer.uri))
            actions = await code_actions(client, buffer.uri, line)
            accept = actions[0]
            assert accept["title"].startswith("Accept: ")
            if "edit" not in accept:
                accept = plain(await raw_request(client, "codeAction/resolve", accept))
            asked_before = len(model.requests)
            # What an editor does: apply the action's edit, then run its command.
            apply_edits(buffer, accept["edit"])
            result = await command(
                client, "remora.proposal.accept", accept["command"]["arguments"][0]
            )
            assert result == {"applied": True}
            assert edits.requests == []  # applied once, by the editor
            assert buffer.text.count(DOCSTRING) == 1
            (applied,) = await eventually(
                lambda: of_type(client, "rewrite_applied", proposal_id=proposal_id)
            )

            # The content_changed that follows runs the subscriber (with a model call).
            def woken():
                return [
                    e
                    for e in of_type(client, "agent_started", agent_id=runner)
                    if e["seq"] > applied["seq"]
                ]

            (started,) = await eventually(woken, timeout=LONG_S)
            trigger = next(
                e for e in client.events if e["id"] in started["trigger_ids"]
            )
            assert trigger["type"] == "content_changed"
            assert helper in trigger["node_ids"]
            assert (await finished(client, started["run_id"]))[
                "type"
            ] == "agent_completed"
            assert len(model.requests) == asked_before + 1
            assert DOCSTRING in last_user_message(model)


# ---- cancel --------------------------------------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_cancel_a_run_waiting_on_the_model(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            title = "Remora: Service.helper"

            model.reply_delay(30)
            run_id = await chat(client, helper, "Take your time")
            await eventually(lambda: len(model.requests) == 1, timeout=LONG_S)
            result = await command(client, "remora.agent.cancel", {"run_id": run_id})
            assert result == {"cancelled": True}
            assert (await finished(client, run_id))["type"] == "agent_cancelled"
            await eventually(lambda: model.closed_early == 1)  # the request hung up
            ((token, reports),) = await eventually(
                lambda: [x for x in progress_runs(client, title) if ended(x[1])]
            )
            assert reports[-1].message == "cancelled"
            # Cancelling it again does nothing.
            again = await command(client, "remora.agent.cancel", {"run_id": run_id})
            assert again == {"cancelled": False}

            # A run waiting behind another one of the same agent is cancelled
            # before it starts: it still ends with agent_cancelled.
            model.reply_delay(30)
            run_id = await chat(client, helper, "Take your time again")
            await eventually(lambda: len(model.requests) == 2, timeout=LONG_S)
            waiting = await chat(client, helper, "And then this")
            result = await command(client, "remora.agent.cancel", {"run_id": waiting})
            assert result == {"cancelled": True}
            (gone,) = await eventually(
                lambda: of_type(client, "agent_cancelled", run_id=waiting)
            )
            assert gone["agent_id"] == helper
            assert not of_type(client, "agent_started", run_id=waiting)

            # The editor's cancel button on the progress does the same.
            ((token, _reports),) = await eventually(
                lambda: [x for x in progress_runs(client, title) if not ended(x[1])]
            )
            client.window_work_done_progress_cancel(
                types.WorkDoneProgressCancelParams(token=token)
            )
            assert (await finished(client, run_id))["type"] == "agent_cancelled"
            await eventually(lambda: model.closed_early == 2)
            await eventually(lambda: ended(client.progress_reports[token]))
            assert client.progress_reports[token][-1].message == "cancelled"
            card = await command(client, "remora.node.get", {"node_id": helper})
            assert card["agent_status"] == "idle"


@pytest.mark.parametrize("editor", EDITORS)
async def test_cancel_a_run_waiting_for_a_free_slot(editor, workspace):
    with ModelServer() as model:
        one_at_a_time = {**settings(model), "agents": {"max_concurrency": 1}}
        async with session(editor, workspace, one_at_a_time) as client:
            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")
            order = await node_of(client, buffer, "def order")

            model.reply_delay(30)
            busy = await chat(client, helper, "Take your time")
            await eventually(lambda: len(model.requests) == 1, timeout=LONG_S)
            queued = await chat(client, order, "You are next")
            result = await command(client, "remora.agent.cancel", {"run_id": queued})
            assert result == {"cancelled": True}
            (gone,) = await eventually(
                lambda: of_type(client, "agent_cancelled", run_id=queued)
            )
            assert gone["agent_id"] == order

            assert await command(client, "remora.agent.cancel", {"run_id": busy}) == {
                "cancelled": True
            }
            assert (await finished(client, busy))["type"] == "agent_cancelled"
            # The slot is free and order's agent works.
            again = await chat(client, order, "Now you")
            assert (await finished(client, again))["type"] == "agent_completed"
            assert not of_type(client, "agent_started", run_id=queued)
            assert not [m for m in client.log_messages if "crashed" in m.message]


# ---- ask_user ------------------------------------------------------------------------


@pytest.mark.parametrize("editor", EDITORS)
async def test_ask_user_with_options_and_answers_given_later(editor, workspace):
    with ModelServer() as model:
        async with session(editor, workspace, settings(model)) as client:
            shown: list[types.ShowMessageRequestParams] = []

            @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
            def show_message_request(params: types.ShowMessageRequestParams):
                shown.append(params)
                return types.MessageActionItem(title="yes")

            buffer = Buffer(client, "pkg/service.py")
            helper = await node_of(client, buffer, "def helper")

            # Options: a message box with buttons.
            model.reply_tool_call(
                "ask_user", {"question": "Add a docstring?", "options": ["yes", "no"]}
            )
            model.reply_text("OK.")
            run_id = await chat(client, helper, "Ask me first")
            assert (await finished(client, run_id))["type"] == "agent_completed"
            assert shown[0].message == "Add a docstring?"
            assert [a.title for a in shown[0].actions] == ["yes", "no"]
            (resumed,) = of_type(client, "agent_resumed", run_id=run_id)
            assert resumed["outcome"] == "answered" and resumed["answer"] == "yes"
            assert "The person answered: yes" in model.text_of(-1)

            # No options, and this client has no remora/askUser: the question
            # waits for remora.agent.respond.
            model.reply_tool_call("ask_user", {"question": "Which name?"})
            model.reply_text("Thanks.")
            run_id = await chat(client, helper, "Ask me a name")
            (blocked,) = await eventually(
                lambda: of_type(client, "agent_blocked", run_id=run_id), timeout=LONG_S
            )
            assert blocked["question"] == "Which name?"
            card = await eventually(
                lambda: _status(client, helper, "blocked"), timeout=LONG_S
            )
            assert card["agent_status"] == "blocked"
            assert not of_type(client, "agent_resumed", run_id=run_id)
            asked_before = len(model.requests)

            unknown = await command(
                client,
                "remora.agent.respond",
                {"question_id": "q_000000000000", "answer": "x"},
            )
            assert unknown == {"ok": False}
            answered = await command(
                client,
                "remora.agent.respond",
                {"question_id": blocked["question_id"], "answer": "Bartholomew"},
            )
            assert answered == {"ok": True}
            assert (await finished(client, run_id))["type"] == "agent_completed"
            (resumed,) = of_type(client, "agent_resumed", run_id=run_id)
            assert resumed["outcome"] == "answered"
            assert resumed["answer"] == "Bartholomew"
            assert len(model.requests) == asked_before + 1
            assert "The person answered: Bartholomew" in model.text_of(-1)
            again = await command(
                client,
                "remora.agent.respond",
                {"question_id": blocked["question_id"], "answer": "too late"},
            )
            assert again == {"ok": False}


async def _status(client, node_id: str, status: str) -> dict | None:
    card = await command(client, "remora.node.get", {"node_id": node_id})
    return card if card["agent_status"] == status else None


# ---- the embedded local model --------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(
    not local_extra_installed(),
    reason="the 'local' extra (xllamacpp + the model wheels) is not installed",
)
@pytest.mark.parametrize("editor", EDITORS[:1])
async def test_the_local_model_end_to_end(editor, workspace):
    """The whole pipeline with the real embedded model.

    It asserts the pipeline, not the wording: a 0.5B model may or may not
    produce a valid rewrite.
    """
    local = {"model": {"provider": "local"}, "swarm": {"cooldown_ms": 0}}
    async with session(editor, workspace, local) as client:
        buffer = Buffer(client, "pkg/service.py")
        order = await node_of(client, buffer, "def order")
        run_id = await chat(
            client,
            order,
            "Add a one-line docstring to this function. Reply with your complete "
            "new source.",
        )
        last = await finished(client, run_id, timeout=LOCAL_RUN_S)
        assert last["type"] in ("agent_completed", "agent_failed"), last
        assert of_type(client, "model_request", run_id=run_id)
        ((_token, reports),) = await eventually(
            lambda: [x for x in progress_runs(client, "Remora: order") if ended(x[1])]
        )
        assert "thinking…" in [getattr(r, "message", None) for r in reports]

        proposed = of_type(client, "rewrite_proposed", run_id=run_id)
        rewrites = of_type(client, "tool_result", run_id=run_id, tool="rewrite_self")
        assert proposed or rewrites or last["type"] == "agent_completed", last
        if proposed:
            proposal_id = proposed[0]["proposal_id"]
            diagnostics = await eventually(
                lambda: [
                    d
                    for d in remora_diagnostics(client, buffer.uri)
                    if d.code == proposal_id
                ]
            )
            line = diagnostics[0].range.start.line
            actions = await code_actions(client, buffer.uri, line)
            assert actions[0]["title"].startswith("Accept: ")
            diff = await command(
                client, "remora.proposal.diff", {"proposal_id": proposal_id}
            )
            assert diff["status"] == "pending" and diff["new_source"].startswith("def")
        else:
            for failed in (r for r in rewrites if not r["ok"]):
                assert failed["summary"].startswith("Error: ")
