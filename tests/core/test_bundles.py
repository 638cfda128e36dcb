"""Bundles: which bundle a node gets, project overrides, broken files reported."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from remora_core.agents.bundles import (
    CORE_TOOLS,
    SHIPPED_DIR,
    BundleRegistry,
    load_bundle,
)
from remora_core.model import CodeNode, NodeKind, Span

SPAN = Span(0, 0, 0, 0, 0, 0)


def node(kind: NodeKind, name: str = "f") -> CodeNode:
    return CodeNode(
        id="rm_aaaaaaaa",
        kind=kind,
        name=name,
        qualified_name=name,
        file_path="pkg/mod.py",
        span=SPAN,
        name_span=SPAN,
        parent_id=None,
        source_hash="",
    )


def write_bundle(root: Path, name: str, text: str) -> Path:
    path = root / ".remora" / "bundles" / name / "bundle.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def bump(path: Path) -> None:
    """Move the mtime forward so the change is seen even on coarse clocks."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


@pytest.fixture
def messages() -> list[str]:
    return []


def test_shipped_bundles_load_and_default_is_code_agent(messages):
    registry = BundleRegistry(None, {}, messages.append)
    assert {"code_agent", "docstring", "type_hints"} <= set(registry.names())
    for kind in NodeKind:
        assert registry.for_node(node(kind)).name == "code_agent"
    code_agent = registry.get("code_agent")
    assert code_agent.tools is None
    assert code_agent.tool_names == CORE_TOOLS
    assert code_agent.react_to_own_edits is False
    assert messages == []


def test_every_shipped_bundle_is_valid_and_prompted():
    for directory in sorted(SHIPPED_DIR.iterdir()):
        bundle = load_bundle(directory)
        assert bundle.name == directory.name
        assert bundle.description and bundle.system_prompt.strip()
        assert set(bundle.tool_names) <= set(CORE_TOOLS)


def test_mapping_chooses_the_bundle_by_node_kind(messages):
    registry = BundleRegistry(
        None, {"function": "docstring", "method": "type_hints"}, messages.append
    )
    assert registry.for_node(node(NodeKind.FUNCTION)).name == "docstring"
    assert registry.for_node(node(NodeKind.METHOD)).name == "type_hints"
    assert registry.for_node(node(NodeKind.CLASS)).name == "code_agent"
    docstring = registry.get("docstring")
    assert docstring.tool_names == (
        "rewrite_self",
        "read_node",
        "get_my_callers",
        "get_my_callees",
        "ask_user",
    )
    assert "PEP 257" in docstring.description
    assert messages == []


def test_unknown_bundle_name_falls_back_to_code_agent_with_one_message(messages):
    registry = BundleRegistry(None, {"class": "nope"}, messages.append)
    assert registry.for_node(node(NodeKind.CLASS)).name == "code_agent"
    assert registry.for_node(node(NodeKind.CLASS)).name == "code_agent"
    assert len(messages) == 1
    assert "no bundle named 'nope'" in messages[0]
    assert "code_agent" in messages[0]


def test_unknown_node_kind_in_mapping_is_reported(messages):
    BundleRegistry(None, {"funtion": "docstring"}, messages.append)
    assert len(messages) == 1
    assert "'funtion'" in messages[0]


def test_project_bundle_overrides_shipped_one(tmp_path, messages):
    write_bundle(
        tmp_path,
        "docstring",
        "name: docstring\n"
        "description: Google style docstrings\n"
        "system_prompt: Use Google style.\n"
        "tools: [rewrite_self]\n"
        "model:\n  name: small\n  protocol: fenced\n  extra_body: {top_k: 1}\n"
        "limits: {max_turns: 2, timeout_s: 30}\n"
        "grammar: 'root ::= \"x\"'\n",
    )
    registry = BundleRegistry(
        tmp_path, {"function": "docstring"}, messages.append, trusted=True
    )
    bundle = registry.for_node(node(NodeKind.FUNCTION))
    assert bundle.system_prompt == "Use Google style."
    assert bundle.tool_names == ("rewrite_self",)
    assert bundle.model is not None
    assert (bundle.model.name, bundle.model.protocol) == ("small", "fenced")
    assert bundle.model.extra_body == {"top_k": 1}
    assert (bundle.limits.max_turns, bundle.limits.timeout_s) == (2, 30)
    assert bundle.grammar == 'root ::= "x"'
    assert bundle.directory == tmp_path / ".remora" / "bundles" / "docstring"
    assert registry.get("type_hints").directory == SHIPPED_DIR / "type_hints"
    assert messages == []


