"""Write the documentation's reference pages from the code, so they cannot drift.

Four pages under ``docs/reference/``:

- ``commands.md``: every ``remora.*`` command of the command table
  (``remora_core.front.commands.COMMANDS``): what it does (the handler's
  docstring), its arguments (the pydantic model: types, defaults, limits,
  descriptions), its answer (the ``TypedDict`` s of ``front/answers.py``) and
  which project answers it;
- ``events.md``: every event type of ``remora_core/events/models.py``, its
  fields and what they mean;
- ``settings.md``: every setting of ``remora_core/config.py`` with its type,
  default, limits and description;
- ``clients.md``: every command of the table × VS Code / Neovim / CLI / MCP —
  which command of each client reaches it (``clients_page.py``).

How a client declares which table command each of its commands reaches:
the editors in their ``reach.json`` (``clients/vscode``, ``clients/nvim``),
checked against their commands and sources by a test; the CLI and MCP are
read from their Python (``client_reach.py`` says how). A command the client
sends from none of its commands (a view, a lens) shows as "✓ (no command)";
a cell a person would expect filled (``clients_page.EXPECTED``) and empty
shows "—". A new command of a client appears in the table once the script
runs again — the check fails until then.

Descriptions are the code's own: ``Field(description=...)``, else the
docstring written under the attribute (read from the source with ``ast``),
else the class docstring.

Usage::

    .venv/bin/python scripts/reference_docs.py          # (re)write the pages
    .venv/bin/python scripts/reference_docs.py --check  # exit 1 naming stale pages

``tests/docs/test_reference.py`` runs the check, so a change to a command, an
event, a setting or a client's commands fails the suite until the pages are
written again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from clients_page import clients_page
from reference_pages import commands_page, events_page, settings_page

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO / "docs" / "reference"


def pages() -> dict[str, str]:
    """Every reference page: file name → its Markdown text."""
    return {
        "commands.md": commands_page(),
        "events.md": events_page(),
        "settings.md": settings_page(),
        "clients.md": clients_page(),
    }


def stale_pages(folder: Path = REFERENCE) -> list[str]:
    """The pages in ``folder`` that differ from what the code says (or are missing)."""
    stale = []
    for name, text in pages().items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
    return stale


def write_pages(folder: Path = REFERENCE) -> list[str]:
    """Write every page that changed; the names written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in pages().items():
        path = folder / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(name)
    return written


def main(argv: list[str] | None = None) -> int:
    """Write the pages, or with ``--check`` only say which are stale."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 naming the pages that are out of date",
    )
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_pages()
        for name in stale:
            print(f"docs/reference/{name} is out of date", file=sys.stderr)
        if stale:
            print("run: .venv/bin/python scripts/reference_docs.py", file=sys.stderr)
        return 1 if stale else 0
    for name in write_pages():
        print(f"wrote docs/reference/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
