"""Settings: layered sources, merged key by key; bad input never stops the server.

Layers (DESIGN §12), later wins: defaults < ``[tool.remora]`` in ``pyproject.toml`` <
``remora.yaml`` < the editor's settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from pydantic import ValidationError
from remora_core.config import RemoraConfig, describe_problems, load_config, merge

if TYPE_CHECKING:
    from pathlib import Path

DEFAULTS = RemoraConfig()

# These tests compare with the defaults: no settings file of the person's.
pytestmark = pytest.mark.usefixtures("no_person_config")


def write(root: Path, pyproject: str | None = None, yaml: str | None = None) -> None:
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    if yaml is not None:
        (root / "remora.yaml").write_text(yaml, encoding="utf-8")


def test_no_sources_give_the_defaults(tmp_path):
    assert load_config(tmp_path) == (DEFAULTS, [])
    assert load_config(None) == (DEFAULTS, [])
    assert DEFAULTS.ids.inline_comments is False
    assert DEFAULTS.discovery.max_file_bytes == 2_000_000


def test_each_layer_overrides_the_one_below_key_by_key(tmp_path):
    write(
        tmp_path,
        pyproject=(
            "[project]\nname = 'demo'\n\n"
            "[tool.remora.swarm]\nmax_depth = 3\ncooldown_ms = 10\nturn_budget = 7\n"
            "[tool.remora.agents]\nmax_turns = 4\n"
        ),
        yaml=(
            "swarm:\n  max_depth: 6\n  cooldown_ms: 20\nids:\n  inline_comments: true\n"
        ),
    )
    config, problems = load_config(
        tmp_path, {"swarm": {"max_depth": 9}, "model": {"name": "local-7b"}}
    )
    assert problems == []
    assert config.swarm.max_depth == 9  # editor
    assert config.swarm.cooldown_ms == 20  # remora.yaml
    assert config.swarm.turn_budget == 7  # pyproject.toml
    assert config.agents.max_turns == 4  # pyproject.toml, another section
    assert config.agents.max_concurrency == DEFAULTS.agents.max_concurrency
    assert config.ids.inline_comments is True
    assert config.model.name == "local-7b"


def test_lists_are_replaced_not_merged(tmp_path):
    write(tmp_path, yaml="discovery:\n  exclude: [build]\n")
    config, problems = load_config(tmp_path)
    assert problems == []
    assert config.discovery.exclude == ["build"]
    assert config.discovery.include == DEFAULTS.discovery.include


def test_merge_is_deep_and_does_not_mutate_its_inputs():
    base = {"a": {"b": 1, "c": {"d": 2}}, "e": 3}
    override = {"a": {"c": {"f": 4}}, "e": {"g": 5}}
    assert merge(base, override) == {
        "a": {"b": 1, "c": {"d": 2, "f": 4}},
        "e": {"g": 5},
    }
    assert base == {"a": {"b": 1, "c": {"d": 2}}, "e": 3}


def test_invalid_values_fall_back_to_defaults_and_valid_ones_are_kept(tmp_path):
    write(
        tmp_path,
        yaml=(
            "agents:\n  max_concurrency: 0\n  max_turns: 3\n"
            "swarm:\n  max_depth: lots\n  cooldown_ms: 5\n"
            "discovery:\n  include: ['**/*.py', 3]\n  max_file_bytes: 1000\n"
            "model:\n  provider: telepathy\n"
        ),
    )
    config, problems = load_config(tmp_path)
    assert config.agents.max_concurrency == DEFAULTS.agents.max_concurrency
    assert config.agents.max_turns == 3
    assert config.swarm.max_depth == DEFAULTS.swarm.max_depth
    assert config.swarm.cooldown_ms == 5
    assert config.discovery.include == DEFAULTS.discovery.include
    assert config.discovery.max_file_bytes == 1000
    assert config.model.provider is None
    where = sorted(problem.split(":")[0] for problem in problems)
    assert where == [
        "agents.max_concurrency",
        "discovery.include.1",
        "model.provider",
        "swarm.max_depth",
    ]


def test_unknown_keys_are_reported_and_ignored(tmp_path):
    write(
        tmp_path,
        pyproject=(
            "[tool.remora]\ncolour = 'blue'\n[tool.remora.swarm]\nmax_depht = 2\n"
        ),
    )
    config, problems = load_config(tmp_path, {"agents": {"max_turns": 2}})
    assert config.swarm == DEFAULTS.swarm
    assert config.agents.max_turns == 2
    assert len(problems) == 2
    assert any(p.startswith("colour:") for p in problems)
    assert any(p.startswith("swarm.max_depht:") for p in problems)


def test_a_section_of_the_wrong_type_falls_back_as_a_whole():
    config, problems = load_config(None, {"swarm": 5, "agents": {"max_turns": 2}})
    assert config.swarm == DEFAULTS.swarm
    assert config.agents.max_turns == 2
    assert [p.split(":")[0] for p in problems] == ["swarm"]


def test_broken_toml_is_reported_not_raised(tmp_path):
    write(tmp_path, pyproject="[tool.remora\nswarm = ", yaml="swarm:\n  max_depth: 4\n")
    config, problems = load_config(tmp_path)
    assert config.swarm.max_depth == 4  # the other sources still count
    assert len(problems) == 1 and problems[0].startswith("pyproject.toml:")


def test_broken_yaml_is_reported_not_raised(tmp_path):
    write(
        tmp_path, pyproject="[tool.remora.swarm]\nmax_depth = 4\n", yaml="swarm: [1,\n"
    )
    config, problems = load_config(tmp_path)
    assert config.swarm.max_depth == 4
    assert len(problems) == 1 and problems[0].startswith("remora.yaml:")


@pytest.mark.parametrize(
    ("yaml", "message"),
    [("- a\n- b\n", "remora.yaml: the top level must be a mapping"), ("", None)],
)
def test_a_yaml_file_that_is_not_a_mapping(tmp_path, yaml, message):
    write(tmp_path, yaml=yaml)
    config, problems = load_config(tmp_path)
    assert config == DEFAULTS
    assert problems == ([message] if message else [])


def test_tool_remora_must_be_a_table(tmp_path):
    write(tmp_path, pyproject="[tool]\nremora = 3\n")
    assert load_config(tmp_path) == (
        DEFAULTS,
        ["pyproject.toml: [tool.remora] must be a table"],
    )


def test_editor_settings_that_are_not_an_object_are_reported():
    config, problems = load_config(None, ["swarm"])  # type: ignore[arg-type]
    assert config == DEFAULTS
    assert problems == ["editor settings for 'remora' must be an object"]


def test_problems_read_as_one_message():
    _, problems = load_config(None, {"agents": {"max_turns": 0}, "nope": 1})
    message = describe_problems(problems)
    assert message.startswith("Remora: ignoring invalid settings")
    assert "agents.max_turns" in message and "nope" in message


def test_the_settings_are_frozen():
    config, _ = load_config(None, {"swarm": {"max_depth": 2}})
    with pytest.raises(ValidationError):
        config.swarm.max_depth = 3  # type: ignore[misc]
