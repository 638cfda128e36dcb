/** A change set in the Proposals view: one item with its counts, members with their files, sizes and needs. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  definedName,
  memberCounts,
  memberDescription,
  memberLabel,
  missingFor,
  needs,
  newFileTitle,
  setTitle,
  setTooltip,
} from "../../src/changeSetModel";
import { changeSets, countForFile, groupByFile } from "../../src/proposalsModel";

const member = (path: string, kind: string, source: string, diff: string) => ({ path, kind, new_source: source, diff });
const SET = {
  id: "pr_aaaaaaaaaaaa",
  kind: "change_set",
  summary: "add currency",
  file_path: "pkg/service.py",
  uri: "file:///w/pkg/service.py",
  members: [
    member("pkg/service.py", "rewrite", "def order(name, quantity, currency='EUR'):\n    ...", "@@\n-def order(name, quantity):\n+def order(name, quantity, currency='EUR'):\n"),
    member("pkg/models.py", "rewrite", "def make_item(name, price=1.0, currency='EUR'):\n    ...", "@@\n-a\n+b\n+c\n"),
    member("pkg/currency.py", "new_file", "RATES = {}\n\ndef convert(a, c):\n    return a\n", "+++ b/pkg/currency.py\n+RATES = {}\n+\n+def convert(a, c):\n+    return a\n"),
  ],
  depends_on: [
    [0, 1],
    [0, 2],
    [1, 2],
  ],
};

test("a set is one item saying what it does and how much: definitions, files, new files", () => {
  assert.equal(setTitle(SET), "Change set: add currency (2 definitions in 2 files, 1 new file)");
  assert.equal(memberCounts([...SET.members, member("pkg/service.py", "new_node", "def f():\n  pass", "")]), "3 definitions in 2 files, 1 new file");
  assert.equal(memberCounts([SET.members[2]!]), "1 new file");
  assert.equal(setTitle({ id: "pr_b", kind: "change_set", reasoning: "first line\nmore", members: [] }), "Change set: first line");
});

test("each member shows its file and definition, its size, new files marked, and what it needs", () => {
  assert.deepEqual(SET.members.map(memberLabel), ["pkg/service.py · order", "pkg/models.py · make_item", "pkg/currency.py"]);
  assert.equal(memberDescription(SET, 0), "+1 −1 · needs 2, 3");
  assert.equal(memberDescription(SET, 1), "+2 −1 · needs 3");
  assert.equal(memberDescription(SET, 2), "new file · +4");
  assert.deepEqual(needs(SET, 2), []);
  assert.equal(definedName("async def go():\n  pass"), "go");
  assert.equal(definedName("X = 1\n"), undefined);
});

test("accepting part of a set names the members it would leave out although needed", () => {
  assert.deepEqual(missingFor(SET, [2]), []);
  assert.deepEqual(missingFor(SET, [1, 2]), []);
  assert.deepEqual(missingFor(SET, [0]), ["1. pkg/service.py · order needs 2. pkg/models.py · make_item", "1. pkg/service.py · order needs 3. pkg/currency.py"]);
  assert.match(setTooltip(SET), /1\. pkg\/service\.py · order needs 2\. pkg\/models\.py · make_item/);
  assert.match(setTooltip({ ...SET, depends_on: [] }), /any of them can be accepted alone/);
  assert.deepEqual(missingFor({ ...SET, depends_on: "junk" }, [0]), []);
});

test("a set is not under a file of the view but counts in each file it edits; a new file says create", () => {
  const single = { id: "pr_c", kind: "rewrite", file_path: "pkg/service.py", uri: "file:///w/pkg/service.py" };
  const created = { id: "pr_d", kind: "new_file", file_path: "tests/test_x.py", uri: "file:///w/tests/test_x.py", diff: "+++ b/tests/test_x.py\n+a\n+b\n" };
  const listed = [SET, single, created];
  assert.deepEqual(changeSets(listed).map((p) => p.id), [SET.id]);
  assert.deepEqual(groupByFile(listed).map((g) => [g.filePath, g.proposals.map((p) => p.id)]), [
    ["pkg/service.py", ["pr_c"]],
    ["tests/test_x.py", ["pr_d"]],
  ]);
  assert.equal(countForFile(listed, "file:///w/pkg/service.py"), 2);
  assert.equal(countForFile(listed, "file:///w/pkg/models.py"), 1);
  assert.equal(newFileTitle(created), "create tests/test_x.py (+2)");
});
