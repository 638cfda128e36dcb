"""Every failure of a verb as one line for the person, never a traceback.

A command meets whatever a store holds — one shipped with a repository,
damaged by a crash or written by another program: rows of the wrong type,
blobs that are gone, JSON that is not JSON or is nested deeper than any parser
goes. The engine's own errors (``BackendError``) already read well; anything
else that reaches the top of ``remora`` is said here in one line — ``remora:
VERB failed: what`` — and the verb exits 1 (``docs/command-line.md``). The
traceback is for a developer: ``-vv`` logs it.

Log lines on the person's terminal follow the same rule
(:class:`PersonFormatter`): one line each, an exception in a few words after
it, control characters shown (``output.visible``).
"""

from __future__ import annotations

import logging
import sqlite3
import threading

import pydantic

from remora_cli import output

log = logging.getLogger(__name__)

LIMIT = 300
"""Characters of an error message shown (a message can quote a whole input)."""


def flat(text: str, limit: int = LIMIT) -> str:
    """``text`` on one line, cut at ``limit`` characters, control characters
    shown.
    """
    line = " ".join(part.strip() for part in text.splitlines() if part.strip())
    if len(line) > limit:
        line = line[: limit - 1] + "…"
    return output.visible(line)


def one_line(error: BaseException) -> str:
    """What went wrong, in words a person can act on."""
    if isinstance(error, RecursionError):
        return "data nested too deeply to read (a damaged or hostile store or file?)"
    if isinstance(error, MemoryError):
        return "out of memory"
    if isinstance(error, sqlite3.Error):
        return flat(f"the store (.remora/remora.db) cannot be read: {error}")
    if isinstance(error, pydantic.ValidationError):  # stored data of the wrong shape
        first = error.errors()[0] if error.error_count() else {"msg": str(error)}
        return flat(f"stored data cannot be read: {first['msg']}")
    message = str(error) or "no details"
    return flat(f"{type(error).__name__}: {message}")


def failed(verb: str, error: BaseException) -> None:
    """Say that ``verb`` failed because of ``error`` (the traceback at -vv)."""
    log.debug("%s failed", verb, exc_info=error)
    output.tell(f"remora: {verb} failed: {one_line(error)} (-vv shows where)")


class PersonFormatter(logging.Formatter):
    """Log lines on the person's terminal: one line each, control characters
    shown; tracebacks only when ``tracebacks`` (``-vv``).
    """

    def __init__(self, fmt: str, *, tracebacks: bool) -> None:
        super().__init__(fmt)
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        """The record, as the person sees it."""
        if self.tracebacks:
            return output.visible(super().format(record))
        record.message = record.getMessage()
        line = self.formatMessage(record)
        if record.exc_info and record.exc_info[1] is not None:
            line = f"{line} ({one_line(record.exc_info[1])})"
        return flat(line, limit=LIMIT * 4)


def quiet_threads() -> None:
    """An exception ending a thread is logged in one line, not dumped."""

    def hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            log.error("a background thread failed: %s", one_line(args.exc_value))

    threading.excepthook = hook
