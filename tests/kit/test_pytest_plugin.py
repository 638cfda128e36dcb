"""The pytest kit tried the way a team uses it: the documented example project
(``docs/testing-kit.md``) — its own bundle, ``.pym`` tool and test file — built
in a fresh directory and run by pytest in a subprocess (``pytester``), against
the real server.

The project files are the page's code blocks whose title names a path
(```` ```python title="tests/test_counter_bundle.py" ````), so the documented
example is the one that runs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "testing-kit.md"
SECTION = "## A complete example"
BLOCK = re.compile(r'^```\w+ title="(?P<path>[^"]+)"\n(?P<body>.*?)^```$', re.M | re.S)


def example_files() -> dict[str, str]:
    """``{path: text}`` of the page's example project."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(SECTION)
    section = text[start : text.index("\n## ", start + len(SECTION))]
    return {m["path"]: m["body"] for m in BLOCK.finditer(section)}


def test_the_documented_example_is_a_complete_project():
    files = example_files()
    assert set(files) == {
        "pyproject.toml",
        "shop/prices.py",
        ".remora/bundles/counter/bundle.yaml",
        ".remora/bundles/counter/tools/count_lines.pym",
        "tests/test_counter_bundle.py",
    }


@pytest.mark.slow
def test_a_team_runs_the_documented_example_with_the_plugin(pytester: pytest.Pytester):
    for relative, body in example_files().items():
        path = pytester.path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")

    # Only what an installed plugin gives: no conftest, no import of tests/.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")

    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*::test_the_count_tool_then_a_reviewed_docstring?neovim? PASSED*",
            "*::test_the_count_tool_then_a_*?visual-studio-code? PASSED*",
        ]
    )
    # The copy was worked on, never the project itself.
    assert '"""' not in (pytester.path / "shop/prices.py").read_text(encoding="utf-8")
    assert not (pytester.path / ".remora" / "remora.db").exists()


@pytest.mark.slow
def test_without_a_project_the_fixture_says_what_to_set(pytester: pytest.Pytester):
    pytester.makepyprojecttoml(
        '[tool.pytest.ini_options]\nasyncio_mode = "auto"\n'
        'asyncio_default_fixture_loop_scope = "function"\n'
    )
    pytester.makepyfile(test_nothing="async def test_it(remora_client):\n    pass\n")

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")

    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        ["*remora_client needs a project: set `remora_project*"]
    )
