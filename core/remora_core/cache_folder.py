"""The user's cache folder: what Remora keeps between runs that is not the
project's (the embedded model's weights, the protocol types' compiled code).
"""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """``$REMORA_CACHE_DIR``, ``$XDG_CACHE_HOME/remora`` or ``~/.cache/remora``."""
    if explicit := os.environ.get("REMORA_CACHE_DIR"):
        return Path(explicit)
    if xdg := os.environ.get("XDG_CACHE_HOME"):
        return Path(xdg) / "remora"
    return Path.home() / ".cache" / "remora"
