"""Commands that read nodes and the event log: cards, search, events.

Node references are resolved by ``app.nodes.find`` (an id, a unique prefix or
``path::qualified.name``); positions are 0-based, in the door's encoding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from remora_core.front import answers
from remora_core.front.arguments import Empty, FileArgs, NodeArgs, Position, limit_field
from remora_core.front.errors import NotFound
from remora_core.front.locations import file_uri, project_path
from remora_core.front.table import Arguments, Door, Route, command

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp


class NodeEventsArgs(NodeArgs):
    """A node and how many of its events."""

    limit: int = limit_field(50, 1000)


class NodeAtArgs(FileArgs):
    """A document (uri or path) and a position in it."""

    position: Position

    @model_validator(mode="after")
    def _document(self) -> NodeAtArgs:
        if self.uri is None and self.path is None:
            raise ValueError("remora.node.at wants {uri or path, position}")
        return self


class SearchArgs(Arguments):
    """A search query (empty: every node)."""

    query: str = Field(default="", description="words of a name, path or id")
    limit: int = limit_field(50, 10_000)


class GraphPageArgs(Arguments):
    """A page of the node graph: where it starts and how many nodes."""

    offset: int = Field(default=0, ge=0, strict=True, description="nodes to skip")
    limit: int = limit_field(5000, 20_000)


class EventsArgs(Arguments):
    """Which events: after a seq, of a node, a run or a type."""

    since_seq: int | None = Field(
        default=None, ge=0, description="only events after this seq, oldest first"
    )
    node_id: str | None = Field(default=None, description="a node reference")
    run_id: str | None = None
    type: str | None = Field(
        default=None, description="an event type; agent_* matches a prefix"
    )
    limit: int = limit_field(100, 100_000)


async def card(app: RemoraApp, node_id: str) -> dict[str, Any]:
    """The card of the node ``node_id`` names, with its URI."""
    node = app.nodes.find(node_id)
    return {**await app.nodes.card(node), "uri": file_uri(app.root, node.file_path)}


@command("remora.node.get", NodeArgs, answers.NodeCard, Route.NODE)
async def node_get(app: RemoraApp, a: NodeArgs, door: Door) -> Any:
    """The node's card: where it is, its parent, callers and callees, its
    agent's status, pending proposals, latest events, last answer and the
    conversation's latest entries.
    """
    return await card(app, a.node_id)


@command("remora.node.source", NodeArgs, answers.NodeSource, Route.NODE)
async def node_source(app: RemoraApp, a: NodeArgs, door: Door) -> Any:
    """The node's current source (the open buffer, else the file), withheld
    for a file matching ``secrets.exclude`` — the settings this server
    resolved, the editor's included — or one that cannot be read safely.
    """
    return app.nodes.source(app.nodes.find(a.node_id))


@command("remora.node.at", NodeAtArgs, answers.NodeCard | None, Route.DOCUMENT)
async def node_at(app: RemoraApp, a: NodeAtArgs, door: Door) -> Any:
    """The card of the innermost node at a position of a document, or null."""
    path = project_path(app.root, a.uri, a.path)
    assert path is not None  # the model wants uri or path
    if app.documents.lines(path) is None:
        raise NotFound(
            f"Remora does not know {a.uri or a.path}: it is not open in the editor "
            "and not a file of the project"
        )
    where = a.position
    node = app.nodes.at(path, where.line, where.character, door.encoding)
    return await card(app, node.id) if node is not None else None


@command("remora.node.events", NodeEventsArgs, list[answers.EventJson], Route.NODE)
async def node_events(app: RemoraApp, a: NodeEventsArgs, door: Door) -> Any:
    """The node's latest events, newest first."""
    node = app.nodes.find(a.node_id)
    found = await app.history.query(node_id=node.id, limit=a.limit)
    return [stored.to_json() for stored in reversed(found)]


@command("remora.nodes.search", SearchArgs, list[answers.NodeMatch], Route.EVERY)
async def nodes_search(app: RemoraApp, a: SearchArgs, door: Door) -> Any:
    """The active nodes best matching the query, with their agents' status."""
    return [app.nodes.ref(node) for node in app.nodes.search(a.query, a.limit)]


@command("remora.nodes.graph", GraphPageArgs, answers.NodeGraphPage, Route.WORKSPACE)
async def nodes_graph(app: RemoraApp, a: GraphPageArgs, door: Door) -> Any:
    """The project's node graph a page at a time: active nodes with their
    agents' status and container (containment), and the calls between them.
    """
    return app.nodes.graph_page(a.offset, a.limit)


@command("remora.events.list", EventsArgs, list[answers.EventJson], Route.WORKSPACE)
async def events_list(app: RemoraApp, a: EventsArgs, door: Door) -> Any:
    """Events, oldest first: the last ``limit`` matching, or those after
    ``since_seq``.
    """
    node_id = app.nodes.find(a.node_id).id if a.node_id is not None else None
    found = await app.history.query(
        since_seq=a.since_seq,
        node_id=node_id,
        run_id=a.run_id,
        event_type=a.type,
        limit=a.limit,
    )
    return [stored.to_json() for stored in found]


@command("remora.events.last_seq", Empty, answers.LastSeq, Route.WORKSPACE)
async def events_last_seq(app: RemoraApp, a: Empty, door: Door) -> Any:
    """The ``seq`` of the newest event (follow from it)."""
    return {"seq": app.history.last_seq}


NODE_COMMANDS = [
    node_get,
    node_source,
    node_at,
    node_events,
    nodes_search,
    nodes_graph,
    events_list,
    events_last_seq,
]
