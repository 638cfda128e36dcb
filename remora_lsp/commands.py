"""Every command of the table, registered for ``workspace/executeCommand``.

The commands are defined once, in ``remora_core/front/commands.py``; this
adapter registers each entry of :data:`COMMANDS` (so a command added there is
announced in ``executeCommandProvider`` without touching ``remora_lsp``) and
does only what LSP adds:

- the one JSON object argument LSP wraps in a list is taken out of it;
- the project that answers is found by the command's route — several
  workspace folders are several apps: the one with the node, proposal or graph
  run (a reference none of them knows answers as the first one would), the
  one running the run or asking the question, the one holding the document
  named by ``uri``, the first workspace folder, or every app with the
  answers joined;
- positions are in the encoding negotiated at ``initialize`` (the
  :class:`~remora_core.front.table.Door`);
- the front's errors become JSON-RPC errors: ``InvalidParams`` naming the
  argument, ``RequestFailed`` with the reason, ``data`` saying which kind —
  except for the command of a code action, marked by :data:`CODE_ACTION` as
  its second argument: editors drop that answer and show its error as a bare
  failure (VS Code: "Request workspace/executeCommand failed."), so the
  refusal is said as a ``window/showMessage`` and the request answers null.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol.types import ErrorCodes, MessageType, ShowMessageParams
from pygls.exceptions import JsonRpcException
from remora_core.front.commands import COMMANDS
from remora_core.front.errors import (
    FrontError,
    InvalidArguments,
    NotFound,
    error_code,
    error_data,
)
from remora_core.front.table import Door, Route, parse

if TYPE_CHECKING:
    from remora_core.front.app import RemoraApp
    from remora_core.front.table import Arguments, Command

    from remora_lsp.server import RemoraLanguageServer

log = logging.getLogger(__name__)

CODE_ACTION = {"origin": "codeAction"}
"""The second argument of the command a code action carries (see the module
doc): its refusal is shown to the person, not answered as an error."""


def register(server: RemoraLanguageServer) -> None:
    """Register every command of the table."""
    for entry in COMMANDS.values():
        server.command(entry.name)(_handler(entry))


def _handler(entry: Command) -> Any:
    # ``ls`` is left unannotated: pygls evaluates a command handler's hints
    # at call time, when the server class is not importable from here.
    async def handle(ls, *args: Any) -> Any:
        in_action = len(args) == 2 and args[1] == CODE_ACTION
        try:
            arguments = parse(
                entry.arguments,
                _one_object(args[:1] if in_action else args, entry.name),
                entry.name,
            )
            return _sendable(await _route(ls, entry, arguments), entry.name)
        except FrontError as error:
            if in_action:
                log.info("%s refused: %s", entry.name, error)
                message = f"Remora: {error}"
                ls.window_show_message(
                    ShowMessageParams(type=MessageType.Warning, message=message)
                )
                return None
            raise JsonRpcException(
                str(error), code=error_code(error), data=error_data(error)
            ) from None

    handle.__name__ = handle.__qualname__ = entry.name.replace(".", "_")
    handle.__doc__ = entry.summary
    return handle


def _sendable(answer: Any, name: str) -> Any:
    """``answer`` if JSON can carry it; else an error saying why. pygls would
    fail to write it and the request would never be answered (bytes in a
    damaged store's row).
    """
    try:
        json.dumps(answer)
    except (TypeError, ValueError, RecursionError) as problem:
        log.warning("%s: cannot send the answer as JSON: %s", name, problem)
        raise JsonRpcException(
            f"Remora: {name}: the answer holds data JSON cannot carry "
            f"({str(problem)[:200]}): is the store damaged?",
            code=ErrorCodes.InternalError,
        ) from None
    return answer


def _one_object(args: tuple[Any, ...], name: str) -> dict[str, Any]:
    """The one JSON object argument every command takes."""
    if len(args) != 1:
        raise InvalidArguments(
            f"{name} takes one JSON object argument, got {len(args)} arguments"
        )
    if not isinstance(args[0], dict):
        raise InvalidArguments(
            f"{name} takes one JSON object argument, got "
            f"{type(args[0]).__name__} {args[0]!r:.60}"
        )
    return args[0]


async def _route(ls: RemoraLanguageServer, entry: Command, arguments: Arguments) -> Any:
    apps = await ls.projects.all_loaded()
    if not apps:
        apps = [ls.projects.loose]
    door = Door(encoding=ls.encoding)
    route = entry.route
    if route is Route.DOCUMENT:
        uri = getattr(arguments, "uri", None)
        if uri is not None:  # the app converts it to its own path
            return await _call(ls.projects.locate(uri)[0], entry, arguments, door)
        if getattr(arguments, "path", None) is None:
            route = Route.EVERY
        else:
            return await _call(_workspace(ls, apps), entry, arguments, door)
    if route is Route.FOLDER:
        uri = getattr(arguments, "uri", None)
        if uri is None:
            return await _every(apps, entry, arguments, door)
        app = ls.projects.folder_of(uri)[0] or ls.projects.loose
        return await _call(app, entry, arguments, door)
    if route is Route.WORKSPACE:
        return await _call(_workspace(ls, apps), entry, arguments, door)
    if route is Route.EVERY:
        return await _every(apps, entry, arguments, door)
    if route is Route.RUN:
        run_id = getattr(arguments, "run_id", "")
        app = next((a for a in apps if a.runs.is_running(run_id)), None)
        if app is None:  # not in flight: the project whose store has it
            return await _first_found(apps, entry, arguments, door)
        return await _call(app, entry, arguments, door)
    if route is Route.QUESTION:
        question_id = getattr(arguments, "question_id", "")
        app = next((a for a in apps if a.runs.asks(question_id)), apps[0])
        return await _call(app, entry, arguments, door)
    return await _first_found(apps, entry, arguments, door)


def _workspace(ls: RemoraLanguageServer, apps: list[RemoraApp]) -> RemoraApp:
    """The first workspace folder's app (the loose one when there is none)."""
    return next((app for app in apps if app.root is not None), ls.projects.loose)


async def _call(
    app: RemoraApp, entry: Command, arguments: Arguments, door: Door
) -> Any:
    await app.loaded()
    return await entry.handler(app, arguments, door)


async def _first_found(
    apps: list[RemoraApp], entry: Command, arguments: Arguments, door: Door
) -> Any:
    """The answer of the first app that knows what the arguments name."""
    missing: NotFound | None = None
    for app in apps:
        try:
            return await _call(app, entry, arguments, door)
        except NotFound as error:
            missing = missing or error
    assert missing is not None
    raise missing


async def _every(
    apps: list[RemoraApp], entry: Command, arguments: Arguments, door: Door
) -> Any:
    """Every app's answer, joined; apps that do not know a reference in the
    arguments are left out (unless none knows it).
    """
    answers = []
    missing: NotFound | None = None
    for app in apps:
        try:
            answers.append(await _call(app, entry, arguments, door))
        except NotFound as error:
            missing = missing or error
    if not answers and missing is not None:
        raise missing
    return entry.join(answers)
