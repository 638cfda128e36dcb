"""The commands of DESIGN §11 over the facades, for non-LSP consumers.

The control socket (``core/remora_cli/control``) and the in-process backend of the
command line dispatch here: ``await call(app, name, arguments)`` parses
``arguments`` with the command's pydantic model (one place turns a validation
error into a readable :class:`InvalidArguments`), calls one facade and returns
JSON. Names and results are those of DESIGN §11, plus a few the command line
needs (``remora.nodes.search``, ``remora.events.list``, ``remora.events.last_seq``).

Where the language server takes a ``uri``, these take a ``uri`` or a project
``path``; node ids may be any node reference of :mod:`.nodes` (a unique prefix,
``path::qualified.name``). Adding a command is one model and one function in
:data:`COMMANDS`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlparse

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    model_validator,
)

from remora_core.front.batch_commands import BATCH_COMMANDS
from remora_core.front.errors import InvalidArguments
from remora_core.history.conversation import MAX_ENTRIES
from remora_core.model import ProposalStatus
from remora_core.swarm.run_list import MAX_RUNS
from remora_core.swarm.run_list import RunStatus as ShownRunStatus
from remora_core.text import PositionEncoding

if TYPE_CHECKING:
    from remora_core.editor import Editor
    from remora_core.front.app import RemoraApp

log = logging.getLogger(__name__)


class Arguments(BaseModel):
    """Base of every command's argument model: unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


M = TypeVar("M", bound=Arguments)


class NodeArgs(Arguments):
    """A node reference."""

    node_id: str = Field(min_length=1)


class NodeEventsArgs(NodeArgs):
    """A node and how many events."""

    limit: int = Field(default=50, ge=1, le=1000)


class Position(Arguments):
    """A position in a document: 0-based line and UTF-16 character."""

    line: int = Field(ge=0)
    character: int = Field(ge=0)


class HistoryArgs(NodeArgs):
    """A node and how many conversation entries."""

    limit: int = Field(default=200, ge=1, le=MAX_ENTRIES)


class NodeAtArgs(Arguments):
    """A document (uri or path) and a position (UTF-16)."""

    uri: str | None = None
    path: str | None = None
    position: Position

    @model_validator(mode="after")
    def _document(self) -> NodeAtArgs:
        if self.uri is None and self.path is None:
            raise ValueError("remora.node.at wants {uri or path, position}")
        return self


class SearchArgs(Arguments):
    """A search query (empty: every node)."""

    query: str = ""
    limit: int = Field(default=50, ge=1, le=10_000)


class ChatArgs(NodeArgs):
    """A node and a person's message."""

    message: str = Field(min_length=1)


class RunArgs(NodeArgs):
    """A node and an optional instruction."""

    instruction: str = ""


class CancelArgs(Arguments):
    """A run id."""

    run_id: str = Field(pattern=r"^run_")


class RespondArgs(Arguments):
    """An agent's question and the answer."""

    question_id: str = Field(min_length=1)
    answer: str = Field(min_length=1)


class ProposalArgs(Arguments):
    """A proposal id or unique prefix."""

    proposal_id: str = Field(min_length=1)


class RejectArgs(ProposalArgs):
    """A proposal and the feedback (None: ask the person); ``retry`` false
    records the rejection without the agent trying again (``remora reject``
    without feedback).
    """

    feedback: str | None = None
    retry: StrictBool = True


class ProposalsArgs(Arguments):
    """Optional file (uri or path) and status."""

    uri: str | None = None
    path: str | None = None
    status: ProposalStatus | None = None


class RunsArgs(Arguments):
    """Optional status and node."""

    status: ShownRunStatus | None = None
    node_id: str | None = None
    limit: int = Field(default=100, ge=1, le=MAX_RUNS)


class EventsArgs(Arguments):
    """Which events: after a seq, of a node, run or type (``agent_*``)."""

    since_seq: int | None = Field(default=None, ge=0)
    node_id: str | None = None
    run_id: str | None = None
    type: str | None = None
    limit: int = Field(default=100, ge=1, le=100_000)


