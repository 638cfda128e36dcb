"""Unified diffs with file headers, for proposals and agents' workspaces.

A proposal changes a few lines of a possibly long file, so the diff is computed
over that region (plus context) only and its hunk headers are shifted to the
region's place in the file: the result reads exactly like ``git diff`` of the
whole file, without diffing thousands of unchanged lines. Lines end with
``\\n``, ``\\r\\n`` or ``\\r`` as in Python source; the diff shows them without
their ending, and marks a last line without one as git does.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

CONTEXT = 3
"""Unchanged lines shown around each change."""

NO_NEWLINE = "\\ No newline at end of file\n"

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` with their endings; only ``\\n``/``\\r\\n``/``\\r`` end one."""
    return _LINE.findall(text)


def file_diff(
    path: str,
    old_lines: list[str],
    new_lines: list[str],
    *,
    first_line: int = 1,
    created: bool = False,
    deleted: bool = False,
) -> str:
    """A unified diff of two versions of a region of ``path``; '' if equal.

    ``old_lines`` and ``new_lines`` (with endings) both start at line
    ``first_line`` (1-based) of the file: everything before them is identical.
    ``created``/``deleted`` give the ``/dev/null`` headers of a file that did not
    exist before / does not exist after.
    """
    if old_lines == new_lines:
        return ""
    matcher = SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    out = [
        "--- /dev/null\n" if created else f"--- a/{path}\n",
        "+++ /dev/null\n" if deleted else f"+++ b/{path}\n",
    ]
    offset = first_line - 1
    for group in matcher.get_grouped_opcodes(CONTEXT):
        first, last = group[0], group[-1]
        old_range = _range(first[1] + offset, last[2] + offset)
        new_range = _range(first[3] + offset, last[4] + offset)
        out.append(f"@@ -{old_range} +{new_range} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(_show(" ", old_lines[i1:i2]))
                continue
            if tag in ("replace", "delete"):
                out.extend(_show("-", old_lines[i1:i2]))
            if tag in ("replace", "insert"):
                out.extend(_show("+", new_lines[j1:j2]))
    return "".join(out)


def _range(start: int, stop: int) -> str:
    """``start,length`` as unified diffs write it (``start`` 0-based here)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _show(sign: str, lines: list[str]) -> list[str]:
    shown: list[str] = []
    for line in lines:
        content = line.rstrip("\r\n")
        shown.append(f"{sign}{content}\n")
        if len(content) == len(line):  # the file's last line, without an ending
            shown.append(NO_NEWLINE)
    return shown


def region_diff(path: str, old: str, start: int, end: int, new: str) -> str:
    """The diff of replacing ``old[start:end]`` (character offsets) by ``new``.

    Only the lines touched, with :data:`CONTEXT` lines around them, are compared;
    only the text around them is even split into lines (a long file costs a
    few searches, not a pass over every line).
    """
    # A window of whole lines holding the change and more than its context.
    window_start = _line_start(old, start)
    for _ in range(CONTEXT + 1):
        if window_start == 0:
            break
        window_start = _line_start(old, window_start - 1)
    window_end = end
    for _ in range(CONTEXT + 2):
        found = _BREAK.search(old, window_end)
        if found is None:
            window_end = len(old)
            break
        window_end = found.end()
    text = old[window_start:window_end]
    start, end = start - window_start, end - window_start
    lines_before = _breaks(old, window_start)
    # Ends with len(text): the start of the (maybe empty) line after the last.
    line_starts = [0, *(m.end() for m in _LINE.finditer(text))]
    first = _line_index(line_starts, start)
    last = _line_index(line_starts, end)
    # Extend over the whole lines touched, then over the context lines.
    context_first = max(first - CONTEXT, 0)
    region_start = line_starts[context_first]
    line_after = min(last + 1 + CONTEXT, len(line_starts) - 1)
    region_end = max(line_starts[line_after], end)
    old_region = text[region_start:region_end]
    new_region = text[region_start:start] + new + text[end:region_end]
    return file_diff(
        path,
        split_lines(old_region),
        split_lines(new_region),
        first_line=lines_before + context_first + 1,
    )


_BREAK = re.compile(r"\r\n|\r|\n")


def _line_start(text: str, offset: int) -> int:
    """The start of the line holding ``offset`` (a line ends after its break)."""
    index = max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset))
    if index < 0:
        return 0
    if text.startswith("\r\n", index) and index + 1 == offset:
        return _line_start(text, index)  # ``offset`` splits a ``\r\n``
    return index + 1


def _breaks(text: str, stop: int) -> int:
    """How many line breaks ``text[:stop]`` holds (``\r\n`` counts once)."""
    return (
        text.count("\n", 0, stop)
        + text.count("\r", 0, stop)
        - text.count("\r\n", 0, stop)
    )


def _line_index(line_starts: list[int], offset: int) -> int:
    """The 0-based line holding ``offset`` (binary search over line starts)."""
    low, high = 0, len(line_starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if line_starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low
