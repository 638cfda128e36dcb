"""MkDocs hook: links from the documentation to other files of the repository.

The pages under ``docs/`` link to files of the repository the way a reader of
a checkout sees them (``../clients/nvim/README.md``), so the links work in the
repository itself and in a Git host's file view. MkDocs only builds ``docs/``:
this hook copies each repository file a page links to into the site under
``repository/`` (a Markdown file becomes a page of the site, and its own
links are followed the same way) and points the links there.

A link to a file that does not exist, or one that leaves the repository, is
left as it is, so ``mkdocs build --strict`` reports it. Loaded by
``mkdocs.yml`` (``hooks:``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from mkdocs.structure.files import File

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

LINK = re.compile(r"(?P<open>\]\()(?P<target>[^)\s]+)(?P<close>\))")
"""A Markdown link or image target: ``[text](target)``, ``![alt](target)``."""
MIRROR = "repository"
"""Where repository files appear in the site."""


def _roots(config: MkDocsConfig) -> tuple[Path, Path]:
    docs = Path(config.docs_dir).resolve()
    return docs, Path(config.config_file_path).resolve().parent


def _split(target: str) -> tuple[str, str]:
    """A link target as (path, ``#fragment``)."""
    path, hash_, fragment = target.partition("#")
    return path, hash_ + fragment


def _is_relative_path(path: str) -> bool:
    return bool(path) and ":" not in path and not path.startswith("/")


def outside_targets(page: Path, docs: Path, root: Path) -> Iterator[Path]:
    """The repository files outside ``docs`` that the Markdown file ``page`` links."""
    for match in LINK.finditer(page.read_text(encoding="utf-8")):
        path, _ = _split(match["target"])
        if not _is_relative_path(path):
            continue
        target = (page.parent / path).resolve()
        inside = target.is_relative_to(root) and not target.is_relative_to(docs)
        if inside and target.is_file():
            yield target


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add every repository file the pages link to (and those it links to)."""
    docs, root = _roots(config)
    queue = [Path(page.abs_src_path or "") for page in files.documentation_pages()]
    added: set[Path] = set()
    while queue:
        for target in outside_targets(queue.pop(), docs, root):
            if target in added:
                continue
            added.add(target)
            uri = f"{MIRROR}/{target.relative_to(root).as_posix()}"
            files.append(File.generated(config, uri, abs_src_path=str(target)))
            if target.suffix == ".md":
                queue.append(target)
    return files


def on_page_markdown(
    markdown: str, page: Page, config: MkDocsConfig, files: Files
) -> str:
    """Point the page's links to repository files at their copies in the site."""
    docs, root = _roots(config)
    source = Path(page.file.abs_src_path or "").parent
    here = PurePosixPath(page.file.src_uri).parent

    def rewrite(match: re.Match[str]) -> str:
        path, fragment = _split(match["target"])
        if not _is_relative_path(path):
            return match[0]
        target = (source / path).resolve()
        if not target.is_file():
            return match[0]
        if target.is_relative_to(docs):
            uri = target.relative_to(docs).as_posix()
        elif target.is_relative_to(root):
            uri = f"{MIRROR}/{target.relative_to(root).as_posix()}"
        else:
            return match[0]
        relative = posixpath.relpath(uri, here.as_posix())
        return f"{match['open']}{relative}{fragment}{match['close']}"

    return LINK.sub(rewrite, markdown)
