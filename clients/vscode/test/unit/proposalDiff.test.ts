/** The remora-proposal: documents: addressing, the real file, the true indentation. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  atTrueIndentation,
  diffTitle,
  indentQuery,
  indentationAt,
  parseIndentQuery,
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
