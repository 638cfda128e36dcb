"""Command arguments, parsed by pydantic models (DESIGN §11).

Every Remora command takes one JSON object. :func:`parse` checks that, then
validates it with the command's model; the ONE place a ``ValidationError``
becomes a JSON-RPC ``InvalidParams`` is here, with the message of the first
problem, written for a person ("node_id must look like rm_ followed by 8
letters or digits, got 5"). Fields are declared in the order they are checked,
so the first problem reported is the first one a person would fix. Unknown
keys are ignored (clients add their own).
"""

from __future__ import annotations

import logging
import re
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pygls.exceptions import JsonRpcInvalidParams
from remora_core.history.conversation import MAX_ENTRIES
from remora_core.index.identity import is_node_id
from remora_core.model import ProposalStatus
from remora_core.swarm.run_list import MAX_RUNS, RunStatus

from remora_lsp.projects import uri_to_path

log = logging.getLogger(__name__)

PROPOSAL_ID = re.compile(r"^pr_[0-9a-f]{12}$")
STATUSES = tuple(status.value for status in ProposalStatus)


def single_object(args: tuple[Any, ...], command: str) -> dict[str, Any]:
    """The one JSON object argument every Remora command takes."""
    if len(args) != 1:
        raise JsonRpcInvalidParams(
            f"{command} takes one JSON object argument, got {len(args)} arguments"
        )
    if not isinstance(args[0], dict):
        raise JsonRpcInvalidParams(
            f"{command} takes one JSON object argument, got "
            f"{type(args[0]).__name__} {args[0]!r:.60}"
        )
    return args[0]


M = TypeVar("M", bound="Arguments")


def parse(model: type[M], args: tuple[Any, ...], command: str) -> M:
    """The command's arguments as ``model``; ``InvalidParams`` saying what is
    wrong otherwise.
    """
    data = single_object(args, command)
    try:
        return model.model_validate(data, context={"command": command})
    except ValidationError as error:
        raise JsonRpcInvalidParams(readable(error)) from None