class Empty(Arguments):
    """No arguments."""


def parse(model: type[M], arguments: Any, command: str) -> M:
    """``arguments`` as ``model``; :class:`InvalidArguments` saying what is wrong."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise InvalidArguments(
            f"{command} takes one JSON object argument, got {type(arguments).__name__}"
        )
    try:
        return model.model_validate(arguments)
    except ValidationError as error:
        raise InvalidArguments(f"{command}: {describe(error)}") from None


def describe(error: ValidationError) -> str:
    """A validation error in one line a person can act on."""
    problems = []
    for item in error.errors()[:5]:
        where = ".".join(str(part) for part in item["loc"]) or "argument"
        message = str(item["msg"]).removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown argument"
        problems.append(f"{where}: {message}")
    return "; ".join(problems)


def file_uri(app: RemoraApp, path: str) -> str:
    """The ``file:`` URI of a project path."""
    root = app.root
    return (root / path).as_uri() if root is not None else Path(path).as_uri()


def project_path(app: RemoraApp, uri: str | None, path: str | None) -> str | None:
    """The project path named by a ``uri`` or a ``path`` (None: neither)."""
    if path is not None:
        return path.strip("/") if app.root is not None else path
    if uri is None:
        return None
    parsed = urlparse(uri)
    if parsed.scheme != "file" or app.root is None:
        raise InvalidArguments(f"not a file of this project: {uri}")
    try:
        return Path(unquote(parsed.path)).relative_to(app.root).as_posix()
    except ValueError:
        raise InvalidArguments(f"not a file of this project: {uri}") from None


# ---- the commands ----------------------------------------------------------------


async def node_get(app: RemoraApp, a: NodeArgs, editor: Editor | None) -> Any:
    """``remora.node.get``: the node card."""
    node = app.nodes.find(a.node_id)
    return {**await app.nodes.card(node), "uri": file_uri(app, node.file_path)}


async def node_at(app: RemoraApp, a: NodeAtArgs, editor: Editor | None) -> Any:
    """``remora.node.at``: the card of the innermost node at a position."""
    path = project_path(app, a.uri, a.path)
    assert path is not None  # the model wants uri or path
    position = a.position
    node = app.nodes.at(path, position.line, position.character, PositionEncoding.UTF16)
    return await node_get(app, NodeArgs(node_id=node.id), editor) if node else None


async def node_events(app: RemoraApp, a: NodeEventsArgs, editor: Editor | None) -> Any:
    """``remora.node.events``: the node's latest events, newest first."""
    node = app.nodes.find(a.node_id)
    found = await app.history.query(node_id=node.id, limit=a.limit)
    return [stored.to_json() for stored in reversed(found)]


async def agent_history(app: RemoraApp, a: HistoryArgs, editor: Editor | None) -> Any:
    """``remora.agent.history``: the node's conversation, oldest first."""
    node = app.nodes.find(a.node_id)
    return await app.history.conversation(node.id, a.limit)


async def nodes_search(app: RemoraApp, a: SearchArgs, editor: Editor | None) -> Any:
    """``remora.nodes.search``: short references of the best matches."""
    return [app.nodes.ref(node) for node in app.nodes.search(a.query, a.limit)]


async def agent_chat(app: RemoraApp, a: ChatArgs, editor: Editor | None) -> Any:
    """``remora.agent.chat`` → ``{run_id}``."""
    return {"run_id": await app.runs.chat(a.node_id, a.message)}


async def agent_run(app: RemoraApp, a: RunArgs, editor: Editor | None) -> Any:
    """``remora.agent.run`` → ``{run_id}``."""
    return {"run_id": await app.runs.run(a.node_id, a.instruction)}


async def agent_cancel(app: RemoraApp, a: CancelArgs, editor: Editor | None) -> Any:
    """``remora.agent.cancel`` → ``{cancelled}``."""
    return {"cancelled": app.runs.cancel(a.run_id)}


async def agent_respond(app: RemoraApp, a: RespondArgs, editor: Editor | None) -> Any:
    """``remora.agent.respond`` → ``{ok}``."""
    return {"ok": app.runs.respond(a.question_id, a.answer)}


