"""Hostile YAML and globs at every door of the engine: bounded work, a short
clear message (issue 25, class 6; ``bounded_yaml.py``, ``globs.py``).

The real server's answers to the same files are in
``tests/lsp/test_hostile_input.py``; here every reader of YAML and every
kind of glob is fed them directly, with the time and the memory they take
(``tracemalloc``) bounded.
"""

from __future__ import annotations

import fnmatch
import re
import time
import tracemalloc
from contextlib import contextmanager

import pathspec
import pytest
import yaml
from remora_core import globs
from remora_core.agents.bundles import BundleError, load_bundle
from remora_core.bounded_yaml import MAX_DEPTH, YamlRefused, load_yaml
from remora_core.config import read_project_sources, validate
from remora_core.discovery.files import FileFilter, secret_glob
from remora_core.graphs.spec import GraphInvalid, parse_graph
from remora_core.user_files import read_user_config

from tests.lsp.test_hostile_input import HOSTILE_GLOB, laughs

ANSWER_S = 5.0
GROWTH_MB = 100


@contextmanager
def bounded():
    """The body takes at most ANSWER_S and GROWTH_MB of new memory."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        yield
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert time.monotonic() - started < ANSWER_S
    assert peak < GROWTH_MB * 1024 * 1024


def refused(message: str) -> None:
    assert "alias" in message
    assert len(message) < 600


def test_every_yaml_reader_refuses_a_billion_laughs(tmp_path, person_files):
    hostile = laughs(9)  # 9**9 strings through aliases, 600-odd bytes
    with bounded():
        with pytest.raises(GraphInvalid) as graph:
            parse_graph(hostile)
        refused(str(graph.value))

        (tmp_path / "remora.yaml").write_text(hostile)
        _, problems = read_project_sources(tmp_path)
        refused(" ".join(problems))

        (person_files / "config" / "config.yaml").write_text(hostile)
        _, problems = read_user_config()
        refused(" ".join(problems))

        bundle = tmp_path / "bundles" / "laughs"
        bundle.mkdir(parents=True)
        (bundle / "bundle.yaml").write_text(hostile)
        with pytest.raises(BundleError) as bad_bundle:
            load_bundle(bundle)
        refused(str(bad_bundle.value))


def test_deep_nesting_and_size_are_refused_with_a_yaml_error():
    with pytest.raises(YamlRefused, match="levels of nesting"):
        load_yaml("[" * 100_000)
    assert load_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(YamlRefused, match="more than the 1,000 read"):
        load_yaml("a: b\n" * 1000, max_chars=1000)
    with pytest.raises(yaml.YAMLError):  # callers catch YAMLError as before
        load_yaml("x: &a [1]\ny: *a\n")


def test_a_huge_value_in_a_graph_is_quoted_short():
    with pytest.raises(GraphInvalid) as problem:
        parse_graph({"name": "g", "error_policy": "x" * 1_000_000, "steps": []})
    assert "must be one of stop_graph" in str(problem.value)
    assert len(str(problem.value)) < 1000
    with pytest.raises(GraphInvalid) as problem:
        parse_graph({"name": "g", "k" * 100_000: 1, "steps": []})
    assert "is not a graph field" in str(problem.value)
    assert len(str(problem.value)) < 1000


def test_a_too_long_glob_in_the_settings_is_a_problem_not_a_crash():
    config, problems = validate(
        {"discovery": {"exclude": ["*" * 5000]}, "secrets": {"exclude": ["a"]}}
    )
    assert any(
        p.startswith("discovery.exclude.0: String should have at most")
        for p in problems
    )
    assert config.secrets.exclude == ["a"]


def test_hostile_globs_answer_in_linear_time():
    long_name = "a" * 5000 + ".py"
    with bounded():
        assert not globs.name_matches(long_name, HOSTILE_GLOB)
        assert not globs.path_matches(long_name, HOSTILE_GLOB)
        assert not globs.path_matches("x/" + long_name, "**/" + HOSTILE_GLOB)
        assert secret_glob(long_name, [HOSTILE_GLOB]) is None
        keep = FileFilter.from_globs(["**/*.py"], [HOSTILE_GLOB, "(" * 900])
        assert keep.wants(long_name)
        assert keep.excludes(long_name[:-3] + "/" + long_name) is False
    with pytest.raises(globs.GlobError, match="too long"):
        globs.check("*" * (globs.MAX_GLOB_CHARS + 1))


NAMES = ["a.py", "ab", "a/b.py", ".env", ".env.local", "x.pem", "rm_abcd1234",
         "api.v1.handle_get", "[x]", "a-b", "a]b", "!x", "a\nb", "é.py",
         "a.b.c", "^a"]  # fmt: skip
NAME_GLOBS = ["*", "*.py", "a*", "?b", ".env*", "*.p?m", "rm_*", "api.*.handle_*",
              "[ab]*", "[!a]*", "[a-c]?", "[]]", "a[]]b", "[x", "*[!.]py", "\\*",
              "*/b.py", "é*", "a.b.c", "[!]]*", "[^a]*"]  # fmt: skip


def test_names_match_as_fnmatch_says():
    for name in NAMES:
        for glob in NAME_GLOBS:
            assert globs.name_matches(name, glob) == fnmatch.fnmatchcase(name, glob), (
                name,
                glob,
            )


def old_path_glob(glob: str) -> re.Pattern[str]:
    """The graphs' path glob before globs.py (a backtracking regex)."""
    parts, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            parts.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            parts.append(".*")
            i += 2
        elif glob[i] == "*":
            parts.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            parts.append("[^/]")
            i += 1
        else:
            parts.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(parts) + r"\Z")


PATHS = ["inventory/stock.py", "inventory/a/b/c.py", "stock.py", "a/b", "a/.env",
         "src/pkg/__init__.py", "a/b/c/d.pyi", "x.py/y.py"]  # fmt: skip
PATH_GLOBS = ["inventory/**/*.py", "inventory/*.py", "**/*.py", "*.py", "**",
              "a/**", "src/**.py", "**/b/*", "a/?/c/*.pyi", "*/*", "**/.env",
              "x.py/*"]  # fmt: skip


def test_paths_match_as_the_graphs_path_glob_did():
    for path in PATHS:
        for glob in PATH_GLOBS:
            old = old_path_glob(glob).match(path) is not None
            assert globs.path_matches(path, glob) == old, (path, glob)


GITIGNORE = [".venv", ".git", "node_modules/", "*.py", "**/*.pyi", "/top.py",
             "build/**", "!keep.py", "a/**/b", "doc/*.txt", "\\#x", "# comment",
             "[ab].py", "**/tests/"]  # fmt: skip
GIT_PATHS = ["a.py", "x/a.py", ".venv/", ".venv/lib/x.py", "node_modules/",
             "node_modules/x.js", "top.py", "x/top.py", "build/x/y.o", "keep.py",
             "a/b", "a/x/y/b", "doc/a.txt", "doc/x/a.txt", "#x", "b.py",
             "pkg/tests/", "pkg/tests/t.py", "x.pyi"]  # fmt: skip


def test_gitignore_lists_match_as_pathspec_says():
    for size in range(1, len(GITIGNORE) + 1):
        lines = GITIGNORE[:size]
        ours = globs.gitignore(lines)
        theirs = pathspec.GitIgnoreSpec.from_lines(lines, backend="simple")
        for path in GIT_PATHS:
            assert ours.match_file(path) == theirs.match_file(path), (lines, path)
