"""The README and the documentation site as a newcomer meets them.

- The README is short and starts with the two set-up commands (the second is
  what CI runs).
- Every link of the README and of ``docs/`` stays inside the repository and
  reaches a file that exists (users do not have what lies beside it).
- Files of the repository named in the docs exist, so a move shows up here.
- Every page is in the site's navigation, and ``mkdocs build --strict`` (broken
  links and anchors, missing pages) passes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"

DEMO = (
    "python3 -m venv .venv && .venv/bin/pip install -e '.[local]' "
    "&& .venv/bin/python scripts/demo.py"
)
SUITE = (
    "python3 -m venv .venv && .venv/bin/pip install -e '.[dev,local]' "
    "&& .venv/bin/python -m pytest"
)

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]+`")
LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
SCHEMES = ("http://", "https://", "mailto:")

PATH_SPAN = re.compile(r"`(?P<path>[\w.-]+(?:/[\w.-]+)*/?)(?:::[\w.]+)?`")
PATH_ROOTS = {
    # top-level folders of the repository
    ".ci", "bench", "clients", "core", "docs", "examples", "remora_lsp",
    "requirements", "scripts", "tests",
    # packages and folders named from inside their parent (``swarm/runner.py``)
    "agents", "control", "discovery", "events", "front", "graphs", "history",
    "index", "review", "store", "swarm", "verbs", "features", "testing",
    "verification", "src", "lua", "lsp", "doc",
}  # fmt: skip
PATH_SUFFIXES = (".py", ".ts", ".lua", ".md", ".txt", ".sh", ".scm", ".png", "/")
PATH_BASES = (
    "",
    "core/remora_core",
    "core/remora_cli",
    "core",
    "remora_lsp",
    "clients/nvim",
    "clients/vscode",
)


def name_in_repository(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def prose(text: str) -> str:
    """The text outside fenced code blocks."""
    return FENCE.sub("", text)


def links(path: Path) -> list[str]:
    text = CODE_SPAN.sub("", prose(path.read_text(encoding="utf-8")))
    return [match["target"] for match in LINK.finditer(text)]


def broken_link(source: Path, target: str) -> str | None:
    """Why ``target`` (a link in ``source``) leaves the repository, or None."""
    if target.startswith(SCHEMES) or target.startswith("#"):
        return None
    path = target.split("#", 1)[0]
    if path.startswith("/") or ":" in path:
        return "not a relative link"
    resolved = (source.parent / path).resolve()
    if not resolved.is_relative_to(REPO):
        return "leaves the repository"
    if not resolved.exists():
        return "no such file"
    return None


# -- the README -----------------------------------------------------------


def test_the_readme_is_at_most_150_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move text to docs/"


def test_the_readme_starts_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)
    assert blocks[:2] == [("sh", DEMO + "\n"), ("sh", SUITE + "\n")]
    before = text[: text.index(SUITE)]
    assert re.findall(r"^#+ .*$", before, re.M) == ["# Remora LSP"], (
        "nothing but the title and the commands' introductions comes first"
    )


def test_ci_runs_the_readmes_test_command():
    assert SUITE in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_links_every_page_of_the_site():
    linked = {
        (REPO / target.split("#")[0]).resolve()
        for target in links(README)
        if not target.startswith(SCHEMES)
    }
    pages = set(DOCS.rglob("*.md"))
    assert sorted(p.relative_to(REPO) for p in pages - linked) == []


# -- links and paths --------------------------------------------------------


def test_the_link_checker_refuses_what_users_do_not_have(tmp_path: Path):
    page = DOCS / "index.md"
    assert broken_link(page, "../../shared/DESIGN.md") == "leaves the repository"
    assert broken_link(page, "missing.md") == "no such file"
    assert broken_link(page, "/etc/passwd") == "not a relative link"
    assert broken_link(page, "../clients/nvim/README.md") is None
    assert broken_link(page, "reference/settings.md#model.name") is None
    text = "[a](x.md) `[b](y.md)` ![c](z.png)\n```\n[d](w.md)\n```\n"
    assert links_of(text, tmp_path) == ["x.md", "z.png"]


def links_of(text: str, folder: Path) -> list[str]:
    page = folder / "page.md"
    page.write_text(text, encoding="utf-8")
    return links(page)


@pytest.mark.parametrize("path", markdown_files(), ids=name_in_repository)
def test_links_stay_inside_the_repository(path: Path):
    problems = [
        f"{target}: {why}"
        for target in links(path)
        if (why := broken_link(path, target)) is not None
    ]
    assert problems == []


def named_paths(path: Path) -> list[str]:
    text = prose(path.read_text(encoding="utf-8"))
    found = []
    for match in PATH_SPAN.finditer(text):
        name = match["path"]
        if name.split("/")[0] in PATH_ROOTS and name.endswith(PATH_SUFFIXES):
            found.append(name)
    return found


def exists_in_repository(name: str) -> bool:
    return any((REPO / base / name).exists() for base in PATH_BASES)


@pytest.mark.parametrize("path", markdown_files(), ids=name_in_repository)
def test_files_named_in_the_docs_exist(path: Path):
    missing = [name for name in named_paths(path) if not exists_in_repository(name)]
    assert missing == [], "named in the docs but not in the repository (moved?)"


# -- the site ---------------------------------------------------------------


def nav_pages(entries: list) -> set[str]:
    pages: set[str] = set()
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        if isinstance(value, list):
            pages |= nav_pages(value)
        else:
            pages.add(value)
    return pages


def test_every_page_is_in_the_navigation():
    config = yaml.load(
        (REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader
    )
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert nav_pages(config["nav"]) == on_disk


def test_mkdocs_builds_the_site_strictly(tmp_path: Path):
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (site / "index.html").is_file()
    assert (site / "reference" / "commands" / "index.html").is_file()
    # Repository files the pages link to are part of the site.
    mirror = site / "repository" / "clients"
    assert (mirror / "vscode" / "docs" / "screenshot.png").is_file()
    assert (mirror / "nvim" / "index.html").is_file()
