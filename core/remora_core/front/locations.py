"""Files named by commands: ``file:`` URIs ↔ project paths, in one place.

A project path is relative to the project root with ``/`` separators. The
project of files outside every workspace folder (no root) keys a file by its
absolute path, or by its URI when it has no path on disk (``untitled:``).
Every door — the language server, the control socket, the command line —
converts here, so a URI in one door's answer is the URI in another's.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from remora_core.front.errors import InvalidArguments


def uri_path(uri: str) -> Path | None:
    """The filesystem path of a ``file:`` URI, else None."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(os.path.normpath(unquote(parsed.path)))


def file_uri(root: Path | None, path: str) -> str:
    """The URI of ``path`` in the project at ``root`` (None: files outside
    every workspace folder, keyed by absolute path or by URI).
    """
    if root is not None:
        return (root / path).as_uri()
    if ":" in path.split("/", 1)[0]:
        return path  # a URI already (untitled:…)
    return Path(path).as_uri()


def project_path(root: Path | None, uri: str | None, path: str | None) -> str | None:
    """The project path a command's ``uri`` or ``path`` names (None: neither);
    :class:`InvalidArguments` when it is outside the project.
    """
    if path is not None:
        return _given_path(root, path)
    if uri is None:
        return None
    found = uri_path(uri)
    if root is None:
        return found.as_posix() if found is not None else uri
    if found is None:
        raise InvalidArguments(f"not a file of this project: {uri}")
    try:
        return found.relative_to(root).as_posix()
    except ValueError:
        raise InvalidArguments(f"not a file of this project: {uri}") from None


def _given_path(root: Path | None, path: str) -> str:
    given = Path(path)
    if root is None:
        return given.as_posix()
    if given.is_absolute():
        try:
            return given.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            raise InvalidArguments(f"not a file of this project: {path}") from None
    relative = given.as_posix().strip("/")
    if ".." in Path(relative).parts:
        raise InvalidArguments(f"not a file of this project: {path}")
    return relative
