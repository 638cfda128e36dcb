"""A person's standing instructions for one node's agent
(``agents/instructions.py``).

Set here; read on the node's card (``remora.node.get``, hover, the editors'
panels) — no separate ``get`` command: the card is where a person looks at
a node, and one more command would say the same thing twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from remora_core.front import answers
from remora_core.front.arguments import NodeArgs
from remora_core.front.table import Door, Route, command

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp


class InstructionsArgs(NodeArgs):
    """A node and the instructions its agent should follow from now on."""

    text: str = Field(
        description="the instructions, shown in every later prompt of the node's "
        "agent ('' removes them); at most limits.node_instructions_chars"
    )


@command(
    "remora.node.instructions.set",
    InstructionsArgs,
    answers.NodeInstructions,
    Route.NODE,
)
async def node_instructions_set(app: RemoraApp, a: InstructionsArgs, door: Door) -> Any:
    """Give the node's agent standing instructions (empty text removes them):
    kept in its memory across restarts, in every later prompt, on its card.
    """
    return await app.nodes.set_instructions(app.nodes.find(a.node_id), a.text)


INSTRUCTION_COMMANDS = [node_instructions_set]
