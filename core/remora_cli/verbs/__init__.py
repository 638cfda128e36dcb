"""The verbs of ``remora``: one module each, found here automatically.

A verb module defines::

    NAME = "proposals"                       # the word on the command line
    HELP = "list proposals"                  # one line for ``remora --help``
    def add_arguments(parser): ...           # its options (argparse)
    async def run(args, backend) -> int: ... # the exit code (see main.py)

and nothing else needs to change: adding a verb is adding a module.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from types import ModuleType

log = logging.getLogger(__name__)


def verbs() -> list[ModuleType]:
    """Every verb module of this package, in name order."""
    found = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "run"):
            found.append(module)
    return found
