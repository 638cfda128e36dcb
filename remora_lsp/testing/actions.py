"""What a person does in a session, as one call each: run a command, ask a
node's agent, wait for an event, get its proposal, accept or reject it.

Results are the JSON the server sent (dicts and lists), as a client sees it.
A node is named by its id (``rm_…``) or as ``path::qualified.name``
(``pkg/service.py::Service.helper``), resolved through the file's outline.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from remora_lsp.testing.buffers import buffer_for, flatten, node_id_of
from remora_lsp.testing.client import plain
from remora_lsp.testing.waiting import eventually

if TYPE_CHECKING:
    from remora_lsp.testing.client import RemoraClient
    from remora_lsp.testing.model_server import ModelServer

log = logging.getLogger(__name__)

RUN_S = 60.0
"""How long a run may take by default (a busy machine's first run imports a lot)."""
RUN_ENDS = ("agent_completed", "agent_failed", "agent_cancelled")


def model_settings(server: ModelServer, **model: Any) -> dict[str, Any]:
    """``initializationOptions`` sending agents to ``server`` with tool calling,
    no cooldown between turns and a short re-parse debounce (fast, scripted).
    """
    return {
        "model": {
            "base_url": server.url,
            "name": "scripted",
            "protocol": "tools",
            "retry_backoff_s": 0.01,
            **model,
        },
        "swarm": {"cooldown_ms": 0},
        "discovery": {"debounce_ms": 50},
    }


async def command(client: Any, name: str, argument: Any) -> Any:
    """Run a command with one argument; its result as JSON-like data."""
    return plain(
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=[argument])
        )
    )


def events(client: Any, kind: str, **fields: Any) -> list[dict[str, Any]]:
    """Events of type ``kind`` received so far, with the given field values."""
    return [
        e
        for e in client.events
        if e["type"] == kind and all(e.get(k) == v for k, v in fields.items())
    ]


async def wait_for_event(
    client: Any, kind: str, *, timeout: float = RUN_S, **fields: Any
) -> dict[str, Any]:
    """The first event of type ``kind`` with the given fields (waits for it)."""
    found = await eventually(lambda: events(client, kind, **fields), timeout=timeout)
    return found[0]


async def wait_for_run(client: Any, run_id: str, timeout: float = RUN_S) -> dict:
    """Wait for the end of run ``run_id``; its last event."""

    def done() -> dict[str, Any] | None:
        ends = [e for e in client.events if e["type"] in RUN_ENDS]
        found = [e for e in ends if e["run_id"] == run_id]
        return found[-1] if found else None

    return await eventually(done, timeout=timeout)


async def node(client: RemoraClient, ref: str) -> str:
    """The id of a node given as an id or as ``path::qualified.name``."""
    if "::" not in ref:
        return ref
    path, qualified = ref.split("::", 1)
    buffer = buffer_for(client, (client.root / path).as_uri())
    outline = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(
            text_document=types.TextDocumentIdentifier(uri=buffer.uri)
        )
    )
    symbols = flatten(outline)
    if qualified not in symbols:
        known = ", ".join(sorted(symbols)) or "none"
        raise AssertionError(f"no node {qualified} in {path} (nodes: {known})")
    return node_id_of(symbols[qualified])


async def ask(
    client: RemoraClient, ref: str, message: str, *, timeout: float = RUN_S
) -> dict[str, Any]:
    """Ask a node's agent (``remora.agent.chat``) and wait for the run's end.

    Returns the run's last event: ``agent_completed`` (with ``result``),
    ``agent_failed`` (with ``error``) or ``agent_cancelled``; each has ``run_id``.
    """
    node_id = await node(client, ref)
    started = await command(
        client, "remora.agent.chat", {"node_id": node_id, "message": message}
    )
    return await wait_for_run(client, started["run_id"], timeout=timeout)


async def proposal(
    client: Any,
    *,
    run_id: str | None = None,
    node_id: str | None = None,
    timeout: float = RUN_S,
) -> dict[str, Any]:
    """The first proposal made (by run ``run_id``, for node ``node_id``).

    Waits for its ``rewrite_proposed`` event; returns ``{id, node_id, run_id,
    diff, old_source, new_source, status}`` as ``remora.proposal.diff`` says now.
    """
    fields = {"run_id": run_id, "node_id": node_id}
    wanted = {key: value for key, value in fields.items() if value is not None}
    proposed = await wait_for_event(
        client, "rewrite_proposed", timeout=timeout, **wanted
    )
    proposal_id = proposed["proposal_id"]
    diff = await command(client, "remora.proposal.diff", {"proposal_id": proposal_id})
    return {
        "id": proposal_id,
        "node_id": proposed.get("node_id"),
        "run_id": proposed.get("run_id"),
        **diff,
    }


def _proposal_id(value: str | dict[str, Any]) -> str:
    return value if isinstance(value, str) else value["id"]


async def accept(client: Any, which: str | dict[str, Any]) -> dict[str, Any]:
    """Accept a proposal (its id or :func:`proposal`'s dict): ``{applied, reason?}``.

    The server sends the edit to the client (``workspace/applyEdit``); the
    kit's client applies it to the open buffer as an editor would.
    """
    return await command(
        client, "remora.proposal.accept", {"proposal_id": _proposal_id(which)}
    )


async def reject(
    client: Any, which: str | dict[str, Any], feedback: str
) -> dict[str, Any]:
    """Reject a proposal with feedback: ``{run_id}`` of the agent's next try."""
    return await command(
        client,
        "remora.proposal.reject",
        {"proposal_id": _proposal_id(which), "feedback": feedback},
    )


async def code_actions(
    client: Any, document_uri: str, line: int
) -> list[types.CodeAction | types.Command]:
    """The code actions on ``line`` — real ``CodeAction`` objects (see
    :func:`remora_lsp.testing.client.remora_converter`).
    """
    position = types.Position(line=line, character=0)
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=document_uri),
            range=types.Range(start=position, end=position),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return list(found or [])
