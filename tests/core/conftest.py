"""Fixtures shared by the engine tests."""

from __future__ import annotations

import pytest
from remora_core.store import Database

from remora_lsp.testing.model_server import ModelServer
from tests.core.agent_support import AgentHarness


@pytest.fixture
async def database(tmp_path):
    """A real project store in a temporary folder, closed afterwards."""
    database = await Database.open(tmp_path)
    yield database
    await database.close()


@pytest.fixture
async def shop(tmp_path):
    """The shop project with an agent harness on a scripted model server."""
    with ModelServer() as server:
        harness = AgentHarness(tmp_path / "shop", server)
        yield harness
        await harness.stop()
