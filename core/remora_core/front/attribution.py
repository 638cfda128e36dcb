"""The ``attribution`` facade: which lines came from which agent (DESIGN §10).

:meth:`Attribution.ranges` reads the current text of a file (the open buffer,
else the disk) and returns the line ranges still written by an accepted
proposal; :meth:`Attribution.trailers` the ``Remora-Agent: rm_… (pr_…)`` commit
trailers of accepted proposals not yet committed (``remora_core.history.attribution``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from remora_core.history.attribution import attribution_json, trailers

if TYPE_CHECKING:
    from remora_core.front.startup import Startup
    from remora_core.index.code_index import CodeIndex

log = logging.getLogger(__name__)


class Attribution:
    """Attribution of one project's lines to agents."""

    def __init__(self, index: CodeIndex, startup: Startup) -> None:
        self._index = index
        self._startup = startup

    async def ranges(self, path: str) -> list[dict[str, Any]] | None:
        """Attributed line ranges of ``path`` (0-based lines); None when the
        file cannot be read.
        """
        parts = await self._startup.parts()
        text = self._index.read_text(path)
        if text is None:
            return None
        return await attribution_json(parts.database, path, text)

    async def trailers(self) -> list[str]:
        """Commit trailers of accepted proposals not yet in a commit."""
        parts = await self._startup.parts()
        root = self._index.root
        if root is None:
            return []
        return await trailers(root, parts.database, self._index.read_text)