def readable(error: ValidationError) -> str:
    """The first problem of a validation error, for a person."""
    first = error.errors()[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "value_error":
        return message
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {message}"


def _node_id(value: Any) -> str:
    if not is_node_id(value):
        raise ValueError(
            f"node_id must look like rm_ followed by 8 letters or digits, got {value!r}"
        )
    return value


def _proposal_id(value: Any) -> str:
    if not isinstance(value, str) or not PROPOSAL_ID.match(value):
        raise ValueError(
            f"proposal_id must look like pr_ followed by 12 hex digits, got {value!r}"
        )
    return value


NodeId = Annotated[Any, BeforeValidator(_node_id)]
ProposalId = Annotated[Any, BeforeValidator(_proposal_id)]


def _text(value: Any, info: ValidationInfo, *, required: bool) -> str:
    command = (info.context or {}).get("command", "this command")
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValueError(f"{command} needs {info.field_name} as a non-empty string")
    return value


class Arguments(BaseModel):
    """Base of the argument models: unknown keys ignored, defaults checked."""

    model_config = ConfigDict(extra="ignore", validate_default=True, frozen=True)


class NodeArguments(Arguments):
    """``{node_id}``."""

    node_id: NodeId = None


class ChatArguments(Arguments):
    """``remora.agent.chat {node_id, message}``."""

    message: Any = None
    node_id: NodeId = None

    @field_validator("message", mode="before")
    @classmethod
    def _message(cls, value: Any, info: ValidationInfo) -> str:
        return _text(value, info, required=True)


class RunArguments(Arguments):
    """``remora.agent.run {node_id, instruction?}``."""

    instruction: Any = None
    node_id: NodeId = None

    @field_validator("instruction", mode="before")
    @classmethod
    def _instruction(cls, value: Any, info: ValidationInfo) -> str:
        return _text(value, info, required=False)


class CancelArguments(Arguments):
    """``remora.agent.cancel {run_id}``."""

    run_id: Any = None

    @field_validator("run_id", mode="before")
    @classmethod
    def _run_id(cls, value: Any) -> str:
        if not isinstance(value, str) or not value.startswith("run_"):
            raise ValueError(
                f"remora.agent.cancel needs run_id like run_…, got {value!r}"
            )
        return value


class RespondArguments(Arguments):
    """``remora.agent.respond {question_id, answer}``."""

    answer: Any = None
    question_id: Any = None

    @field_validator("answer", mode="before")
    @classmethod
    def _answer(cls, value: Any, info: ValidationInfo) -> str:
        return _text(value, info, required=True)

    @field_validator("question_id", mode="before")
    @classmethod
    def _question_id(cls, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise ValueError("remora.agent.respond needs question_id")
        return value


class ProposalArguments(Arguments):
    """``{proposal_id}`` (accept, diff)."""

    proposal_id: ProposalId = None


class RejectArguments(ProposalArguments):
    """``remora.proposal.reject {proposal_id, feedback?}``."""

    feedback: Any = None

    @field_validator("feedback", mode="before")
    @classmethod
    def _feedback(cls, value: Any) -> str | None:
        if value is not None and not isinstance(value, str):
            raise ValueError("feedback must be a string")
        return value


class ProposalsArguments(Arguments):
    """``remora.proposals.list {uri?, status?}``."""

    status: Any = None
    uri: Any = None

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, value: Any) -> str | None:
        if value is not None and value not in STATUSES:
            raise ValueError(
                f"status must be one of {', '.join(STATUSES)}, got {value!r}"
            )
        return value

    @field_validator("uri", mode="before")
    @classmethod
    def _uri(cls, value: Any) -> str | None:
        if value is not None and not isinstance(value, str):
            raise ValueError("uri must be a string")
        return value


def _whole(value: Any, most: int) -> int:
    """A whole number from 1 to ``most`` (``True`` is not one)."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
        raise ValueError(
            f"limit must be a whole number from 1 to {most}, got {value!r}"
        )
    return value


def _limit_to(most: int) -> Any:
    """The type of a ``limit`` argument: a whole number from 1 to ``most``."""
    return Annotated[Any, BeforeValidator(lambda value: _whole(value, most))]


EventsLimit = _limit_to(1000)
HistoryLimit = _limit_to(MAX_ENTRIES)
RunsLimit = _limit_to(MAX_RUNS)


class NodeAtArguments(Arguments):
    """``remora.node.at {uri, position: {line, character}}``; the URI itself is
    checked against the projects (``Projects.known``).
    """

    position: Any = None
    uri: Any = None

    @field_validator("position", mode="before")
    @classmethod
    def _position(cls, value: Any) -> tuple[int, int]:
        if not isinstance(value, dict) or not all(
            isinstance(value.get(k), int)
            and not isinstance(value.get(k), bool)
            and value[k] >= 0
            for k in ("line", "character")
        ):
            raise ValueError("remora.node.at wants {uri, position: {line, character}}")
        return value["line"], value["character"]


class NodeEventsArguments(Arguments):
    """``remora.node.events {node_id, limit?}`` (limit 1–1,000, default 50)."""

    limit: EventsLimit = 50
    node_id: NodeId = None


class HistoryArguments(Arguments):
    """``remora.agent.history {node_id, limit?}`` (default 200)."""

    limit: HistoryLimit = 200
    node_id: NodeId = None


class RunsArguments(Arguments):
    """``remora.runs.list {status?, node_id?, limit?}`` (default 100)."""

    status: Any = None
    limit: RunsLimit = 100
    node_id: Any = None

    @field_validator("status", mode="before")
    @classmethod
    def _status(cls, value: Any) -> RunStatus | None:
        if value is None:
            return None
        try:
            return RunStatus(value)
        except ValueError:
            known = ", ".join(s.value for s in RunStatus)
            raise ValueError(f"status must be one of {known}, got {value!r}") from None

    @field_validator("node_id", mode="before")
    @classmethod
    def _node_id(cls, value: Any) -> str | None:
        return None if value is None else _node_id(value)


def _file_uri(value: Any, info: ValidationInfo) -> str | None:
    command = (info.context or {}).get("command", "this command")
    if value is not None and (not isinstance(value, str) or uri_to_path(value) is None):
        raise ValueError(f"{command} wants uri as a file: URI, got {value!r}")
    return value


class TrustArguments(Arguments):
    """``remora.trust.get`` / ``revoke {uri?}``: one workspace folder, or all."""

    uri: Any = None

    @field_validator("uri", mode="before")
    @classmethod
    def _uri(cls, value: Any, info: ValidationInfo) -> str | None:
        return _file_uri(value, info)


class TrustSetArguments(Arguments):
    """``remora.trust.set {trusted, uri?}``."""

    trusted: Any = None
    uri: Any = None

    @field_validator("trusted", mode="before")
    @classmethod
    def _trusted(cls, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ValueError(
                f"remora.trust.set needs trusted as true or false, got {value!r}"
            )
        return value

    @field_validator("uri", mode="before")
    @classmethod
    def _uri(cls, value: Any, info: ValidationInfo) -> str | None:
        return _file_uri(value, info)
