"""A checkpoint asked for while the project is still being indexed.

Checkpoints record the project files' hashes; one taken before the first
index finished recorded none, and restoring it then said every file had
changed since. A checkpoint waits for the index instead.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from remora_core.config import RemoraConfig
from remora_core.front.app import RemoraApp
from remora_core.front.disk_editor import DiskEditor


async def test_a_checkpoint_asked_for_during_the_first_index_records_every_file(
    tmp_path: Path,
):
    for i in range(40):
        (tmp_path / f"mod{i}.py").write_text(
            "".join(f"def f{j}(x):\n    return x + {j}\n\n" for j in range(50))
        )
    app = RemoraApp(tmp_path, RemoraConfig(), DiskEditor(tmp_path))
    starting = asyncio.create_task(app.start())
    try:
        checkpoint_id = await app.checkpoints.create("at start")
        await starting
        (tmp_path / "mod3.py").write_text("def changed():\n    pass\n")
        await app.files.changed(changed=[str(tmp_path / "mod3.py")])
        restored = await app.checkpoints.restore(checkpoint_id)
        assert restored["files_differing"] == [str(tmp_path / "mod3.py")]
    finally:
        await starting
        await app.close()
