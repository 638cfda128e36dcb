/** The remora-proposal: documents: addressing, the real file, the true indentation. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  atTrueIndentation,
  diffTitle,
  indentQuery,
  indentationAt,
  indentationOf,
  memberDiffTitle,
  memberQuery,
  parseIndentQuery,
  parseMemberQuery,
  parseProposalPath,
  proposalPath,
  sideContent,
} from "../../src/proposalDiff";

test("a proposal path round-trips, even with odd characters in the id", () => {
  const p = proposalPath("pr/1 x", "proposed", "mod.py");
  assert.deepEqual(parseProposalPath(p), { proposalId: "pr/1 x", side: "proposed", filePath: "mod.py" });
  assert.equal(parseProposalPath("/pr_1/sideways/mod.py"), undefined);
});

test("the path ends in the proposal's real file, so the tab and the language are the file's", () => {
  const p = proposalPath("pr_1", "current", "pkg/sub dir/service.py");
  assert.equal(p, "/pr_1/current/pkg/sub%20dir/service.py");
  assert.ok(p.endsWith("/service.py"));
  assert.equal(parseProposalPath(p)?.filePath, "pkg/sub dir/service.py");
  // No way out of the path with dot segments; no file at all still names a .py file.
  assert.equal(proposalPath("pr_1", "current", "../../etc/passwd"), "/pr_1/current/etc/passwd");
  assert.equal(proposalPath("pr_1", "current", ""), "/pr_1/current/proposal.py");
  assert.match(diffTitle("pr_1", "pending", "pkg/service.py"), /^service\.py: Remora proposal pr_1: current ↔ proposed$/);
});

test("a method's definition is shown at its indentation in the file, like its body", () => {
  const file = 'class Service:\n    def helper(self):\n        return order("b", 2)\n';
  const start = Buffer.byteLength("class Service:\n    ");
  const indent = indentationAt(file, start);
  assert.equal(indent, "    ");
  const stored = 'def helper(self):\n        return order("b", 2)';
  assert.equal(atTrueIndentation(stored, indent), '    def helper(self):\n        return order("b", 2)');
  const answer = { old_source: stored, new_source: 'def helper(self):\n        """Doc."""\n        return 1', status: "pending" };
  assert.equal(sideContent(answer, "proposed", indent).split("\n")[0], "    def helper(self):");
  assert.equal(sideContent(answer, "current", indent).split("\n")[0], "    def helper(self):");
  // Through the URI query and back.
  assert.equal(parseIndentQuery(indentQuery(indent)), "    ");
  assert.equal(parseIndentQuery("indent=x%20"), "");
});

test("the indentation counts UTF-8 bytes as the server does, and is empty when the text moved", () => {
  const file = 'def café():\n    pass\n\nclass Ü:\n\tdef f(self):\n\t\tpass\n';
  const start = Buffer.byteLength("def café():\n    pass\n\nclass Ü:\n\t");
  assert.equal(indentationAt(file, start), "\t");
  assert.equal(indentationAt(file, 0), "");
  assert.equal(indentationAt(file, Buffer.byteLength("def ca")), "");
  assert.equal(indentationAt(file, 10_000), "");
  assert.equal(atTrueIndentation("    def f(): pass", "    "), "    def f(): pass");
  assert.equal(atTrueIndentation("def f(): pass", ""), "def f(): pass");
});

test("each side shows its source; a missing side says so", () => {
  const answer = { old_source: "def f():\n    return 1\n", new_source: "def f():\n    return 2\n", status: "pending" };
  assert.equal(sideContent(answer, "current"), answer.old_source);
  assert.equal(sideContent(answer, "proposed"), answer.new_source);
  assert.match(sideContent({ status: "rejected" }, "proposed"), /no proposed source \(status: rejected\)/);
  assert.match(diffTitle("pr_1", "accepted"), /pr_1 \(accepted\)/);
});

test("a change set's member has its own sides: a new file's current side is empty", () => {
  const answer = {
    kind: "change_set",
    old_source: "",
    new_source: "",
    members: [
      { index: 0, path: "pkg/service.py", kind: "rewrite", old_source: "def helper(self):\n        return 1", new_source: "def helper(self):\n        return 2" },
      { index: 1, path: "pkg/currency.py", kind: "new_file", old_source: "", new_source: "RATES = {}\n" },
    ],
  };
  const query = memberQuery(0, "    ");
  assert.equal(parseMemberQuery(query), 0);
  assert.equal(parseIndentQuery(query), "    ");
  assert.equal(parseMemberQuery("indent=%20%20"), undefined);
  assert.equal(parseMemberQuery(memberQuery(12, "")), 12);
  assert.equal(sideContent(answer, "proposed", "    ", 0), "    def helper(self):\n        return 2");
  assert.equal(sideContent(answer, "current", "", 1), "");
  assert.equal(sideContent(answer, "proposed", "", 1), "RATES = {}\n");
  assert.match(sideContent(answer, "proposed", "", 5), /no member 6/);
  assert.equal(memberDiffTitle("pr_1", 1, 3, "pkg/currency.py", "new_file"), "2/3 currency.py: change set pr_1: (new file) ↔ proposed");
});

test("a rewritten definition's indentation is found where its old text is", () => {
  const text = "class S:\n    def helper(self):\n        return 1\n";
  assert.equal(indentationOf(text, "def helper(self):\n        return 1"), "    ");
  assert.equal(indentationOf(text, "def gone():"), "");
  assert.equal(indentationOf("x = 1; def f(): pass", "def f(): pass"), "");
  assert.equal(indentationOf(text, ""), "");
});
