"""Fuzzed, it keeps serving (issue 11 part 7).

One real ``remora-lsp`` process gets ``MESSAGES`` generated requests and
notifications over raw JSON-RPC frames: valid shapes with hostile values
(out-of-range positions, huge and invalid strings, lone surrogates, unknown
URIs and ids), wrong types, unknown methods, cancellations, the ``remora.*``
commands with garbage arguments, frames that are not JSON or not UTF-8, and
edits of random text interleaved with everything else. It must never exit,
answer every request exactly once (a result or a JSON-RPC error, matched by
id), write nothing but JSON-RPC on stdout, and still give the right outline of
a known file at the end. The count and the time are printed (``-s``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.lsp.conftest import SERVER

WORKSPACE = Path(__file__).resolve().parents[1] / "workspaces" / "basic"
BATCH = 200
BATCHES = int(os.environ.get("REMORA_FUZZ_BATCHES", "52"))
MESSAGES = BATCH * BATCHES
"""Messages sent by the generated batches (plus a handful to set up and check)."""
ANSWER_TIMEOUT_S = float(os.environ.get("REMORA_FUZZ_WAIT_S", "60"))

KNOWN = "pkg/models.py"
KNOWN_TEXT = """class Shelf:
    def count(self):
        return 0


def restock(shelf):
    return shelf.count() + 1
