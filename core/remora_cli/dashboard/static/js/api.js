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

/** Follow the project's events after `since` (the browser resumes after the
 * last id it saw when the connection drops). `onState` hears "live" / "lost". */
export function follow(since, onEvent, onState) {
  const source = new EventSource(`/api/events?since=${encodeURIComponent(since)}`);
  source.onopen = () => onState("live");
  source.onerror = () => onState("lost");
  source.onmessage = (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    onEvent(event);
  };
  return source;
}
