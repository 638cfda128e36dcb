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

import asyncio
import shutil
import sysconfig
import time
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


def _queries(project: Project, some_id: str | None = None) -> list[str]:
    """Every prefix of :data:`WORDS` as typed, plus ids, spaces and case."""
    typed = [word[:end] for word in WORDS for end in range(1, len(word) + 1)]
    some_id = some_id or next(iter(project.graph.active())).id
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


def _warm_answers(project: Project) -> dict[tuple[str, int], list[str]]:
    """Every query's answer, asked before the graph is loaded."""
    answers = {}
    some_id = project.graph.file_node("copy2/http/client.py").id  # one file loaded
    for query in _queries(project, some_id):
        for limit in (7, 500):
            answers[query, limit] = [n.id for n in project.search(query, limit)]
    return answers


def _scanned_differences(
    project: Project, answers: dict[tuple[str, int], list[str]]
) -> list[str]:
    """Queries whose earlier answer differs from scanning every node now."""
    found = []
    for (query, limit), ids in answers.items():
        scanned = [n.id for n in search_nodes(project.graph.active(), query, limit)]
        if ids != scanned:
            found.append(f"{query!r} (limit {limit}): {len(ids)} != {len(scanned)}")
    return found


async def test_a_warm_start_searches_the_stored_names_as_the_whole_index(
    tmp_path: Path, monkeypatch
):
    """A warm start answers symbol searches at once from the names kept in
    the store (``index/symbol_snapshot.py``) for the files not loaded yet and
    from the live index for the others (changed on disk meanwhile, open and
    edited, or changed in the store since the names were kept): every answer
    is the one scanning every node gives.
    """
    from remora_core.index import code_index, graph_loading

    # The graph stays partly loaded while the searches are asked.
    def slow_fill(graph, start, **options):
        return graph_loading.fill_graph(graph, start, **{**options, "delay": 3600})

    _workspace(tmp_path)
    cold = Project(tmp_path, SETTINGS)
    await cold.start()
    try:
        assert await cold.ready()
        assert await cold.app.indexed()
        names = cold.index.stored_names
        await asyncio.wait_for(names.written.wait(), 120)  # once the graph is whole
    finally:
        await cold.close()

    monkeypatch.setattr(code_index, "fill_graph", slow_fill)
    changed = tmp_path / "copy1" / "unicode_names.py"
    changed.write_text(UNICODE.replace("ΣΥΝΟΛΟ", "decimal_sum"), encoding="utf-8")
    for start in ("changed on disk", "changed in the store since"):
        warm = Project(tmp_path, SETTINGS)
        await warm.start()
        try:
            assert await warm.ready()
            assert await warm.app.indexed()
            await warm.app.searchable()  # as a search request does first
            graph = warm.graph
            assert graph.snapshot is not None, start
            assert not graph.complete, start
            if start == "changed on disk":
                path = "copy2/json/decoder.py"
                text = (tmp_path / path).read_text(encoding="utf-8")
                warm.open_document(path, 1, text)
                warm.change_document(
                    path,
                    2,
                    [TextChange(text + "\n\ndef decimal_json():\n    return 1\n")],
                    PositionEncoding.UTF16,
                )
            answers = _warm_answers(warm)
            assert not graph.complete, f"{start}: a search loaded the whole graph"
            assert _scanned_differences(warm, answers) == [], start
            # The edit is gone with the editor's buffer (never saved).
            edited = ["decimal_json"] if start == "changed on disk" else []
            assert [n.name for n in warm.search("decimal_", 5)] == [
                "decimal_sum",
                *edited,
            ]
        finally:
            await warm.close()


