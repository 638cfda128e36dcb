"""``remora``: the project's nodes, runs, events and proposals from a terminal.

Usage (DESIGN §11b)::

    remora [--project DIR] [--json] VERB ...
    remora nodes [QUERY]            remora ps [--all]
    remora logs [-f] [--node N] [--run R] [--type T] [--since SEQ]
    remora ask NODE MESSAGE [--wait]
    remora proposals [--status S]
    remora diff P | reject P [--feedback TEXT]
    remora accept P [P...] [--graph-run G]
    remora dashboard [--port N] [--open]

NODE is an id, a unique id prefix (``rm_ab``) or ``path::qualified.name``; P
and R are ids or unique prefixes. Every listing takes ``--json``.

While a ``remora-lsp`` serves the project, every verb goes through its control
socket (one engine, one writer); otherwise the project is opened here (see
``core/remora_cli/control/backend.py``). ``-v`` says which on stderr.

Exit codes: 0 success; 1 the command failed (an error from the engine, an
accept that was not applied, an ``ask --wait`` whose run failed, or anything
unexpected — a damaged store, a bug — said in one line, ``failures.py``); 2 usage
error, or a NODE/P/R prefix matching several things (the candidates are
listed on stderr); 3 no project at ``--project`` (not a directory); 130
interrupted (Ctrl-C; for ``logs -f`` Ctrl-C is the normal end: 0).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

from remora_cli import failures, output
from remora_cli.control.backend import BackendError, NoProject, open_backend
from remora_cli.verbs import verbs

log = logging.getLogger(__name__)

OK, FAILED, USAGE, NO_PROJECT, INTERRUPTED = 0, 1, 2, 3, 130


def _common(parser: argparse.ArgumentParser, default: object) -> None:
    parser.add_argument(
        "--project",
        type=Path,
        default=default if default is argparse.SUPPRESS else Path("."),
        metavar="DIR",
        help="the project directory (default: the current one)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=default if default is argparse.SUPPRESS else False,
        help="machine-readable output",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=default if default is argparse.SUPPRESS else 0,
        help="say more on stderr (-vv: debug)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The parser of every verb."""
    parser = argparse.ArgumentParser(
        prog="remora",
        description="Remora from a terminal: nodes, runs, events and proposals.",
        epilog="Exit codes: 0 ok, 1 failed, 2 usage or ambiguous id, 3 no project.",
    )
    _common(parser, None)
    sub = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for verb in verbs():
        verb_parser = sub.add_parser(verb.NAME, help=verb.HELP, description=verb.HELP)
        _common(verb_parser, argparse.SUPPRESS)  # also accepted after the verb
        verb.add_arguments(verb_parser)
        # A verb that opens the project itself (``mcp``: once per call) says so.
        own = getattr(verb, "OWN_BACKEND", False)
        # What a verb asks the person before the project opens (``reject``).
        prepare = getattr(verb, "prepare", None)
        verb_parser.set_defaults(
            verb_run=verb.run,
            verb_own_backend=own,
            verb_prepare=prepare,
            verb_until_ctrl_c=getattr(verb, "UNTIL_CTRL_C", False),
        )
    return parser


async def _main(args: argparse.Namespace) -> int:
    if args.verb_own_backend:
        return await args.verb_run(args, None)
    try:
        backend = await open_backend(args.project)
    except NoProject as problem:
        output.tell(f"remora: {problem}")
        return NO_PROJECT
    log.info("via %s (%s)", backend.via, backend.root)
    try:
        return await args.verb_run(args, backend)
    except BackendError as problem:
        return report(problem)
    finally:
        try:
            await backend.close()
        except Exception as problem:  # what the verb did stands; say it once
            log.warning("closing the project: %s", failures.one_line(problem))


def report(problem: BackendError) -> int:
    """Say what went wrong (in one line); the exit code it means."""
    output.tell(f"remora: {failures.flat(str(problem), limit=1000)}")
    if problem.kind == "ambiguous":
        keys = ("id", "kind", "status", "file_path", "qualified_name", "node")
        rows = [
            [candidate.get(k) or "" for k in keys if k in candidate]
            for candidate in problem.candidates
        ]
        if rows:
            output.tell(
                "candidates:\n" + output.table(["" for _ in rows[0]], rows).lstrip("\n")
            )
        return USAGE
    return USAGE if problem.kind == "invalid" else FAILED


def main(argv: list[str] | None = None) -> int:
    """The ``remora`` console script."""
    args = build_parser().parse_args(argv)
    # pydantic-ai greets on stderr at its first run; a command's stderr is for
    # its own progress and errors.
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    level = (logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)]
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        failures.PersonFormatter("remora: %(message)s", tracebacks=args.verbose >= 2)
    )
    logging.basicConfig(level=level, handlers=[handler])
    logging.captureWarnings(True)  # a library's warning is a log line too
    failures.quiet_threads()
    try:
        if args.verb_prepare is not None:
            args.verb_prepare(args)
        return asyncio.run(_main(args))
    except KeyboardInterrupt:
        # ``logs -f`` and a verb that runs until stopped (``dashboard``)
        # end normally with Ctrl-C.
        until_ctrl_c = getattr(args, "follow", False) or args.verb_until_ctrl_c
        return OK if until_ctrl_c else INTERRUPTED
    except BrokenPipeError:  # ``remora logs | head``
        return OK
    except Exception as problem:  # an answer, never a traceback
        failures.failed(args.verb, problem)
        return FAILED


if __name__ == "__main__":
    sys.exit(main())
