"""Remora's language server: the pygls adapter around ``remora_core``.

This package is the only code that speaks LSP. ``server.py`` holds the server
class and the ordered list of feature modules; each module in ``features/``
registers the handlers of one LSP feature.
"""

from remora_core import __version__

__all__ = ["__version__"]