def test_project_only_bundle_with_pym_tools(tmp_path, messages):
    write_bundle(tmp_path, "linter", "tools: [read_node, lint]\n")
    scripts = tmp_path / ".remora" / "bundles" / "linter" / "tools"
    scripts.mkdir()
    (scripts / "lint.pym").write_text("x = Input('x')\n")
    (scripts / "unused.pym").write_text("")
    registry = BundleRegistry(
        tmp_path, {"file": "linter"}, messages.append, trusted=True
    )
    assert "linter" in registry.names()
    bundle = registry.for_node(node(NodeKind.FILE))
    assert bundle.name == "linter"  # defaults to the directory name
    assert bundle.tool_names == ("read_node", "lint")
    assert [p.name for p in bundle.pym_tools] == ["lint.pym", "unused.pym"]
    assert [p.name for p in bundle.active_pym_tools] == ["lint.pym"]
    assert messages == []


def test_unknown_tool_name_is_reported_and_bundle_skipped(tmp_path, messages):
    write_bundle(tmp_path, "mine", "tools: [rewrite_self, delete_everything]\n")
    registry = BundleRegistry(
        tmp_path, {"function": "mine"}, messages.append, trusted=True
    )
    assert registry.for_node(node(NodeKind.FUNCTION)).name == "code_agent"
    assert registry.for_node(node(NodeKind.FUNCTION)).name == "code_agent"
    assert len(messages) == 1
    assert ".remora/bundles/mine/bundle.yaml" in messages[0]
    assert "unknown tool(s) 'delete_everything'" in messages[0]
    assert "no bundle named" not in messages[0]


def test_broken_yaml_reported_once_then_reloaded_when_fixed(tmp_path, messages):
    path = write_bundle(tmp_path, "docstring", "name: docstring\ntools: [a, b\n")
    registry = BundleRegistry(tmp_path, {}, messages.append, trusted=True)
    # The shipped bundle of the same name stands in.
    assert registry.get("docstring").directory == SHIPPED_DIR / "docstring"
    registry.get("docstring")
    assert len(messages) == 1
    assert messages[0].startswith(
        "Remora: bundle 'docstring' ignored: .remora/bundles/docstring/bundle.yaml:"
        " invalid YAML: line 3"
    )
    assert "using the shipped 'docstring'" in messages[0]

    path.write_text("system_prompt: fixed\n")
    bump(path)
    assert registry.get("docstring").system_prompt == "fixed"
    assert len(messages) == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("limits: {max_turns: 0}\n", "limits.max_turns: Input should be greater"),
        ("colour: blue\n", "colour: Extra inputs are not permitted"),
        ("model: {protocol: xml}\n", "model.protocol: Input should be 'tools'"),
        ("react_to_own_edits: maybe\n", "react_to_own_edits: Input should be"),
        ("- just\n- a list\n", "the top level must be a mapping"),
        ("name: other\n", "name 'other' differs from its directory 'mine'"),
    ],
)
def test_bad_fields_are_reported_with_the_file(tmp_path, messages, text, expected):
    write_bundle(tmp_path, "mine", text)
    registry = BundleRegistry(tmp_path, {}, messages.append, trusted=True)
    assert registry.get("mine").name == "code_agent"
    assert len(messages) == 1
    assert ".remora/bundles/mine/bundle.yaml: " in messages[0]
    assert expected in messages[0]


def test_edited_project_bundle_is_reloaded_and_deleted_one_forgotten(tmp_path):
    path = write_bundle(tmp_path, "code_agent", "system_prompt: one\n")
    registry = BundleRegistry(tmp_path, {}, trusted=True)
    assert registry.for_node(node(NodeKind.CLASS)).system_prompt == "one"
    path.write_text("system_prompt: two\n")
    bump(path)
    assert registry.for_node(node(NodeKind.CLASS)).system_prompt == "two"
    path.unlink()
    assert registry.get("code_agent").directory == SHIPPED_DIR / "code_agent"


def test_project_code_agent_is_the_fallback_for_unknown_names(tmp_path, messages):
    write_bundle(tmp_path, "code_agent", "system_prompt: house rules\n")
    registry = BundleRegistry(tmp_path, {}, messages.append, trusted=True)
    assert registry.get("missing").system_prompt == "house rules"
    assert len(messages) == 1


def test_empty_bundle_yaml_means_all_defaults(tmp_path, messages):
    write_bundle(tmp_path, "plain", "")
    bundle = BundleRegistry(tmp_path, {}, messages.append, trusted=True).get("plain")
    assert (bundle.name, bundle.tool_names, bundle.system_prompt) == (
        "plain",
        CORE_TOOLS,
        "",
    )
    assert messages == []
