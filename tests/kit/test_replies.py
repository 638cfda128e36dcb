"""The scripted model answers by rule, at its HTTP boundary: what a client
posting chat-completions requests receives.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from remora_lsp.testing import ModelServer, error, rewrite, text, tool_call


def post(server: ModelServer, messages: list[dict]) -> tuple[int, dict]:
    body = json.dumps({"model": "scripted", "messages": messages}).encode()
    request = urllib.request.Request(
        server.url + "/chat/completions",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as failed:
        return failed.code, json.loads(failed.read())


def user(content: str) -> dict:
    return {"role": "user", "content": content}


def called(name: str) -> dict:
    call = {"id": "c1", "type": "function", "function": {"name": name}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def tool_result() -> dict:
    return {"role": "tool", "tool_call_id": "c1", "content": "ok"}


def test_a_rewrite_rule_answers_each_step_of_the_turn():
    with ModelServer() as server:
        server.on("docstring", rewrite("def f():\n    '''Doc.'''"))
        turn = [user("Add a docstring please")]

        status, first = post(server, turn)
        _, second = post(server, [*turn, called("rewrite_self"), tool_result()])

    assert status == 200
    (call,) = first["choices"][0]["message"]["tool_calls"]
    assert call["function"]["name"] == "rewrite_self"
    assert json.loads(call["function"]["arguments"]) == {
        "new_source": "def f():\n    '''Doc.'''"
    }
    assert second["choices"][0]["message"]["content"] == "Done."


def test_rules_match_the_last_user_message_in_order_then_the_script():
    with ModelServer() as server:
        server.on("count", tool_call("count_lines", {"node_id": "rm_a"}), text("3."))
        server.on(lambda request: "boom" in json.dumps(request), error(503, "busy"))
        server.reply_text("From the script.")
        history = [user("count yourself"), called("count_lines"), tool_result()]

        _, counted = post(server, [user("count yourself")])
        _, answered = post(server, history)
        status, failed = post(server, [*history, user("boom now")])
        _, scripted = post(server, [user("something else")])

    name = counted["choices"][0]["message"]["tool_calls"][0]["function"]["name"]
    assert name == "count_lines"
    assert answered["choices"][0]["message"]["content"] == "3."
    assert (status, failed["error"]["message"]) == (503, "busy")
    assert scripted["choices"][0]["message"]["content"] == "From the script."


def test_a_rule_needs_a_reply():
    with ModelServer() as server, pytest.raises(ValueError, match="at least one"):
        server.on("anything")
