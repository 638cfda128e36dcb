"""The server's protocol class: readable errors for malformed messages.

pygls drops a request whose params do not match the LSP types without
answering it, leaving the editor waiting forever. Here such a request is
answered with ``InvalidParams`` and a message naming the bad fields; a bad
notification is logged and skipped.

Only the top-level object of a frame is a message. pygls structures messages
in ``json.loads``'s ``object_hook``, which sees every nested object first: a
request whose params hold an object with a ``"jsonrpc"`` key (found by the
fuzzer) made that inner object be read as a message, the whole frame failed,
and the request was never answered. Here the hook leaves every object as it
is, and :meth:`RemoraProtocol.handle_message` structures the top level alone.

Open documents live in the engine (``remora_core.index.documents``), so pygls's own
copy of every buffer is not kept: the built-in ``didOpen``/``didChange``/
``didClose`` handlers only call ours.

Messages for the person (:data:`SCRUBBED`: ``showMessage``, ``logMessage``,
``showMessageRequest``, progress, ``remora/askUser``) are scrubbed of secrets
here, the one place they all pass (``remora_core.redact``). ``remora/event``
carries events the engine already scrubbed; results are not touched (a
proposal's text must reach the editor exactly as it is).

Every message from the editor pauses the embedded model until it is handled
and, for a request, answered (``remora_core/agents/model_pause.py``): this
class sees all of them, and only them — the CLI, MCP and the dashboard reach
the engine by other doors and never pause the model.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, cast

import cattrs
import pydantic_core
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from remora_core.front.editor_pause import editor_first, editor_model_pause
from remora_core.redact import scrub_json

from remora_lsp.pygls_private import converter, includes_headers

if TYPE_CHECKING:
    from pygls.protocol.json_rpc import RPCMessage

log = logging.getLogger(__name__)


_CAMEL = re.compile(r"_([a-z])")
"""snake_case field names from lsprotocol back to the protocol's camelCase."""


class _Dropped:
    """Stands in for a message that could not be read; ignored by dispatch."""

    jsonrpc = "dropped"


def describe_invalid(method: str, error: Exception) -> str:
    """A sentence naming what is wrong with the params of ``method``."""
    if isinstance(error, cattrs.ClassValidationError | cattrs.IterableValidationError):
        details = "; ".join(
            _CAMEL.sub(lambda m: m.group(1).upper(), line.replace("@ $.", "@ "))
            for line in cattrs.transform_error(error, path="$")
        )
    else:
        details = str(error) or type(error).__name__
    return f"Invalid params for {method}: {details}"


def _nothing_unread() -> bool:
    return False


def _is_notification(method: object) -> bool:
    """Whether LSP defines ``method`` as a notification (it takes no id)."""
    if not isinstance(method, str):
        return False
    types_of = types.METHOD_TO_TYPES.get(method)
    return types_of is not None and types_of[1] is None


