"""Which proposals each cascade made so far, in memory (``cascade_sets.py``).

Kept apart from the gathering itself so the agents' services can hold it
without importing what builds sets from a turn.
"""

from __future__ import annotations

MAX_CASCADES = 1_000
"""Cascades remembered at once (the oldest are forgotten)."""


class CascadeSets:
    """Correlation id → the proposals its cascade made so far (oldest first)."""

    def __init__(self) -> None:
        self.made: dict[str, list[str]] = {}

    def note(self, correlation_id: str, proposal_id: str) -> None:
        """Remember that the cascade made ``proposal_id``."""
        ids = self.made.setdefault(correlation_id, [])
        if proposal_id not in ids:
            ids.append(proposal_id)
        while len(self.made) > MAX_CASCADES:
            del self.made[next(iter(self.made))]
