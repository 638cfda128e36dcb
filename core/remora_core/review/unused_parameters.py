"""A near miss: a rewrite adds a parameter that its code never uses.

"Add a parameter sep and use it as the separator" answered with
``def join_words(words, sep=" "): return " ".join(words)``: the parameter is
there, the work is not. A small model does this often, and a new parameter
nothing reads is almost never what was meant. :func:`unused_new_parameters`
finds them; the rewrite tool refuses such a rewrite once with the names (the
model gets one more attempt) and lets a second one through with a failed
``parameters-used`` check the person sees.

Not counted: parameters the old definition already had, ``self`` and
``cls``, names starting with ``_``, ``*args`` and ``**kwargs``, and the
parameters of a stub (a body of only a docstring, ``pass``, ``...`` or a
``raise``), whose parameters are there for its callers.
"""

from __future__ import annotations

import ast

from remora_core.review.definition_text import (
    DefinitionText,
    arguments_of,
    docstring_of,
)

_NOT_COUNTED = {"self", "cls"}


def _function(text: str, indent: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        definition = DefinitionText(text, indent).definition()
    except (SyntaxError, ValueError, RecursionError):
        return None
    if isinstance(definition, ast.FunctionDef | ast.AsyncFunctionDef):
        return definition
    return None


def _is_stub(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = function.body[1:] if docstring_of(function) else function.body
    return all(
        isinstance(s, ast.Pass | ast.Raise)
        or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in body
    )


def unused_new_parameters(old: str, new: str, indent: str = "") -> list[str]:
    """The parameters ``new`` adds to ``old`` that its body never mentions.

    ``old`` and ``new`` are one function definition each, as the file holds
    them (later lines indented by ``indent``); anything else gives ``[]``.
    """
    before, after = _function(old, indent), _function(new, indent)
    if before is None or after is None or _is_stub(after):
        return []
    had = {a.arg for a in arguments_of(before)}
    variadic = {a.arg for a in (after.args.vararg, after.args.kwarg) if a is not None}
    added = [
        a.arg
        for a in arguments_of(after)
        if a.arg not in had
        and a.arg not in variadic
        and a.arg not in _NOT_COUNTED
        and not a.arg.startswith("_")
    ]
    if not added:
        return []
    mentioned = {
        node.id
        for statement in after.body
        for node in ast.walk(statement)
        if isinstance(node, ast.Name)
    }
    return [name for name in added if name not in mentioned]
