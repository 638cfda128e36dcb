"""Argument models the commands share: references to nodes, proposals, runs,
files and positions.

References are what a person types, checked only for shape here; the facades
resolve them (``nodes.find``: a full id, a unique id prefix or
``path::qualified.name``; ``proposals.find``: an id or a unique prefix) and
say what is wrong when nothing or several match. Every model refuses unknown
keys (:class:`~remora_core.front.table.Arguments`).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, StrictInt, StrictStr, model_validator

from remora_core.front.table import Arguments


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be blank")
    return text


Text = Annotated[StrictStr, AfterValidator(_not_blank)]
"""A person's words: a string with something in it."""

NodeRefField = Annotated[
    str,
    Field(
        min_length=1,
        description="a node: its id (rm_…), a unique id prefix, or "
        "path::qualified.name",
    ),
]
ProposalRefField = Annotated[
    str, Field(min_length=1, description="a proposal: its id (pr_…) or a unique prefix")
]
RunIdField = Annotated[str, Field(pattern=r"^run_", description="a run id (run_…)")]
GraphRunIdField = Annotated[
    str, Field(pattern=r"^gr_", description="a graph run id (gr_…)")
]
CheckpointIdField = Annotated[
    str, Field(pattern=r"^cp_", description="a checkpoint id (cp_…)")
]


def limit_field(default: int, most: int) -> Any:
    """A ``limit`` argument: a whole number from 1 to ``most``."""
    return Field(default=default, ge=1, le=most, strict=True)


class NodeArgs(Arguments):
    """A node."""

    node_id: NodeRefField


class ProposalArgs(Arguments):
    """A proposal."""

    proposal_id: ProposalRefField


class FileArgs(Arguments):
    """A file: its ``uri``, or its ``path`` relative to the project root."""

    uri: str | None = Field(default=None, description="a file: URI")
    path: str | None = Field(
        default=None, description="a path relative to the project root"
    )


class RequiredFileArgs(FileArgs):
    """A file that must be given."""

    @model_validator(mode="after")
    def _given(self) -> RequiredFileArgs:
        if self.uri is None and self.path is None:
            raise ValueError("give the file as uri or path")
        return self


class Position(Arguments):
    """A position: 0-based line and character (UTF-16 unless the door
    negotiated another encoding, as LSP does).
    """

    line: StrictInt = Field(ge=0)
    character: StrictInt = Field(ge=0)


class Empty(Arguments):
    """No arguments."""
