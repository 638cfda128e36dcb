"""Time per test directory, from a pytest JUnit XML report.

Usage::

    .venv/bin/python -m pytest --junitxml=/tmp/suite.xml
    .venv/bin/python scripts/suite_times.py /tmp/suite.xml [--slowest 20]

Prints, for each directory under ``tests/``, the number of tests and the sum of
their times (setup, call and teardown). Under pytest-xdist that sum is work
done across all workers, not the wall-clock time of the run: the two together
say how well the workers were kept busy. Also the time workers sat idle
waiting for a serial group's lock (``tests/conftest.py``: ``serial_wait_s``).
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from collections import defaultdict


def directory_of(classname: str) -> str:
    """``tests.lsp.test_edits.TestX`` → ``tests/lsp``; ``tests.test_type_check`` →
    ``tests`` (a module at the top).
    """
    parts = classname.split(".")
    modules = [p for p in parts if not p[:1].isupper()]
    return "/".join(modules[:2]) if len(modules) > 2 else modules[0]


def main() -> None:
    """Print the table (and the slowest tests when asked)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", help="a JUnit XML file written by --junitxml")
    parser.add_argument("--slowest", type=int, default=0, help="also list N tests")
    options = parser.parse_args()
    tree = ET.parse(options.report)
    count: dict[str, int] = defaultdict(int)
    seconds: dict[str, float] = defaultdict(float)
    tests: list[tuple[float, str]] = []
    waited: list[tuple[float, str]] = []
    for case in tree.iter("testcase"):
        for prop in case.iter("property"):
            if prop.get("name") == "serial_wait_s" and float(prop.get("value")) > 0:
                name = f"{case.get('classname')}::{case.get('name')}"
                waited.append((float(prop.get("value")), name))
        where = directory_of(case.get("classname", ""))
        took = float(case.get("time") or 0)
        count[where] += 1
        seconds[where] += took
        tests.append((took, f"{case.get('classname')}::{case.get('name')}"))
    print(f"{'directory':<18} {'tests':>6} {'seconds':>9}")
    for where in sorted(seconds, key=seconds.__getitem__, reverse=True):
        print(f"{where:<18} {count[where]:>6} {seconds[where]:>9.1f}")
    print(f"{'all':<18} {sum(count.values()):>6} {sum(seconds.values()):>9.1f}")
    print(
        f"a worker waited {sum(w for w, _ in waited):.1f} s for a serial group's "
        f"lock ({len(waited)} tests)"
    )
    for took, name in sorted(tests, reverse=True)[: options.slowest]:
        print(f"{took:8.1f}  {name}")
    for wait, name in sorted(waited, reverse=True)[: options.slowest]:
        print(f"{wait:8.1f}  waited: {name}")


if __name__ == "__main__":
    main()