class PlainJson:
    """A result that is already plain JSON (dicts, lists, str, int).

    Sent as it is: pygls would otherwise run it through cattrs, which costs
    more than building the JSON on the hot path of ``documentSymbol``.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


SCRUBBED = frozenset(
    {
        types.WINDOW_SHOW_MESSAGE,
        types.WINDOW_LOG_MESSAGE,
        types.WINDOW_SHOW_MESSAGE_REQUEST,
        types.PROGRESS,
        "remora/askUser",
    }
)
"""Server-to-client messages whose texts are scrubbed of secrets."""


class RemoraProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that answers malformed requests and scrubs the
    messages it shows the person.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.model_pause = editor_model_pause()
        """Stops the embedded model while the editor's messages are handled."""
        self.editor_first = editor_first()
        """Agents' turns give way while the editor's messages are handled and
        answered (``remora_core/editor_first.py``)."""
        if self.editor_first.unread is None:  # no probe of the input (TCP):
            self.editor_first.unread = _nothing_unread  # messages still hold

    def _scrubbed(self, method: str, params: Any) -> Any:
        if method not in SCRUBBED or params is None:
            return params
        if isinstance(params, dict):
            return scrub_json(params)
        plain = converter(self).unstructure(params)
        clean = scrub_json(plain)
        if clean == plain:
            return params
        return converter(self).structure(clean, type(params))

    def notify(self, method: str, params: Any | None = None):
        """Send a notification, scrubbed if it is a message for the person."""
        super().notify(method, self._scrubbed(method, params))

    def send_request(self, method, params=None, callback=None, msg_id=None):
        """Send a request, scrubbed if it is a message for the person."""
        return super().send_request(
            method, self._scrubbed(method, params), callback, msg_id
        )

    def _send_response(self, msg_id, result=None, error=None):
        """Send the answer, then let the paused model go on (once nothing
        else from the editor is pending).
        """
        try:
            self._send_answer(msg_id, result, error)
        finally:
            self.model_pause.answered(msg_id)
            self.editor_first.answered(msg_id)

    def _send_answer(self, msg_id, result=None, error=None):
        """Send plain-JSON results without cattrs; everything else as usual."""
        if error is None and isinstance(result, PlainJson) and self.writer is not None:
            # Serialised in Rust (pydantic-core): for a 6k-line file's outline the
            # standard library's encoder took longer than building the outline.
            try:
                body = pydantic_core.to_json(
                    {"jsonrpc": self.VERSION, "id": msg_id, "result": result.value}
                )
            except pydantic_core.PydanticSerializationError:
                # Text pydantic-core cannot encode (a lone surrogate): the
                # standard encoder escapes it, as every other answer does.
                super()._send_response(msg_id, result.value, error)
                return
            if includes_headers(self):
                body = (
                    f"Content-Length: {len(body)}\r\n"
                    f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
                ).encode("ascii") + body
            self.writer.write(body)
            return
        super()._send_response(msg_id, result, error)

    def structure_message(self, data: dict[str, Any]):
        """Leave every object of a frame as it is (see the module docstring):
        :meth:`handle_message` structures the top-level one.
        """
        return data

    def _structure_top_level(self, data: Any) -> RPCMessage | _Dropped:
        """Structure a frame's message; answer InvalidParams instead of dropping it."""
        if not isinstance(data, dict):  # a batch, or a bare value: not LSP
            log.warning("skipped a message that is not a JSON object")
            return _Dropped()
        if "jsonrpc" not in data or "method" not in data:
            return self._structure_other(data)
        if "id" in data and _is_notification(data["method"]):
            # A request must be answered; pygls would run it as a notification
            # and leave the editor waiting for an answer that never comes.
            text = f"{data['method']} is a notification: send it without an id"
            log.warning("%s", text)
            self._send_response(
                data["id"], error=JsonRpcInvalidRequest(text).to_response_error()
            )
            return _Dropped()
        message_type = self.get_message_type(data["method"])
        if message_type is None:
            return self._structure_other(data)
        try:
            return converter(self).structure(data, message_type)
        except Exception as error:
            text = describe_invalid(data["method"], error)
            log.warning("%s", text)
            if "id" in data:
                self._send_response(
                    data["id"], error=JsonRpcInvalidParams(text).to_response_error()
                )
            return _Dropped()

    def _structure_other(self, data: dict[str, Any]) -> RPCMessage | _Dropped:
        """A response, or a method LSP does not define: as pygls reads it; a
        frame that is not JSON-RPC at all is logged and skipped.
        """
        try:
            # Unannotated in pygls; it returns what its own handle_message takes
            # (lsprotocol's ResponseErrorMessage may have an id of None, which
            # pygls's RPCError does not declare) except for a frame without
            # "jsonrpc", given back as the dict: handle_message raises on it
            # and pygls's reader logs that, as without this class.
            return cast("RPCMessage", super().structure_message(data))
        except Exception as error:
            log.warning(
                "skipped a message that is not JSON-RPC (%s): %.200r", error, data
            )
            return _Dropped()

    def handle_message(self, message):
        """Structure the frame's top-level object, then dispatch it; skip
        messages already answered as invalid.
        """
        # Turns give way from here until the handler has it (and a request
        # is answered): structuring is part of the editor's wait.
        self.editor_first.arrived()
        try:
            message = self._structure_top_level(message)
            if isinstance(message, _Dropped):
                return
            # A request has a method and an id (a response: an id only).
            request_id = getattr(message, "id", None)
            request = getattr(message, "method", None) is not None
            if request and request_id is not None:  # not a notification
                self.editor_first.asked(request_id)
            self.model_pause.arrived(request_id if request else None)
            try:
                super().handle_message(message)
            finally:
                self.model_pause.handled()
        finally:
            self.editor_first.handled()

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        """Hand the document to the engine (no pygls copy)."""
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        """Hand the change to the engine (no pygls copy)."""
        if (
            handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)
        ) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        """Tell the engine the document closed (no pygls copy)."""
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None
