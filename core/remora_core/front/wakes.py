"""The ``subscriptions`` facade: why a node's agent wakes, and a person's say
in it — its subscriptions (listed with what each fired lately, added,
removed) and muting (``swarm/wake.py``, ``swarm/cascade.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from remora_core.front.errors import InvalidArguments, NotFound
from remora_core.history.subscribed import node_subscriptions

if TYPE_CHECKING:
    from remora_core.events.subscriptions import Pattern
    from remora_core.front.nodes import Nodes
    from remora_core.front.startup import Startup


class Wakes:
    """Subscriptions and muting of one project's agents."""

    def __init__(self, startup: Startup, nodes: Nodes) -> None:
        self._startup = startup
        self._nodes = nodes

    async def list(self, node_ref: Any) -> dict[str, Any]:
        """The node's subscriptions (defaults first) and whether it is muted."""
        parts = await self._startup.parts()
        node = self._nodes.find(node_ref)
        return {
            "node_id": node.id,
            "muted": node.id in parts.swarm.rules.muted,
            "subscriptions": await node_subscriptions(parts.swarm, node.id),
        }

    async def add(self, node_ref: Any, pattern: Pattern) -> str:
        """Subscribe the node's agent to ``pattern``; the subscription's id."""
        parts = await self._startup.parts()
        node = self._nodes.find(node_ref, active=True)
        self._startup.ensure_owner("change subscriptions")
        if pattern == type(pattern)():
            raise InvalidArguments(
                "remora.subscriptions.add: the pattern gives no field, so it would "
                "match every event; give event_types, path_glob, nodes, …"
            )
        return await parts.swarm.subscribe(node.id, pattern)

    async def remove(self, node_ref: Any, subscription_id: str) -> bool:
        """Remove one of the node's own subscriptions (a default cannot be:
        mute the node instead).
        """
        parts = await self._startup.parts()
        node = self._nodes.find(node_ref)
        self._startup.ensure_owner("change subscriptions")
        if subscription_id.startswith(("sub_msg_", "sub_own_")):
            raise InvalidArguments(
                f"{subscription_id} is one of the defaults every node has; mute "
                "the node (remora.node.mute) to stop what wakes it on its own"
            )
        if not await parts.swarm.unsubscribe(node.id, subscription_id):
            raise NotFound(f"{node.id} has no subscription {subscription_id}")
        return True

    async def mute(self, node_ref: Any, muted: bool) -> dict[str, Any]:
        """Mute (only a person's message wakes it) or unmute the node."""
        parts = await self._startup.parts()
        node = self._nodes.find(node_ref)
        self._startup.ensure_owner("mute an agent")
        changed = await parts.swarm.mute(node.id, muted)
        return {"node_id": node.id, "muted": muted, "changed": changed}
