/** Refreshes of a view run one at a time, in the order asked. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { inTurn } from "../../src/inTurn";

test("a refresh that began first cannot overwrite a later one's answer", async () => {
  // The server answers the first read slowly (the project had no proposal
  // yet) and the second at once (the proposal is there).
  const answers = [
    { shown: "no proposal", delayMs: 50 },
    { shown: "1 proposal here", delayMs: 0 },
  ];
  let shown = "";
  let reads = 0;
  const refresh = inTurn(async () => {
    const { shown: answer, delayMs } = answers[reads++]!;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    shown = answer;
  });
  const fromAnEvent = refresh();
  await refresh();
  assert.equal(shown, "1 proposal here");
  await fromAnEvent;
  assert.equal(shown, "1 proposal here");
});

test("a failed refresh does not stop the ones after it", async () => {
  let calls = 0;
  const refresh = inTurn(async () => {
    calls += 1;
    if (calls === 1) throw new Error("the server restarted");
  });
  await assert.rejects(refresh(), /restarted/);
  await refresh();
  assert.equal(calls, 2);
});
