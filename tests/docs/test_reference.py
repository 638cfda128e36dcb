"""The reference pages are the code's: generated, current, and complete.

``scripts/reference_docs.py`` writes ``docs/reference/{commands,events,settings}.md``
from the command table, the event models and the settings model. A change to
any of them fails here until the pages are written again.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic.fields import FieldInfo

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "reference_docs.py"


def load_generator():
    spec = importlib.util.spec_from_file_location("reference_docs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator():
    return load_generator()


def test_the_reference_pages_are_current(generator):
    assert generator.stale_pages() == [], (
        "docs/reference is out of date: run .venv/bin/python scripts/reference_docs.py"
    )


def test_check_names_the_stale_page_and_fails(tmp_path: Path, generator):
    written = generator.write_pages(tmp_path)
    assert written == ["commands.md", "events.md", "settings.md", "clients.md"]
    assert generator.stale_pages(tmp_path) == []
    (tmp_path / "events.md").write_text("# Events\n\nby hand\n", encoding="utf-8")
    (tmp_path / "settings.md").unlink()
    assert generator.stale_pages(tmp_path) == ["events.md", "settings.md"]


def test_check_from_the_command_line_passes_on_the_repository():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_every_command_event_and_setting_is_on_its_page(generator):
    from remora_core.config import RemoraConfig
    from remora_core.events.models import EVENT_TYPES
    from remora_core.front.commands import COMMANDS

    pages = generator.pages()
    for name in COMMANDS:
        assert f"### `{name}` {{#{name}}}" in pages["commands.md"]
    for event_type in EVENT_TYPES:
        assert f"### `{event_type}` {{#{event_type}}}" in pages["events.md"]
    for section, field in RemoraConfig.model_fields.items():
        assert f"## `{section}` {{#{section}}}" in pages["settings.md"]
        model = field.annotation
        for key in getattr(model, "model_fields", {}):
            assert f"### `{section}.{key}`" in pages["settings.md"]


def test_a_setting_without_a_description_stops_the_generator(generator):
    sys.path.insert(0, str(SCRIPT.parent))
    from reference_pages import setting
    from reference_types import TypeWriter

    undocumented = FieldInfo(annotation=int, default=1)
    with pytest.raises(ValueError, match=r"agents\.new_limit has no description"):
        setting("agents.new_limit", undocumented, None, TypeWriter(str))


def test_types_read_as_json(generator):
    sys.path.insert(0, str(SCRIPT.parent))
    from typing import Literal

    from reference_types import TypeWriter
    from remora_core.front import answers

    writer = TypeWriter(lambda shape: shape.__name__)
    node_refs = writer.write(list[answers.NodeRef] | None)
    assert node_refs == "[NodeRef](#NodeRef)[] \\| null"
    assert writer.write(dict[str, int]) == "{string: integer}"
    assert writer.write(Literal["a", "b"]) == '`"a"` \\| `"b"`'
    assert writer.write(list[str | None]) == "(string \\| null)[]"
    assert writer.linked == [answers.NodeRef]
