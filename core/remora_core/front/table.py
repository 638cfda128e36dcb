"""What a command of the table is: its name, arguments, answer, handler, route.

Every ``remora.*`` command is one :class:`Command` (gathered in
:data:`remora_core.front.commands.COMMANDS`): a pydantic model of its one JSON
object argument (unknown keys refused, naming the key), the type of its
answer (documentation: ``docs/reference/commands.md`` is generated from it),
the async handler that calls one facade of the app, and the :class:`Route`
that says which project answers when a door serves several (the language
server, one project per workspace folder).

A handler receives the app, its parsed arguments and the :class:`Door` it was
called through: the editor to accept proposals through and the position
encoding of positions in the arguments.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from remora_core.front.errors import InvalidArguments
from remora_core.text import PositionEncoding

if TYPE_CHECKING:
    from remora_core.editor import Editor


class Arguments(BaseModel):
    """Base of every command's argument model: unknown keys are refused."""

    # Validators are built on first use, not at import (the server starts
    # faster: most commands are never called in a session).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


M = TypeVar("M", bound=Arguments)


class Route(StrEnum):
    """Which project answers a command, when a door serves several."""

    NODE = "node"
    """The project that has the node ``node_id`` names."""
    PROPOSAL = "proposal"
    """The project that has the proposal(s) ``proposal_id(s)`` name."""
    RUN = "run"
    """The project running ``run_id``, else the first whose store knows it."""
    QUESTION = "question"
    """The project whose agent asked ``question_id`` (else the first)."""
    GRAPH_RUN = "graph_run"
    """The project that ran ``graph_run_id``."""
    DOCUMENT = "document"
    """The project of the file ``uri`` / ``path`` names; every project when
    neither is given (list answers are joined)."""
    FOLDER = "folder"
    """The workspace folder holding ``uri`` (any file or folder in it, whatever
    its discovery settings); every project when no ``uri`` is given."""
    WORKSPACE = "workspace"
    """The first workspace folder's project."""
    EVERY = "every"
    """Every project; list answers are joined."""


@dataclass(frozen=True)
class Door:
    """How a command was called: through which editor, in which encoding."""

    editor: Editor | None = None
    """Accept proposals through this editor (None: the app's own)."""
    encoding: PositionEncoding = PositionEncoding.UTF16
    """The encoding of ``character`` in positions (LSP: the negotiated one)."""


Handler = Callable[[Any, Any, Door], Awaitable[Any]]
Join = Callable[[list[Any]], Any]


def concatenate(answers: list[Any]) -> Any:
    """Several projects' list answers as one list."""
    return [item for answer in answers for item in answer]


@dataclass(frozen=True)
class Command:
    """One ``remora.*`` command."""

    name: str
    arguments: type[Arguments]
    answer: Any
    """The type of the JSON answer (a TypedDict, a list of one, …)."""
    handler: Handler
    route: Route
    join: Join = concatenate
    """Several projects' answers as one (routes that ask every project)."""

    @property
    def summary(self) -> str:
        """What the command does, for a person (the handler's docstring)."""
        return inspect.cleandoc(self.handler.__doc__ or "")


def command(
    name: str,
    arguments: type[Arguments],
    answer: Any,
    route: Route,
    join: Join = concatenate,
) -> Callable[[Handler], Command]:
    """Declare a handler as the command ``name``."""

    def declare(handler: Handler) -> Command:
        return Command(name, arguments, answer, handler, route, join)

    return declare


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
        elif item["type"] != "missing" and not isinstance(item["input"], dict):
            message = f"{message}, got {item['input']!r:.60}"
        problems.append(f"{where}: {message}")
    return "; ".join(problems)
