"""Fixtures shared by the engine tests."""

from __future__ import annotations

import pytest
from remora_core.store import Database


@pytest.fixture
async def database(tmp_path):
    """A real project store in a temporary folder, closed afterwards."""
    database = await Database.open(tmp_path)
    yield database
    await database.close()