async def proposal_accept(
    app: RemoraApp, a: ProposalArgs, editor: Editor | None
) -> Any:
    """``remora.proposal.accept`` → ``{applied, reason?}``."""
    return await app.proposals.accept(a.proposal_id, editor)


async def proposal_reject(app: RemoraApp, a: RejectArgs, editor: Editor | None) -> Any:
    """``remora.proposal.reject`` → ``{run_id}``."""
    run_id = await app.proposals.reject(a.proposal_id, a.feedback, retry=a.retry)
    return {"run_id": run_id}


async def proposal_diff(app: RemoraApp, a: ProposalArgs, editor: Editor | None) -> Any:
    """``remora.proposal.diff`` → ``{diff, old_source, new_source, status}``."""
    return app.proposals.diff(a.proposal_id)


async def proposals_list(
    app: RemoraApp, a: ProposalsArgs, editor: Editor | None
) -> Any:
    """``remora.proposals.list`` → proposals, newest first."""
    path = project_path(app, a.uri, a.path)
    return [
        {**app.proposals.summary(p), "uri": file_uri(app, p.file_path)}
        for p in app.proposals.list(path=path, status=a.status)
    ]


async def runs_list(app: RemoraApp, a: RunsArgs, editor: Editor | None) -> Any:
    """``remora.runs.list`` → runs, newest first."""
    node_id = app.nodes.find(a.node_id).id if a.node_id is not None else None
    return await app.runs.list(status=a.status, node_id=node_id, limit=a.limit)


async def events_list(app: RemoraApp, a: EventsArgs, editor: Editor | None) -> Any:
    """``remora.events.list`` → events, oldest first."""
    node_id = app.nodes.find(a.node_id).id if a.node_id is not None else None
    found = await app.history.query(
        since_seq=a.since_seq,
        node_id=node_id,
        run_id=a.run_id,
        event_type=a.type,
        limit=a.limit,
    )
    return [stored.to_json() for stored in found]


async def events_last_seq(app: RemoraApp, a: Empty, editor: Editor | None) -> Any:
    """``remora.events.last_seq`` → ``{seq}`` of the newest event."""
    return {"seq": app.history.last_seq}


Handler = Callable[[Any, Any, Any], Awaitable[Any]]
COMMANDS: dict[str, tuple[type[Arguments], Handler]] = {
    "remora.node.get": (NodeArgs, node_get),
    "remora.node.at": (NodeAtArgs, node_at),
    "remora.node.events": (NodeEventsArgs, node_events),
    "remora.agent.history": (HistoryArgs, agent_history),
    "remora.nodes.search": (SearchArgs, nodes_search),
    "remora.agent.chat": (ChatArgs, agent_chat),
    "remora.agent.run": (RunArgs, agent_run),
    "remora.agent.cancel": (CancelArgs, agent_cancel),
    "remora.agent.respond": (RespondArgs, agent_respond),
    "remora.proposal.accept": (ProposalArgs, proposal_accept),
    "remora.proposal.reject": (RejectArgs, proposal_reject),
    "remora.proposal.diff": (ProposalArgs, proposal_diff),
    "remora.proposals.list": (ProposalsArgs, proposals_list),
    "remora.runs.list": (RunsArgs, runs_list),
    "remora.events.list": (EventsArgs, events_list),
    "remora.events.last_seq": (Empty, events_last_seq),
    **BATCH_COMMANDS,  # type: ignore[dict-item]
}
"""Command name → (argument model, handler)."""


async def call(
    app: RemoraApp, command: str, arguments: Any, editor: Editor | None = None
) -> Any:
    """Run ``command`` with ``arguments``; its JSON result.

    ``editor``: the one to accept proposals through (default: the app's).
    """
    entry = COMMANDS.get(command)
    if entry is None:
        raise InvalidArguments(
            f"unknown command {command!r}; known: {', '.join(sorted(COMMANDS))}"
        )
    model, handler = entry
    return await handler(app, parse(model, arguments, command), editor)
