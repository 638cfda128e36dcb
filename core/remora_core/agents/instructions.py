"""A person's standing instructions for one node's agent.

Set with ``remora.node.instructions.set {node_id, text}`` (empty text removes
them), shown on the node's card and in every later prompt of its agent, after
who it is. They are kept in the agent's memory (the ``kv`` table, so they
survive a restart) under :data:`INSTRUCTIONS_KEY`: a key only a person writes
(``workspace.PERSON_KEY_PREFIX``) — the agent can read them with ``kv_get``
but not change them, and ``remora.agent.forget`` keeps them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from remora_core.agents.workspace import PERSON_KEY_PREFIX

if TYPE_CHECKING:
    from remora_core.agents.workspace import KeyValueStore

INSTRUCTIONS_KEY = f"{PERSON_KEY_PREFIX}instructions"
"""The memory key holding a node's instructions."""


class InstructionsTooLong(ValueError):
    """Instructions over ``limits.node_instructions_chars``."""


async def instructions_of(kv: KeyValueStore, node_id: str) -> str | None:
    """The person's instructions for ``node_id``'s agent, None when none."""
    value = await kv.get(node_id, INSTRUCTIONS_KEY)
    return value if isinstance(value, str) and value.strip() else None


async def set_instructions(
    kv: KeyValueStore, node_id: str, text: str, limit: int
) -> bool:
    """Give ``node_id``'s agent these instructions ('' removes them); whether
    they changed. :class:`InstructionsTooLong` past ``limit`` characters.
    """
    text = text.strip()
    if len(text) > limit:
        raise InstructionsTooLong(
            f"instructions have at most {limit:,} characters "
            f"(limits.node_instructions_chars); these have {len(text):,}"
        )
    if text == (await instructions_of(kv, node_id) or ""):
        return False
    if not text:
        return await kv.delete(node_id, INSTRUCTIONS_KEY)
    await kv.set(node_id, INSTRUCTIONS_KEY, text, by_person=True)
    return True


def instructions_part(text: str | None) -> str:
    """The prompt's part holding a person's instructions ('' when none)."""
    return f"The person's standing instructions for you:\n{text}" if text else ""
