// The dashboard's one way to the project: commands through POST /api/call
// (the token in X-Remora-Token, as the server demands for anything that
// changes something) and the project's events through server-sent events.

const TOKEN = document.querySelector('meta[name="remora-token"]').content;

export class CallError extends Error {
  constructor(message, kind) {
    super(message);
    this.kind = kind;
  }
}

/** Run a command of the table; its result, or a CallError saying why not. */
export async function call(command, args = {}) {
  const response = await fetch("/api/call", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Remora-Token": TOKEN },
    body: JSON.stringify({ command, arguments: args }),
    credentials: "same-origin",
  });
  let body;
  try {
    body = await response.json();
  } catch {
    throw new CallError(`${command}: HTTP ${response.status}`, "failed");
  }
  if (!response.ok || body.error) {
    const error = body.error || {};
    throw new CallError(error.message || `HTTP ${response.status}`, error.kind);
  }
  return body.result;
}

const RETRY_MS = 1000;

/** Follow the project's events after `since`, for as long as the page is
 * open. When the stream drops the browser reconnects after the last id it
 * saw; when the dashboard refuses the stream (the editor's server is gone,
 * 503) the browser gives up, so it is asked again here, every second, after
 * the last seq the page has — until the server is back. An event is handed
 * on once, in order: none lost, none twice.
 * `onState` hears "live" (with `resumed` true after a loss) and "lost". */
export function follow(since, onEvent, onState) {
  let last = since;
  let lost = false;
  const open = () => {
    const source = new EventSource(`/api/events?since=${encodeURIComponent(last)}`);
    source.onopen = () => {
      onState("live", lost);
      lost = false;
    };
    source.onerror = () => {
      lost = true;
      onState("lost");
      if (source.readyState === EventSource.CLOSED) setTimeout(open, RETRY_MS);
    };
    source.onmessage = (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      if (!(event.seq > last)) return; // had it already
      last = event.seq;
      onEvent(event);
    };
  };
  open();
}