"""

LSP_REQUESTS = [
    "textDocument/documentSymbol",
    "textDocument/hover",
    "textDocument/codeLens",
    "codeLens/resolve",
    "textDocument/codeAction",
    "codeAction/resolve",
    "workspace/symbol",
    "workspace/executeCommand",
    "textDocument/definition",
    "unknown/request",
    "$/unknownRequest",
]
LSP_NOTIFICATIONS = [
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didSave",
    "textDocument/didClose",
    "workspace/didChangeWatchedFiles",
    "workspace/didRenameFiles",
    "workspace/didChangeConfiguration",
    "$/cancelRequest",
    "$/setTrace",
    "unknown/notification",
    "window/workDoneProgress/cancel",
]

# ---- values ------------------------------------------------------------------

texts = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=200),
    st.sampled_from(["\ud800", "a\udfffb", "\u202e", "\x00", "é😀", "def f(:\n"]),
    st.builds(lambda n: "x" * n, st.integers(10_000, 300_000)),
)
"""Strings: ordinary, any code point, lone surrogates, NUL, huge."""

integers = st.one_of(
    st.integers(-5, 200),
    st.sampled_from([-(2**31), 2**31 - 1, 2**31, 2**53, -1]),
)
json_values = st.recursive(
    st.none() | st.booleans() | integers | st.floats(allow_nan=False) | texts,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def uris(root: Path) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(
            [
                (root / KNOWN).as_uri(),
                (root / "pkg/service.py").as_uri(),
                (root / "pkg/new_file.py").as_uri(),
                (root / "notes.txt").as_uri(),
                "file:///etc/passwd",
                "untitled:Untitled-1",
                "file://",
                "",
            ]
        ),
        texts,
    )


positions = st.fixed_dictionaries({"line": integers, "character": integers})
ranges = st.fixed_dictionaries({"start": positions, "end": positions})
node_ids = st.one_of(st.just("rm_abcdefgh"), st.text(max_size=12), integers)


def params_for(method: str, root: Path, commands: list[str]) -> st.SearchStrategy[Any]:
    """Well-shaped params with hostile values, sometimes anything at all;
    ``commands``: the server's own (from ``initialize``) and an unknown one.
    """
    document = st.fixed_dictionaries({"uri": uris(root)})
    versioned = st.fixed_dictionaries({"uri": uris(root), "version": integers})
    shaped: dict[str, st.SearchStrategy[Any]] = {
        "textDocument/didOpen": st.fixed_dictionaries(
            {
                "textDocument": st.fixed_dictionaries(
                    {
                        "uri": uris(root),
                        "languageId": st.just("python"),
                        "version": integers,
                        "text": texts,
                    }
                )
            }
        ),
        "textDocument/didChange": st.fixed_dictionaries(
            {
                "textDocument": versioned,
                "contentChanges": st.lists(
                    st.one_of(
                        st.fixed_dictionaries({"range": ranges, "text": texts}),
                        st.fixed_dictionaries({"text": texts}),
                    ),
                    max_size=3,
                ),
            }
        ),
        "textDocument/didSave": st.fixed_dictionaries({"textDocument": document}),
        "textDocument/didClose": st.fixed_dictionaries({"textDocument": document}),
        "textDocument/documentSymbol": st.fixed_dictionaries(
            {"textDocument": document}
        ),
        "textDocument/codeLens": st.fixed_dictionaries({"textDocument": document}),
        "textDocument/hover": st.fixed_dictionaries(
            {"textDocument": document, "position": positions}
        ),
        "textDocument/definition": st.fixed_dictionaries(
            {"textDocument": document, "position": positions}
        ),
        "textDocument/codeAction": st.fixed_dictionaries(
            {
                "textDocument": document,
                "range": ranges,
                "context": st.fixed_dictionaries({"diagnostics": st.just([])}),
            }
        ),
        "workspace/symbol": st.fixed_dictionaries({"query": texts}),
        "workspace/executeCommand": st.fixed_dictionaries(
            {
                "command": st.sampled_from([*commands, "remora.unknown"]),
                "arguments": st.one_of(
                    st.lists(
                        st.fixed_dictionaries(
                            {},
                            optional={
                                "node_id": node_ids,
                                "uri": uris(root),
                                "position": positions,
                                "message": texts,
                                "run_id": st.one_of(st.just("run_000000000000"), texts),
                                "proposal_id": texts,
                                "question_id": texts,
                                "limit": integers,
                                "trusted": json_values,
                            },
                        ),
                        max_size=2,
                    ),
                    json_values,
                ),
            }
        ),
        "workspace/didChangeWatchedFiles": st.fixed_dictionaries(
            {
                "changes": st.lists(
                    st.fixed_dictionaries(
                        {"uri": uris(root), "type": st.integers(-1, 4)}
                    ),
                    max_size=3,
                )
            }
        ),
        "workspace/didRenameFiles": st.fixed_dictionaries(
            {
                "files": st.lists(
                    st.fixed_dictionaries({"oldUri": uris(root), "newUri": uris(root)}),
                    max_size=2,
                )
            }
        ),
        "workspace/didChangeConfiguration": st.fixed_dictionaries(
            {"settings": json_values}
        ),
        "$/cancelRequest": st.fixed_dictionaries({"id": integers}),
        "window/workDoneProgress/cancel": st.fixed_dictionaries({"token": json_values}),
    }
    good = shaped.get(method, json_values)
    return st.one_of(good, good, good, json_values)


# ---- the client --------------------------------------------------------------


class RawClient:
    """Writes frames; a thread reads every frame the server writes."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.answers: dict[Any, list[dict[str, Any]]] = {}
        self.problems: list[str] = []
        self.arrived = threading.Condition()
        self.next_id = 0
        self.sent = 0
        self.methods: dict[Any, str] = {}
        """The method of each request sent, by id (for failure messages)."""
        self.params: dict[Any, str] = {}
        """The start of each request's params, by id (for failure messages)."""
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = stream.read(1)
                if not byte:
                    return
                header += byte
            length = None
            for line in header.decode("ascii", "replace").split("\r\n"):
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            if length is None:
                self.problems.append(f"a frame without Content-Length: {header!r}")
                return
            body = stream.read(length)
            try:
                message = json.loads(body)
            except ValueError:
                self.problems.append(f"not JSON on stdout: {body[:200]!r}")
                continue
            if message.get("jsonrpc") != "2.0":
                self.problems.append(f"not JSON-RPC 2.0: {body[:200]!r}")
            if "method" in message and "id" in message:  # the server asks
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif "id" in message:
                with self.arrived:
                    self.answers.setdefault(message["id"], []).append(message)
                    self.arrived.notify_all()

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        # ensure_ascii keeps lone surrogates as \\ud800 escapes, as editors send them
        self.send_raw(json.dumps(message).encode("ascii"))

    def request(self, method: str, params: Any) -> Any:
        """Send a request; its id (ints and strings alternate)."""
        self.next_id += 1
        request_id: Any = self.next_id if self.next_id % 2 else f"r{self.next_id}"
        self.methods[request_id] = method
        self.params[request_id] = repr(params)[:300]
        self.send(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        )
        self.sent += 1
        return request_id

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})
        self.sent += 1

    def wait_for(self, ids: list[Any], timeout: float = ANSWER_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while not all(i in self.answers for i in ids):
                left = deadline - time.monotonic()
                missing = [
                    (i, self.methods.get(i), self.params.get(i))
                    for i in ids
                    if i not in self.answers
                ]
                assert left > 0, f"never answered: {missing[:10]}"
                assert self.process.poll() is None, (
                    f"the server exited ({self.process.returncode})"
                )
                self.arrived.wait(min(left, 1.0))

    def call(self, method: str, params: Any) -> dict[str, Any]:
        request_id = self.request(method, params)
        self.wait_for([request_id])
        return self.answers[request_id][0]


# ---- the test ----------------------------------------------------------------


def outline_names(result: list[dict[str, Any]]) -> list[str]:
    """Qualified names of an outline: nested ``DocumentSymbol``s, or the flat
    ``SymbolInformation`` a client that announced no hierarchy gets (its
    ``containerName`` is ``"Parent · rm_id"``, or the id alone at the top).
    """
    found = []
    for symbol in result:
        if "containerName" in symbol:
            parent, _, _ = symbol["containerName"].rpartition(" · ")
            found.append(f"{parent}.{symbol['name']}" if parent else symbol["name"])
            continue
        found.append(symbol["name"])
        found += [
            f"{symbol['name']}.{c}" for c in outline_names(symbol.get("children", []))
        ]
    return found


def test_fuzzed_it_keeps_serving(tmp_path, capsys):
    root = tmp_path / "basic"
    shutil.copytree(WORKSPACE, root)
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(
        [str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log
    )
    client = RawClient(process)
    started = time.monotonic()
    try:
        init = client.call(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {},
                # No model anywhere: a request that reaches an agent fails fast.
                "initializationOptions": {
                    "model": {
                        "base_url": "http://127.0.0.1:9/v1",
                        "name": "none",
                        "retries": 0,
                    },
                    "swarm": {"cooldown_ms": 0},
                },
            },
        )
        assert "result" in init, init
        # Every command the server announces, with garbage arguments.
        commands = init["result"]["capabilities"]["executeCommandProvider"]["commands"]
        assert "remora.agent.chat" in commands
        client.notify("initialized", {})
        requests: list[Any] = []

        methods = st.sampled_from(LSP_REQUESTS + LSP_NOTIFICATIONS + ["initialize"])

        @st.composite
        def messages(draw: st.DrawFn) -> tuple[str, Any, str]:
            kind = draw(st.sampled_from(["request", "notify", "notify", "raw"]))
            method = draw(methods)
            if kind == "raw":
                raw = draw(
                    st.sampled_from(
                        [
                            b"{not json",
                            b"\xff\xfe\x00 not utf-8",
                            b'{"jsonrpc": "2.0", "id": 1',
                            b"[]",
                            b'{"jsonrpc": "2.0"}',
                            b'{"jsonrpc": "1.0", "method": "x"}',
                            b'{"jsonrpc": "2.0", "method": 5, "params": {}}',
                        ]
                    )
                )
                return kind, raw, ""
            return kind, draw(params_for(method, root, commands)), method

        @settings(
            max_examples=BATCHES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
            # One server lives through every example: shrinking a failure
            # against its changed state would only take long and mislead.
            phases=[Phase.generate],
        )
        @given(batch=st.lists(messages(), min_size=BATCH, max_size=BATCH))
        def send_batch(batch: list[tuple[str, Any, str]]) -> None:
            ids = []
            for kind, params, method in batch:
                if kind == "raw":
                    client.send_raw(params)
                    client.sent += 1
                elif kind == "request":
                    ids.append(client.request(method, params))
                else:
                    client.notify(method, params)
            client.wait_for(ids)
            requests.extend(ids)

        send_batch()
        fuzzed = client.sent

        # Still serving, and still right: a known file's outline.
        known = (root / KNOWN).as_uri()
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": known,
                    "languageId": "python",
                    "version": 10**6,
                    "text": KNOWN_TEXT,
                }
            },
        )
        outline = client.call(
            "textDocument/documentSymbol", {"textDocument": {"uri": known}}
        )
        assert outline_names(outline["result"]) == ["Shelf", "Shelf.count", "restock"]
        shutdown = client.call("shutdown", None)
        assert "result" in shutdown
        client.notify("exit", None)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()
    elapsed = time.monotonic() - started
    client.reader.join(timeout=10)
    duplicates = {i: len(a) for i, a in client.answers.items() if len(a) > 1}
    assert not duplicates, f"answered more than once: {list(duplicates.items())[:10]}"
    assert all(i in client.answers for i in requests)
    assert not client.problems, client.problems[:5]
    assert fuzzed >= 10_000
    with capsys.disabled():
        print(
            f"\nfuzz: {fuzzed} generated messages ({len(requests)} requests, each "
            f"answered once) to one server in {elapsed:.1f} s"
        )


def test_a_notification_sent_with_an_id_is_answered_with_an_error(tmp_path):
    # Found by the fuzzer: pygls ran it as a notification and never answered,
    # leaving the client waiting forever.
    root = tmp_path / "basic"
    shutil.copytree(WORKSPACE, root)
    process = subprocess.Popen(
        [str(SERVER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    client = RawClient(process)
    try:
        client.call(
            "initialize",
            {"processId": None, "rootUri": root.as_uri(), "capabilities": {}},
        )
        client.notify("initialized", {})
        answer = client.call(
            "textDocument/didClose",
            {"textDocument": {"uri": (root / KNOWN).as_uri()}},
        )
        assert answer["error"]["code"] == -32600  # InvalidRequest
        assert answer["error"]["message"] == (
            "textDocument/didClose is a notification: send it without an id"
        )
        assert "result" in client.call("shutdown", None)
        client.notify("exit", None)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
