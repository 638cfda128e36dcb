"""CPU of a worker's extraction against ``ast.parse`` of the same files.

Runs, in this process, ``extract_paths`` (what a parsing worker runs: read,
parse with tree-sitter, definitions, call sites, imports) over N files of the
running Python's stdlib, and ``ast.parse`` of the same files, and prints the
CPU seconds of each and their ratio (CPU, not wall time: other load on the
machine leaves it nearly unchanged). ``--profile`` prints the extraction's
hottest functions (cProfile) after the figures.

    .venv/bin/python bench/extract_cpu.py --files 300 --rounds 3 [--profile]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import cProfile
import pstats
import sysconfig
import time
from pathlib import Path

from remora_core.discovery.extract import extract_paths
from remora_core.discovery.parser import parse


def _files(count: int) -> tuple[Path, list[str]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    paths = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "site-packages" not in p.parts and p.stat().st_size < 2_000_000
    )
    step = max(1, len(paths) // count)
    return root, paths[::step][:count]


def _cpu(work, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    """Print the CPU figures (and the profile, if asked)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    root, paths = _files(args.files)
    sources = [(root / p).read_bytes() for p in paths]

    def run_ast() -> None:
        for p in paths:
            # Some stdlib test data is not Python 3.
            with contextlib.suppress(SyntaxError, ValueError):
                ast.parse((root / p).read_bytes())

    def run_parse() -> None:
        for text in sources:
            parse(text)

    def run_extract() -> None:
        extract_paths(str(root), paths, 10_000_000, True)

    run_extract()  # warm up: queries compiled, modules imported
    ast_cpu = _cpu(run_ast, args.rounds)
    parse_cpu = _cpu(run_parse, args.rounds)
    extract_cpu = _cpu(run_extract, args.rounds)
    lines = sum(t.count(b"\n") for t in sources)
    print(f"{len(paths)} files, {lines} lines (best of {args.rounds}, CPU seconds)")
    print(f"ast.parse            {ast_cpu:7.3f}")
    print(f"tree-sitter parse    {parse_cpu:7.3f}  {parse_cpu / ast_cpu:5.2f}x ast")
    print(f"extract_paths        {extract_cpu:7.3f}  {extract_cpu / ast_cpu:5.2f}x ast")
    if args.profile:
        profile = cProfile.Profile(time.process_time)
        profile.runcall(run_extract)
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
