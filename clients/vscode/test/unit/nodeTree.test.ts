/** The Nodes view: the outline as a tree, with ids, status and pending proposals. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { SymbolLike, buildTree, describeItem, parseDetail } from "../../src/nodeTree";

const r = (line: number) => ({ start: { line, character: 4 }, end: { line: line + 2, character: 0 } });

test("the detail gives the node id and the agent status", () => {
  assert.deepEqual(parseDetail("rm_ab12cd · idle"), { nodeId: "rm_ab12cd", status: "idle" });
  assert.deepEqual(parseDetail(undefined), { nodeId: undefined, status: "" });
});

test("symbols become a sorted tree with pending proposals on their nodes", () => {
  const symbols: SymbolLike[] = [
    { name: "later", detail: "rm_2 · running", kind: 12, range: r(10), selectionRange: r(10) },
    {
      name: "Cls", detail: "rm_1 · idle", kind: 5, range: r(0), selectionRange: r(0),
      children: [{ name: "method", detail: "rm_3 · idle", kind: 6, range: r(2), selectionRange: r(2) }],
    },
  ];
  const tree = buildTree(symbols, new Map([["rm_3", ["pr_a"]]]));
  assert.deepEqual(tree.map((n) => n.label), ["Cls", "later"]);
  assert.equal(tree[0]?.children[0]?.nodeId, "rm_3");
  assert.deepEqual(tree[0]?.children[0]?.pending, ["pr_a"]);
  assert.equal(describeItem(tree[0]!.children[0]!), "idle · 1 pending");
  assert.equal(describeItem(tree[1]!), "running");
  assert.equal(tree[1]?.line, 10);
});
