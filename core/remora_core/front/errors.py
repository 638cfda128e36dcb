"""Errors the facades raise; each consumer turns them into its own kind of
answer (a JSON-RPC error in the language server and on the control socket, an
exit code on the command line).
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)


class FrontError(Exception):
    """A request the engine cannot serve; ``str(error)`` is for a person."""

    code = "failed"


class InvalidArguments(FrontError):
    """Malformed or unknown arguments (JSON-RPC InvalidParams)."""

    code = "invalid"


class NotFound(InvalidArguments):
    """No node, proposal or run with that id."""

    code = "not_found"


class Ambiguous(InvalidArguments):
    """A prefix or name matching more than one thing; ``candidates`` lists them."""

    code = "ambiguous"

    def __init__(self, message: str, candidates: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.candidates = candidates


class CannotApply(FrontError):
    """A proposal cannot be applied to the current text (``str``: why)."""

    code = "cannot_apply"


class NotOwner(FrontError):
    """Another Remora server owns the store: this one serves it read-only."""

    code = "not_owner"


INVALID_PARAMS = -32602
"""JSON-RPC's code for arguments that are wrong (a bad or unknown id too)."""
REQUEST_FAILED = -32803
"""LSP's code for a valid request the server could not serve."""


def error_code(error: FrontError) -> int:
    """The JSON-RPC error code every door answers ``error`` with."""
    return INVALID_PARAMS if isinstance(error, InvalidArguments) else REQUEST_FAILED


def error_data(error: FrontError) -> dict[str, Any]:
    """The machine-readable part of an error (JSON-RPC ``data``)."""
    data: dict[str, Any] = {"kind": error.code}
    if isinstance(error, Ambiguous):
        data["candidates"] = error.candidates
    return data
