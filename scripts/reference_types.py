"""Reading the code for the reference pages: docstrings and types as Markdown.

Python types are written the way the JSON looks (``string``, ``integer``,
``T[]``, ``"a" | "b"``); a ``TypedDict`` or pydantic model is a link to its
own section, and :class:`TypeWriter` remembers which ones it linked so the
page can describe each. Attribute docstrings (a string under a field) are read
from the source with :mod:`ast`, as pydantic's ``use_attribute_docstrings``
would.
"""

from __future__ import annotations

import ast
import enum
import inspect
import json
import re
import sys
import types
import typing
from functools import cache
from pathlib import Path
from typing import Any

import typing_extensions
from pydantic import BaseModel
from pydantic.fields import FieldInfo

SCALARS: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
    Any: "any",
}
LIMITS = {
    "gt": "> {}",
    "ge": "≥ {}",
    "lt": "< {}",
    "le": "≤ {}",
    "min_length": "length ≥ {}",
    "max_length": "length ≤ {}",
    "pattern": "matches `{}`",
}
ROLE = re.compile(r":\w+:`~?(?:[\w.]+\.)?([^`]+)`")


def prose(text: str | None) -> str:
    """A docstring as Markdown: cleaned, reST roles and ````x```` as ```x```."""
    text = inspect.cleandoc(text or "")
    text = ROLE.sub(r"`\1`", text)
    # Readers write JSON and YAML: Python's None is their null.
    return text.replace("``", "`").replace("`None`", "`null`")


def one_line(text: str | None) -> str:
    """``prose`` on one line (a table cell)."""
    return " ".join(prose(text).split())


def first_sentence(text: str | None) -> str:
    """The first sentence (or line) of a docstring, for an index."""
    line = one_line(text)
    end = re.search(r"\.(\s|$)", line)
    return line[: end.start() + 1] if end else line


@cache
def _module_tree(path: str) -> ast.Module:
    return ast.parse(Path(path).read_text(encoding="utf-8"))


def _class_node(cls: type) -> ast.ClassDef | None:
    path = inspect.getsourcefile(sys.modules[cls.__module__])
    if path is None:
        return None
    for node in _module_tree(path).body:
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            return node
    return None


def own_attribute_docs(cls: type) -> dict[str, str]:
    """``{attribute: docstring}`` of the attributes written in ``cls``'s body."""
    node = _class_node(cls)
    if node is None:
        return {}
    docs: dict[str, str] = {}
    for current, following in zip(node.body, node.body[1:], strict=False):
        name = _assigned_name(current)
        if name and _is_string(following):
            docs[name] = following.value.value  # type: ignore[attr-defined]  # checked by _is_string
    return docs


def _assigned_name(statement: ast.stmt) -> str | None:
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return statement.target.id
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
    ):
        return statement.targets[0].id
    return None


def _is_string(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def attribute_docs(cls: type) -> dict[str, str]:
    """Attribute docstrings of ``cls`` and its bases (the nearest wins)."""
    docs: dict[str, str] = {}
    for base in reversed(_bases(cls)):
        docs.update(own_attribute_docs(base))
    return docs


def _bases(cls: type) -> list[type]:
    """``cls`` and the classes it inherits fields from, nearest first."""
    if not is_typed_dict(cls):
        return [c for c in cls.__mro__ if c not in (object, BaseModel)]
    # A TypedDict forgets its bases at run time; the source still names them.
    found = [cls]
    node = _class_node(cls)
    module = sys.modules[cls.__module__]
    for base in node.bases if node is not None else []:
        named = getattr(module, base.id, None) if isinstance(base, ast.Name) else None
        if isinstance(named, type) and is_typed_dict(named):
            found += _bases(named)
    return found


def is_typed_dict(value: Any) -> bool:
    """Whether ``value`` is a ``TypedDict`` class."""
    return typing_extensions.is_typeddict(value)


def is_shape(value: Any) -> bool:
    """Whether ``value`` gets a section of its own (TypedDict or model)."""
    return is_typed_dict(value) or (
        isinstance(value, type) and issubclass(value, BaseModel)
    )


def typed_dict_fields(cls: type) -> list[tuple[str, Any, bool]]:
    """``(key, type, required)`` of a ``TypedDict``, in declaration order."""
    hints = typing_extensions.get_type_hints(cls, include_extras=True)
    required = getattr(cls, "__required_keys__", frozenset())
    return [
        (key, _unwrap_required(hint), key in required) for key, hint in hints.items()
    ]


def _unwrap_required(hint: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing_extensions.NotRequired, typing_extensions.Required):
        return typing.get_args(hint)[0]
    return hint


def limits(field: FieldInfo) -> list[str]:
    """A field's limits (``≥ 1``, ``length ≤ 200``, a pattern) as text."""
    found = []
    for item in field.metadata:
        for name, template in LIMITS.items():
            value = getattr(item, name, None)
            if value is not None:
                found.append(template.format(value))
    return found


def literal(value: Any) -> str:
    """A JSON value as a code span."""
    return f"`{json.dumps(value, ensure_ascii=False)}`"


class TypeWriter:
    """Writes types as Markdown and remembers the shapes it linked to."""

    def __init__(self, anchor: typing.Callable[[type], str]) -> None:
        self.anchor = anchor
        self.linked: list[type] = []

    def write(self, hint: Any) -> str:
        """``hint`` as Markdown (``|`` escaped: it may stand in a table)."""
        origin, args = typing.get_origin(hint), typing.get_args(hint)
        if hint in SCALARS:
            return SCALARS[hint]
        if origin is typing.Annotated:
            return self.write(args[0])
        if origin in (typing.Union, types.UnionType):
            return " \\| ".join(self.write(arg) for arg in args)
        if origin is typing.Literal:
            return " \\| ".join(literal(value) for value in args)
        if origin in (list, tuple, set, frozenset):
            item = self.write(args[0]) if args else "any"
            return f"({item})[]" if "\\|" in item else f"{item}[]"
        if origin is dict:
            return f"{{{self.write(args[0])}: {self.write(args[1])}}}"
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return " \\| ".join(literal(member.value) for member in hint)
        if is_shape(hint):
            if hint not in self.linked:
                self.linked.append(hint)
            return f"[{hint.__name__}](#{self.anchor(hint)})"
        if hint in (list, dict):
            return {list: "any[]", dict: "object"}[hint]
        raise TypeError(f"no way to write the type {hint!r} in the reference")

    def item_description(self, hint: Any) -> str:
        """The description of a list's annotated items (``list[Annotated[...]]``)."""
        for arg in typing.get_args(hint):
            if typing.get_origin(arg) is typing.Annotated:
                for extra in typing.get_args(arg)[1:]:
                    if isinstance(extra, FieldInfo) and extra.description:
                        return f"each: {extra.description}"
        return ""
