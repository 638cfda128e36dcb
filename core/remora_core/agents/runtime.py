"""The agents of one project: services built on its store, and the kernel.

:class:`AgentRuntime` is created when a project starts (its store is open) and
closed with it: the model clients and the embedded model process, the sandbox
and anything pending are shut down there. Its :meth:`turn` is the project's
turn function. :meth:`forget` clears what an agent remembers (chat history,
key-value memory and overlay) — the API behind the "clear memory" command.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from remora_core.agents.bundles import BundleRegistry
from remora_core.agents.collector_pace import pace_for_turns
from remora_core.agents.context import AgentServices
from remora_core.agents.extensions import ExtensionRegistry
from remora_core.agents.memory import ChatMemory
from remora_core.agents.project_rules import read_rules
from remora_core.agents.prompt import only_own_edits, shared_prompt
from remora_core.agents.providers import ModelResolver
from remora_core.agents.questions import Questions
from remora_core.agents.sandbox import Sandbox
from remora_core.agents.workspace import KeyValueStore, Overlay
from remora_core.editor_first import until_quiet
from remora_core.index.collector import collector_paused
from remora_core.review.decisions import Review
from remora_core.review.proposals import ProposalStore
from remora_core.review.verification import Verifier
from remora_core.store import folder
from remora_core.store.database import STORE_DIR

if TYPE_CHECKING:
    from collections.abc import Awaitable
    from pathlib import Path

    from remora_core.agents.kernel import AgentKernel
    from remora_core.agents.questions import Presenter
    from remora_core.events.models import Event
    from remora_core.index.code_index import CodeIndex
    from remora_core.store.database import Database
    from remora_core.swarm.turns import Turn
    from remora_core.trust import Trust

log = logging.getLogger(__name__)

PRELOAD_QUIET_S = 1.0
"""How long nobody must have typed (in a file or in the symbol search) before
the background preload begins."""
IMPORT_SWITCH_S = 0.0005
"""The interpreter's thread switch interval while the kernel is imported in a
thread (Python's default: 5 ms). The import is Python work that holds the
interpreter; each time the event loop lets go of it (a store read, a write to
the editor) it waited up to the interval to get it back: on a warm start of a
large project a symbol search, which reads its results from the store, took
250 ms instead of 20 (``bench/index_large.py``)."""


@contextmanager
def short_switches() -> Iterator[None]:
    """Run the body with :data:`IMPORT_SWITCH_S` as the switch interval."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(min(before, IMPORT_SWITCH_S))
    try:
        yield
    finally:
        sys.setswitchinterval(before)


class AgentRuntime:
    """Everything agents of one project need, and their turn function."""

    def __init__(
        self,
        index: CodeIndex,
        database: Database | None,
        *,
        trust: Trust,
        notify: Callable[[str], None],
        presenter: Presenter | None,
        emit: Callable[[Event], Awaitable[object]],
        reserve: Callable[[str], str],
    ) -> None:
        config, root = index.config, index.root
        self.index = index
        """The project's files (agents read open buffers, else the disk)."""
        self.following = database is not None and database.owner is not None
        """Whether another server owns the store (it decides staleness)."""
        log_path = _model_log(root)
        self.services = AgentServices(
            root=root,
            config=config,
            graph=index.graph,
            read_text=index.read_text,
            document_version=self._document_version,
            text_watch=index.text_watch,
            proposals=ProposalStore(database),
            kv=KeyValueStore(database),
            overlay=Overlay(
                database, root, index.read_text, list(config.secrets.exclude)
            ),
            memory=ChatMemory(
                database,
                config.agents.history_messages,
                config.limits.history_bytes,
            ),
            questions=Questions(config.agents.question_timeout_s),
            bundles=BundleRegistry(
                root, dict(config.bundles), notify, trusted=trust.trusted
            ),
            extensions=ExtensionRegistry(root, notify, trusted=trust.trusted),
            sandbox=Sandbox(),
            models=ModelResolver(
                config.model,
                trust=trust,
                log_path=log_path,
                concurrency=config.agents.max_concurrency,
            ),
        )
        self.services.questions.presenter = presenter
        self.review = Review(self.services, emit)
        """Accepting, rejecting and staleness of proposals."""
        self.services.verifier = Verifier(
            self.services, self.review, emit, reserve, trusted=trust.trusted
        )
        self.kernel: AgentKernel | None = None
        """Built on the first turn: pydantic-ai takes ~2 s to import, which must
        not delay the server's start-up."""
        self._kernel_lock = asyncio.Lock()
        self._warm = False
        """Whether a turn has run (and what it loaded lazily was frozen)."""
        self._last_change = time.monotonic()
        """When a file's nodes last changed (typing, mostly)."""

    async def start(self) -> None:
        """Load what the store holds (proposals, acceptances under way)."""
        await self.services.proposals.load()
        self.review.load()
        if self.services.verifier is not None and not self.following:
            self.services.verifier.resume()

    async def preload(self) -> None:
        """Take the first ask's one-off costs now (``model.preload``): import the
        kernel (pydantic-ai, ~2 s), start the embedded model if agents use it
        (its load, seconds on a small machine) and have it read the part of
        the prompt every function's agent shares (~280 tokens, ~2-4 s on 2
        cores). The first ask then waits only for whatever is still under way.

        It waits until nobody has typed for :data:`PRELOAD_QUIET_S`, in a file
        or in the symbol search: the import holds the interpreter for seconds,
        and keystrokes meanwhile took three times as long
        (``bench/document_symbol.py``), symbol searches on a warm start ten
        times (``bench/index_large.py``).
        """
        if not self.services.config.model.preload:
            return
        self._last_change = time.monotonic()
        await until_quiet(self._last_typed, PRELOAD_QUIET_S)
        await self._load_kernel()
        await self.services.models.preload()
        # The shared half of a function's prompt (rules, its bundle's
        # instructions), read once now: the first ask reads only its own part.
        models = self.services.models
        protocol = self.services.config.model.protocol or "fenced"
        rules = read_rules(self.services.root, self.services.config)
        await models.read_ahead(
            shared_prompt(self.services.bundles.for_kind("function"), protocol, rules)
        )

    async def turn(self, turn: Turn) -> str:
        """The project's turn function."""
        node = self.services.graph.get(turn.agent_id)
        if (
            node is not None
            and only_own_edits(turn)
            and not self.services.bundles.for_node(node).react_to_own_edits
        ):
            return "Noted a change of my own source (no model call)."
        kernel = self.kernel or await self._load_kernel()
        try:
            answer = await kernel.turn(turn)
        finally:
            if not self._warm:
                # The first turn imports and builds what pydantic-ai loads
                # lazily (price tables, validators: ~70k objects, as many as
                # the kernel itself). Frozen once, like the kernel: during a
                # storm of turns full collections walked them every second or
                # two, 30-200 ms each while the person typed (bench/storm.py).
                self._warm = True
                gc.freeze()
        # The answer rides in ``agent_completed`` to the editor and the store:
        # a model that talks without end is cut (limits.answer_chars).
        limit = self.services.config.limits.answer_chars
        if answer is not None and len(answer) > limit:
            answer = f"{answer[:limit]}… (cut at {limit:,} of {len(answer):,} chars)"
        return answer

    async def _load_kernel(self) -> AgentKernel:
        async with self._kernel_lock:
            if self.kernel is not None:
                return self.kernel
            # The import builds ~70k objects (pydantic-ai, the OpenAI client)
            # that live as long as the process. With the collector on, they
            # set off full collections that held the interpreter 15-55 ms at
            # a time (a keystroke waited that long) and found nothing to free.
            # So: no collector during the import, and the objects frozen
            # before it runs again. Frozen after, the first young collection
            # walked all of them (50-60 ms); frozen, no collection (a storm of
            # turns sets off many) ever walks them again. (Cyclic garbage the
            # server makes in that second is frozen too: bounded, once.)
            with short_switches(), collector_paused():
                module = await asyncio.to_thread(
                    importlib.import_module, "remora_core.agents.kernel"
                )
                kernel: AgentKernel = module.AgentKernel(self.services)
                gc.freeze()
            self.kernel = kernel
            # Turns are about to run, many at once: collect the young objects
            # less often (collector_pace.py).
            pace_for_turns()
            return kernel

    def _last_typed(self) -> float:
        """When the person last typed: a file's nodes changed, or a symbol
        search was asked (the graph notes both).
        """
        return max(self._last_change, self.index.graph.last_use)

    def _document_version(self, path: str) -> int | None:
        document = self.index.documents.get(path)
        return document.version if document is not None else None

    def file_changed(self, path: str) -> None:
        """A file's nodes changed: proposals on them may have become stale
        (decided by the store's owner only: a follower leaves them alone).
        """
        self._last_change = time.monotonic()
        if self.following:
            return
        if self.services.proposals.pending(path=path):
            self.index.tasks.spawn(self.review.document_changed(path), name="staleness")

    def file_moved(self, old: str, new: str) -> None:
        """A file was renamed: its proposals follow it; a change set with a
        member in it goes stale (its edits name the old file).
        """
        self.index.tasks.spawn(self._moved(old, new), name="move proposals")

    async def _moved(self, old: str, new: str) -> None:
        await self.services.proposals.move_file(old, new)
        if not self.following:
            await self.review.files_moved(old, new)

    async def forget(self, agent_id: str) -> None:
        """Clear an agent's chat history, key-value memory and overlay."""
        services = self.services
        await services.memory.clear(agent_id)
        await services.kv.clear(agent_id)
        await services.overlay.clear(agent_id)

    async def close(self) -> None:
        """Stop the model clients, the local model and the sandbox."""
        services = self.services
        closings = (
            services.verifier.close() if services.verifier else asyncio.sleep(0),
            services.memory.close(),
            services.models.close(),
            services.sandbox.close(),
        )
        for closing in closings:
            try:
                await closing
            except Exception:  # close the rest anyway
                log.exception("closing the agents' services")


def _model_log(root: Path | None) -> Path | None:
    """Where the embedded model logs: the project's store folder when it is
    the person's own (``store/folder.py``), else None (the model's cache).
    """
    if root is None:
        return None
    try:
        folder.check(root / STORE_DIR)
    except folder.StoreRefused:
        return None
    return root / STORE_DIR / "local-model.log"
