/**
 * One at a time, in the order asked: a view's refresh reads the server in
 * several awaited steps, and an event's refresh can start while a command's
 * is still reading. Run side by side, the one that began first could finish
 * last and show the older answer (a proposal just made missing from the view
 * and the status bar). `inTurn(load)` queues each call behind the one before,
 * so the last call's answer is the one shown and a caller that awaits its
 * call sees at least what the server said after it asked.
 */
export function inTurn(load: () => Promise<void>): () => Promise<void> {
  let previous: Promise<void> = Promise.resolve();
  return () => {
    const mine = previous.then(load);
    // A failed load must not stop the ones queued behind it.
    previous = mine.catch(() => undefined);
    return mine;
  };
}
