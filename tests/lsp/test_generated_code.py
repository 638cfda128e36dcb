"""The protocol types' generated code is compiled once per user, and only
the user's own kept code is ever run (``remora_lsp/generated_code.py``).

Each check runs in a fresh interpreter (this one imported ``lsprotocol``
already) with ``REMORA_CACHE_DIR`` in the test's folder.
"""

from __future__ import annotations

import json
import marshal
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

IMPORT_THE_TYPES = """
import json
from remora_lsp.generated_code import generated_code_cached

with generated_code_cached() as found:
    from lsprotocol import types

position = types.Position(line=1, character=2)
try:
    types.Position(1)
    incomplete = "accepted"
except TypeError as error:
    incomplete = str(error)
print(json.dumps({
    "compiled": found.compiled,
    "reused": found.reused,
    "problem": found.problem,
    "path": str(found.path),
    "equal": position == types.Position(1, 2) and position != types.Position(1, 3),
    "fields": [position.line, position.character],
    "incomplete": incomplete,
}))
"""


def _import_the_types(cache: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_THE_TYPES],
        env={**os.environ, "REMORA_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _works(shown: dict) -> None:
    assert shown["equal"], shown
    assert shown["fields"] == [1, 2], shown
    assert "character" in shown["incomplete"], shown  # the generated __init__


def test_the_types_are_compiled_once_then_reused(tmp_path: Path):
    first = _import_the_types(tmp_path)
    assert first["compiled"] > 500 and first["reused"] == 0, first
    assert first["problem"] is None, first
    _works(first)
    kept = Path(first["path"])
    assert kept.parent.parent == tmp_path
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700

    second = _import_the_types(tmp_path)
    assert second["compiled"] == 0 and second["reused"] == first["compiled"], second
    _works(second)


@pytest.mark.parametrize("mode", [0o666, 0o620])
def test_kept_code_others_may_write_is_never_run(tmp_path: Path, mode: int):
    """A kept file another user could have written is not trusted: its code
    (here, code that would leave a mark) never runs; the types are compiled.
    """
    kept = Path(_import_the_types(tmp_path)["path"])
    mark = tmp_path / "ran"
    planted = compile(f"open({str(mark)!r}, 'w').close()", "<planted>", "exec")
    entries = marshal.loads(kept.read_bytes())
    kept.write_bytes(marshal.dumps(dict.fromkeys(entries, planted)))
    kept.chmod(mode)

    shown = _import_the_types(tmp_path)

    assert "may be written by other users" in shown["problem"], shown
    assert shown["reused"] == 0 and shown["compiled"] > 500, shown
    assert not mark.exists(), "the planted code ran"
    _works(shown)


def test_a_damaged_file_means_the_plain_import_and_is_written_again(tmp_path: Path):
    kept = Path(_import_the_types(tmp_path)["path"])
    kept.write_bytes(b"\x00not marshal at all")

    shown = _import_the_types(tmp_path)
    assert "damaged" in shown["problem"], shown
    assert shown["compiled"] > 500, shown
    _works(shown)
    assert _import_the_types(tmp_path)["compiled"] == 0  # kept again, whole


def test_a_cache_folder_that_cannot_be_made_costs_only_the_compilation(
    tmp_path: Path,
):
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("", encoding="utf-8")
    shown = _import_the_types(blocked)
    assert shown["compiled"] > 500, shown
    assert "Not a directory" in shown["problem"], shown
    _works(shown)
    assert _import_the_types(blocked)["compiled"] > 500  # nothing kept, no error


def _start_the_server(cache: Path) -> Path:
    """Start ``remora-lsp`` with its editor gone at once (stdin empty) and
    ``cache`` as its cache folder; the one kept file it leaves.
    """
    server = Path(sys.executable).with_name("remora-lsp")
    done = subprocess.run(
        [str(server)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env={**os.environ, "REMORA_CACHE_DIR": str(cache)},
        cwd=cache,
        timeout=120,
    )
    assert done.stdout == b"", "nothing but the protocol on stdout"
    kept = list((cache / "generated-code").glob("attrs-*.marshal"))
    assert len(kept) == 1, (done.returncode, done.stderr[-2000:])
    return kept[0]


def test_the_server_keeps_the_code_for_its_next_start(tmp_path: Path):
    """``remora-lsp`` builds the types inside the cache: after one start (its
    editor gone at once), the next one finds them compiled.
    """
    _start_the_server(tmp_path)
    second = _import_the_types(tmp_path)
    assert second["compiled"] == 0 and second["reused"] > 500, second


def test_a_start_with_nothing_new_leaves_the_kept_file_alone(tmp_path: Path):
    """The second start of the server finds every place's code kept and does
    not write the 1.8 MB file again (it did at every start: one cattrs class
    has generated code that differs in every process).
    """
    first = _start_the_server(tmp_path).stat()
    second = _start_the_server(tmp_path).stat()
    assert (second.st_ino, second.st_mtime_ns) == (first.st_ino, first.st_mtime_ns)
