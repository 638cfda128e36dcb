"""Symbol search from the name index ranks exactly as scanning every node.

``index/symbol_index.py`` answers ``workspace/symbol`` and ``remora.nodes.search``
without looking at every node; ``index/search.py``'s ``search_nodes`` is the
ranking people have had (it scores every active node). On a project of real
code (two copies of stdlib packages side by side, so names repeat across files,
plus names no ASCII rule lowercases), every query an editor sends while a person
types a word, ids, paths, fuzzy matches and no match at all must get the same
nodes in the same order, for a short and a long result list; and again after
edits rename, add, remove and move definitions.
"""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

from remora_core.config import validate
from remora_core.index.documents import TextChange
from remora_core.index.search import search_nodes
from remora_core.text import PositionEncoding

from tests.project_harness import Project

STDLIB = Path(sysconfig.get_paths()["stdlib"])
PACKAGES = ["json", "http", "email/mime", "xml/dom"]

UNICODE = '''\
"""Names that only Unicode case rules lowercase."""


class Überprüfung:
    def Größe(self):
        return 1


def ΣΥΝΟΛΟ():
    return 2


def KELVIN_K():  # the Kelvin sign lowercases to an ASCII k
    return 3
'''

WORDS = [
    "Decimal",
    "get",
    "parse",
    "__init__",
    "HTTPConnection",
    "json.decoder",
    "copy2/http",
    "mime",
    "MIMEText.__init__",
    "qntz",
    "zzqx",
    "überprüfung",
    "größe",
    "σ",
    "k",
]

SETTINGS = validate({"discovery": {"workers": 1}})[0]


def _queries(project: Project) -> list[str]:
    """Every prefix of :data:`WORDS` as typed, plus ids, spaces and case."""
    typed = [word[:end] for word in WORDS for end in range(1, len(word) + 1)]
    some_id = next(iter(project.graph.active())).id
    ids = [some_id[:end] for end in range(1, len(some_id) + 1)]
    return [*typed, *ids, "  Get ", "GET", "e.p", "py", "/", "rm_zz"]


def _workspace(root: Path) -> None:
    for copy in ("copy1", "copy2"):
        for package in PACKAGES:
            source = STDLIB / package
            shutil.copytree(
                source,
                root / copy / package,
                ignore=shutil.ignore_patterns("__pycache__"),
            )
    (root / "copy1" / "unicode_names.py").write_text(UNICODE, encoding="utf-8")


def _differences(project: Project) -> list[str]:
    """Queries whose indexed answer differs from scanning every node."""
    found = []
    for query in _queries(project):
        for limit in (7, 500):
            scanned = search_nodes(project.graph.active(), query, limit)
            indexed = project.search(query, limit)
            if [n.id for n in indexed] != [n.id for n in scanned]:
                found.append(
                    f"{query!r} (limit {limit}): "
                    f"{[n.qualified_name for n in indexed[:5]]} "
                    f"!= {[n.qualified_name for n in scanned[:5]]}"
                )
    return found


async def test_the_name_index_ranks_as_scanning_every_node(tmp_path: Path):
    _workspace(tmp_path)
    project = Project(tmp_path, SETTINGS)
    await project.start()
    try:
        assert await project.ready()
        assert len(list(project.graph.active())) > 1000  # a real project
        assert project.search("HTTPConnection", 3)[0].name == "HTTPConnection"
        assert _differences(project) == []
    finally:
        await project.close()


async def test_the_name_index_follows_edits(tmp_path: Path):
    _workspace(tmp_path)
    project = Project(tmp_path, SETTINGS)
    await project.start()
    try:
        assert await project.ready()
        assert project.search("renamed_build", 5) == []
        path = "copy1/unicode_names.py"
        project.open_document(path, 1, UNICODE)
        versions = [
            UNICODE.replace("def ΣΥΝΟΛΟ", "def renamed_build"),  # renamed
            UNICODE + "\n\nclass HTTPConnectionPool:\n    def get(self):\n"
            "        return 4\n",  # added
            UNICODE.replace("class Überprüfung:", "class Other:"),  # class renamed
            '"""Everything removed."""\n',  # removed
        ]
        for version, text in enumerate(versions, start=2):
            project.change_document(
                path, version, [TextChange(text)], PositionEncoding.UTF16
            )
            assert _differences(project) == [], f"after edit {version}"
        # The file's own module and nothing else is left of it.
        assert [n.file_path for n in project.search("ΣΥΝΟΛΟ", 5)] == []
        assert [n.qualified_name for n in project.search("renamed_build", 5)] == []
    finally:
        await project.close()
