/** What Show Trust prints, and when it offers to forget. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { hasAnswers, trustLines } from "../../src/trustModel";

test("each folder says whether it is trusted, who decided, what it wants and where the key may go", () => {
  const rows = [
    {
      root: "file:///work/shop",
      trusted: false,
      decided_by: "client",
      wants: "run its Python code (.remora/models/x.py)",
      hosts: { "models.example:443": false, "127.0.0.1:8000": true },
    },
  ];
  assert.deepEqual(trustLines(rows), [
    "Remora trust: file:///work/shop: not trusted (VS Code's workspace trust)",
    "  it wants to run its Python code (.remora/models/x.py)",
    "  127.0.0.1:8000 may receive your API key",
    "  models.example:443 may not receive your API key",
  ]);
  assert.equal(hasAnswers(rows), true);
  assert.equal(hasAnswers([{ ...rows[0]!, hosts: {} }]), false);
});
