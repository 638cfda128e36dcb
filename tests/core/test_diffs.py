"""Region diffs read exactly like a diff of the region's lines in the whole file."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from remora_core.review.diffs import CONTEXT, file_diff, region_diff, split_lines


def whole_file_region_diff(path: str, old: str, start: int, end: int, new: str) -> str:
    """The reference: split the whole file, then diff the touched lines + context."""
    lines = split_lines(old)
    line_starts = [0]
    for line in lines:
        line_starts.append(line_starts[-1] + len(line))
    first = max(i for i, s in enumerate(line_starts) if s <= start)
    last = max(i for i, s in enumerate(line_starts) if s <= end)
    context_first = max(first - CONTEXT, 0)
    region_start = line_starts[context_first]
    line_after = min(last + 1 + CONTEXT, len(line_starts) - 1)
    region_end = max(line_starts[line_after], end)
    return file_diff(
        path,
        split_lines(old[region_start:region_end]),
        split_lines(old[region_start:start] + new + old[end:region_end]),
        first_line=context_first + 1,
    )


line = st.text(alphabet="ab \t#", max_size=6).map(lambda s: s.strip() or "x")
ending = st.sampled_from(["\n", "\r\n", "\r"])
texts = st.lists(st.tuples(line, ending), max_size=40).map(
    lambda pairs: "".join(a + b for a, b in pairs)
)


@settings(max_examples=400, deadline=None)
@given(texts, st.data(), st.text(alphabet="abc\n", max_size=12))
def test_region_diff_matches_the_whole_file_reference(old, data, new):
    # Any offset (a method starts after its indentation), never inside a \r\n.
    offsets = [i for i in range(len(old) + 1) if old[i - 1 : i + 1] != "\r\n"]
    start = data.draw(st.sampled_from(offsets))
    end = data.draw(st.sampled_from([i for i in offsets if i >= start]))
    assert region_diff("f.py", old, start, end, new) == whole_file_region_diff(
        "f.py", old, start, end, new
    )


def test_a_change_deep_in_a_long_file_shows_its_own_line_numbers():
    old = "".join(f"line {n}\n" for n in range(1, 2001))
    start = old.index("line 1500\n")
    end = start + len("line 1500\n")
    diff = region_diff("big.py", old, start, end, "changed\n")
    assert diff == (
        "--- a/big.py\n+++ b/big.py\n@@ -1497,7 +1497,7 @@\n"
        " line 1497\n line 1498\n line 1499\n-line 1500\n+changed\n"
        " line 1501\n line 1502\n line 1503\n"
    )
