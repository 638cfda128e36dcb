"""The code attrs generates for the protocol's types, compiled once per user.

Importing ``lsprotocol.types`` builds ~550 attrs classes. attrs writes each
class's ``__init__``, ``__eq__`` and the like as Python source and compiles it:
~2,000 compilations, 100 of the 180 ms the import takes, at every start of the
server (a sixth of a warm start of a 1.7-million-line project, and of every
server a test starts; ``bench/index_large.py``). Python keeps the bytecode of
modules, not of code made at run time. :func:`generated_code_cached` keeps
attrs' for the length of an import:

- The compiled code is kept, marshalled, in the user's cache folder (where the
  embedded model is: ``$REMORA_CACHE_DIR``, else ``~/.cache/remora``), in a
  file named for the interpreter's bytecode format.
- A code object is reused only for exactly the source attrs generated and its
  file name (the key), so another attrs or lsprotocol can never run stale code;
  the file holds what the last import used, no more.
- The file is used only if it is a regular file of this user that nobody else
  may write: marshalled code is code, and the cache must not be a way in for
  another local user.
- Anything unexpected (an attrs without this hook, a damaged or unreadable
  file, a read-only cache folder) means the plain import: slower, never wrong.
"""

from __future__ import annotations
import __future__

import contextlib
import importlib.util
import inspect
import logging
import marshal
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import Any

from remora_core.cache_folder import default_cache_dir

log = logging.getLogger(__name__)

HOOK_PARAMETERS = ["script", "globs", "locs", "filename"]
"""The signature of ``attr._make._compile_and_eval`` this module replaces."""


@dataclass
class GeneratedCode:
    """What one import compiled and what it found compiled."""

    path: Path
    reused: int = 0
    compiled: int = 0
    problem: str | None = None
    """Why the kept code was not used (None when it was, or there was none)."""
    _known: dict[str, CodeType] = field(default_factory=dict, repr=False)
    _used: dict[str, CodeType] = field(default_factory=dict, repr=False)
    _new_places: int = 0
    """Code compiled for a place (attrs' file name for the generated
    methods) the kept file has no code for at all."""


def cache_path() -> Path:
    """The file for this interpreter's bytecode format."""
    tag = sys.implementation.cache_tag or sys.implementation.name
    magic = importlib.util.MAGIC_NUMBER.hex()
    return default_cache_dir() / "generated-code" / f"attrs-{tag}-{magic}.marshal"


@contextlib.contextmanager
def generated_code_cached(path: Path | None = None) -> Iterator[GeneratedCode]:
    """While the body runs, attrs' generated code comes from the kept file
    (compiled and added when missing); the file is written after, if needed.
    """
    found = GeneratedCode(path or cache_path())
    _make = _attrs_with_the_hook()
    if _make is None:
        found.problem = "this attrs has no hook for its generated code"
        yield found
        return
    original = _make._compile_and_eval
    found._known = _read(found)
    # attrs compiles with its own module's future features: so do we (and
    # they are part of the key).
    flags = (
        __future__.annotations.compiler_flag
        if getattr(_make, "annotations", None) is __future__.annotations
        else 0
    )

    known_places = {key.split("\0", 2)[1] for key in found._known}

    def compile_and_eval(script, globs, locs=None, filename=""):
        """What attrs does, with the compiled code kept."""
        key = f"{flags}\0{filename}\0{script}"
        code = found._known.get(key)
        if code is None:
            code = compile(script, filename, "exec", flags, dont_inherit=True)
            found.compiled += 1
            if filename not in known_places:
                found._new_places += 1
        else:
            found.reused += 1
        found._used[key] = code
        eval(code, globs, locs)  # what attrs itself does with it

    _make._compile_and_eval = compile_and_eval
    try:
        yield found
    finally:
        _make._compile_and_eval = original
    # Written when code for a new place was compiled or kept code went
    # unused; not for a place whose script differs at every start (one of
    # cattrs' classes: its generated methods hold a string's hash, seeded
    # per process), which rewrote the whole file at every start.
    if found._new_places or len(found._used) != len(found._known):
        _write(found.path, found._used)


def _attrs_with_the_hook() -> Any:  # attr._make (private: no types), or None
    """The module where attrs compiles generated code, if it has the hook."""
    try:
        from attr import _make

        parameters = list(inspect.signature(_make._compile_and_eval).parameters)
    except (ImportError, AttributeError, TypeError, ValueError):
        return None
    return _make if parameters == HOOK_PARAMETERS else None


def _read(found: GeneratedCode) -> dict[str, CodeType]:
    """The kept code, or nothing (saying why in ``found.problem``)."""
    try:
        fd = os.open(found.path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return {}
    except OSError as error:
        found.problem = f"cannot open {found.path}: {error}"
        return {}
    with os.fdopen(fd, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            found.problem = f"{found.path} is not a regular file"
        elif status.st_uid != os.getuid():
            found.problem = f"{found.path} belongs to another user"
        elif status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            found.problem = f"{found.path} may be written by other users"
        if found.problem:
            log.warning("not using the kept compiled code: %s", found.problem)
            return {}
        try:
            data = marshal.load(file)
        except (EOFError, ValueError, TypeError) as error:
            found.problem = f"{found.path} is damaged: {error}"
            return {}
    if not isinstance(data, dict):
        found.problem = f"{found.path} is damaged: not a table of code"
        return {}
    return {
        key: code
        for key, code in data.items()
        if isinstance(key, str) and isinstance(code, CodeType)
    }


def _write(path: Path, entries: dict[str, CodeType]) -> None:
    """Replace the file with ``entries`` in one step; a failure is only logged."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".generated-")
        try:
            with os.fdopen(fd, "wb") as file:  # mkstemp: mode 0600
                marshal.dump(entries, file)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as error:
        log.debug("cannot keep the compiled code in %s: %s", path, error)