def _damaged(good: bytes) -> dict[str, bytes]:
    """Stored names a hostile or broken store could hold."""
    from remora_core.index.symbol_snapshot import _HEADER, _LENGTH, _sections

    count, file_count, sections = _sections(good)
    # The names' postings (section 12) pointing past every node.
    sections[12] = b"\xf0\xff\xff\xff" * (len(sections[12]) // 4)
    header = _HEADER.pack(good[:16], count, file_count)
    scrambled = header + b"".join(_LENGTH.pack(len(s)) + s for s in sections)
    return {
        "garbage": b"\x00garbage" * 100,
        "cut short": good[: len(good) // 2],
        "numbers pointing nowhere": scrambled,
    }


async def test_the_stored_names_are_built_once_the_person_pauses(tmp_path: Path):
    """Storing the name index (a process of its own, seconds of a core on a
    large project) waits while a person searches or types: right after a cold
    index it slowed their first keystrokes (``bench/index_large.py``). Once
    they pause, it is stored.
    """
    from remora_core.index.graph_loading import NAMES_QUIET_S

    _workspace(tmp_path)
    project = Project(tmp_path, SETTINGS)
    await project.start()
    try:
        assert await project.app.indexed()
        names = project.index.stored_names
        last = project.graph.last_use  # the index's last file
        longest_pause = 0.0
        typing_until = time.monotonic() + 3 * NAMES_QUIET_S
        while time.monotonic() < typing_until:
            assert project.search("Decim", 7)
            now = time.monotonic()
            longest_pause, last = max(longest_pause, now - last), now
            await asyncio.sleep(0.05)
        # (a machine so loaded that a search waited a whole pause proves nothing)
        if longest_pause < NAMES_QUIET_S:
            assert not names.written.is_set(), "stored while the person typed"
        await asyncio.wait_for(names.written.wait(), 120)
    finally:
        await project.close()


async def test_damaged_stored_names_are_not_used_and_are_built_again(
    tmp_path: Path, monkeypatch
):
    """Stored names that are not whole or sound (the store sits in the
    project, which may be hostile) are never trusted: searches still rank as
    scanning every node, and the names are stored again once the graph is
    whole.
    """
    import sqlite3

    from remora_core.index import code_index, graph_loading

    _workspace(tmp_path)
    cold = Project(tmp_path, SETTINGS)
    await cold.start()
    try:
        assert await cold.app.indexed()
        await asyncio.wait_for(cold.index.stored_names.written.wait(), 120)
    finally:
        await cold.close()
    database = tmp_path / ".remora" / "remora.db"

    def stored() -> bytes:
        with sqlite3.connect(database) as db:
            return db.execute("SELECT data FROM symbol_snapshot").fetchone()[0]

    good = stored()
    real_fill = graph_loading.fill_graph

    def slow_fill(graph, start, **options):
        return real_fill(graph, start, **{**options, "delay": 3600})

    for damage, data in _damaged(good).items():
        with sqlite3.connect(database) as db:
            db.execute("UPDATE symbol_snapshot SET data = ?", (data,))
        monkeypatch.setattr(code_index, "fill_graph", slow_fill)
        warm = Project(tmp_path, SETTINGS)
        await warm.start()
        try:
            assert await warm.app.indexed()
            await warm.index.stored_names.read_done.wait()
            assert warm.graph.snapshot is None, damage
            answers = {}
            some_id = warm.graph.file_node("copy2/http/client.py").id
            for query in _queries(warm, some_id)[::3]:
                answers[query, 50] = [n.id for n in warm.search(query, 50)]
            assert _scanned_differences(warm, answers) == [], damage
        finally:
            await warm.close()
        assert stored() == data, "nothing stored while the graph was not whole"
    monkeypatch.setattr(code_index, "fill_graph", real_fill)
    warm = Project(tmp_path, SETTINGS)
    await warm.start()
    try:
        assert await warm.app.indexed()
        await asyncio.wait_for(warm.index.stored_names.written.wait(), 120)
    finally:
        await warm.close()
    from remora_core.index.symbol_snapshot import SymbolSnapshot

    assert SymbolSnapshot(stored()).files == SymbolSnapshot(good).files
