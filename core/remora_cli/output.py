"""What the command line prints: aligned columns, JSON, one-line summaries.

Listings go to stdout (``--json``: one JSON document; ``logs --json``: JSON
lines); messages for the person — progress, errors, hints — go to stderr, so
``remora proposals --json | jq`` always gets clean JSON.

Text for a person goes through :func:`visible`: what a model, a repository's
file names or a store wrote can hold escape sequences a terminal would act on
(``ESC [2K`` erases the line, ``ESC ]52`` writes the clipboard, a C1 ``CSI``
does the same in one byte), so every control character but tab and newline is
shown as ``\\x1b``. JSON output is the exact JSON of the same values, with
DEL and C1 written as ``\\u009b`` escapes (JSON escapes C0 already).
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Sequence
from typing import Any

log = logging.getLogger(__name__)

MAX_CELL = 60

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters a terminal acts on: C0 but tab and newline, DEL, C1."""

JSON_UNSAFE = re.compile(r"[\x7f-\x9f]")
"""What ``json.dumps(ensure_ascii=False)`` leaves raw and a terminal acts on."""


def visible(text: str) -> str:
    """``text`` with each control character shown as ``\\xNN``."""
    return CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def json_text(value: Any, indent: int | None = None) -> str:
    """``value`` as JSON that is safe on a terminal (the same JSON value)."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    # Only strings can hold these characters: an escape there is the same value.
    return JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def emit_json(value: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json_text(value, indent=2) + "\n")


def emit_json_line(value: Any) -> None:
    """One JSON line on stdout, flushed (for ``logs -f --json | …``)."""
    sys.stdout.write(json_text(value) + "\n")
    sys.stdout.flush()


def cell(value: Any, width: int = MAX_CELL) -> str:
    """A value as one short line."""
    text = "" if value is None else visible(" ".join(str(value).split()))
    return text if len(text) <= width else text[: width - 1] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Rows under headers in aligned columns (the last column is not padded)."""
    cells = [[cell(v) for v in row] for row in rows]
    widths = [
        max([len(header)] + [len(row[i]) for row in cells])
        for i, header in enumerate(headers)
    ]
    lines = []
    for row in [list(headers), *cells]:
        padded = [value.ljust(widths[i]) for i, value in enumerate(row[:-1])]
        lines.append("  ".join([*padded, row[-1]]).rstrip())
    return "\n".join(lines)


def emit_table(
    headers: Sequence[str], rows: Sequence[Sequence[Any]], empty: str
) -> None:
    """A table on stdout, or ``empty`` on stderr when there are no rows."""
    if not rows:
        tell(empty)
        return
    sys.stdout.write(visible(table(headers, rows)) + "\n")


def ask(prompt: str) -> None:
    """A question for the person on stderr, the answer typed after it."""
    sys.stderr.write(visible(prompt))
    sys.stderr.flush()


def tell(message: str) -> None:
    """A message for the person (stderr)."""
    sys.stderr.write(visible(message) + "\n")
    sys.stderr.flush()


def when(timestamp: Any) -> str:
    """A Unix time or ISO timestamp as local ``HH:MM:SS`` (with the date when
    not today).
    """
    if timestamp is None:
        return ""
    if isinstance(timestamp, str):
        from datetime import datetime

        try:
            seconds = datetime.fromisoformat(timestamp).timestamp()
        except ValueError:
            return timestamp
    else:
        seconds = float(timestamp)
    local = time.localtime(seconds)
    if time.strftime("%Y-%m-%d", local) == time.strftime("%Y-%m-%d"):
        return time.strftime("%H:%M:%S", local)
    return time.strftime("%Y-%m-%d %H:%M", local)


SUMMARY_FIELDS = (
    "message",
    "result",
    "error",
    "reason",
    "question",
    "answer",
    "feedback",
    "tool",
    "proposal_id",
    "path",
)


def event_summary(event: dict[str, Any]) -> str:
    """The most telling field of an event, in one line."""
    parts = []
    for key in SUMMARY_FIELDS:
        value = event.get(key)
        if value:
            parts.append(
                f"{key}={cell(value, 50)}"
                if key in ("tool", "proposal_id", "path")
                else cell(value, 70)
            )
    return "  ".join(parts[:2])


def event_line(event: dict[str, Any]) -> str:
    """``seq  time  type  agent  summary`` for ``logs``."""
    return "  ".join(
        [
            str(event.get("seq", "")).rjust(6),
            when(event.get("timestamp")).ljust(8),
            cell(event.get("type"), 24).ljust(20),
            cell(event.get("agent_id") or event.get("to_agent") or "", 12).ljust(11),
            event_summary(event),
        ]
    ).rstrip()


def say(text: str = "") -> None:
    """One line of the command's own output (stdout; never used by the server)."""
    sys.stdout.write(visible(text) + "\n")
    sys.stdout.flush()
