"""Moved to :mod:`remora_lsp.testing.model_server` (the pytest kit ships it).

Kept as a re-export so branches written against the old path still import;
new code imports from the package.
"""

from __future__ import annotations

from remora_lsp.testing.model_server import *  # noqa: F403
from remora_lsp.testing.model_server import ModelServer, Reply  # noqa: F401
