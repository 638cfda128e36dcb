/**
 * One readable line per `remora/event` (the Remora output channel), and the
 * run bookkeeping the status bar shows. Pure.
 */
export interface RemoraEvent {
  type: string;
  seq?: number;
  node_id?: string;
  run_id?: string;
  proposal_id?: string;
  timestamp?: string;
  [key: string]: unknown;
}

const SHOWN_FIELDS = ["node_id", "run_id", "proposal_id", "question_id", "summary", "reason", "error", "message", "feedback"];

function short(value: unknown, limit = 120): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const oneLine = (text ?? "").replace(/\s+/g, " ").trim();
  return oneLine.length > limit ? `${oneLine.slice(0, limit - 1)}…` : oneLine;
}

export function isRemoraEvent(value: unknown): value is RemoraEvent {
  return typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
}

export function formatEvent(event: RemoraEvent): string {
  const time = typeof event.timestamp === "string" ? event.timestamp.replace(/^.*T/, "").replace(/\..*$|Z$|[+-]\d\d:\d\d$/, "") : "";
  const parts = [time, `#${event.seq ?? "-"}`, event.type];
  for (const key of SHOWN_FIELDS) {
    const value = event[key];
    if (value !== undefined && value !== null && value !== "") {
      parts.push(`${key}=${short(value)}`);
    }
  }
  return parts.filter((p) => p !== "").join(" ");
}

const RUN_END = new Set(["agent_completed", "agent_failed", "agent_cancelled", "run_interrupted"]);

/** Runs in flight, known from the event stream. */
export class RunTracker {
  private readonly runs = new Map<string, string>();

  /** Returns true if the set of runs in flight changed. */
  update(event: RemoraEvent): boolean {
    const runId = typeof event.run_id === "string" ? event.run_id : undefined;
    if (runId === undefined) return false;
    if (event.type === "agent_started" || event.type === "agent_resumed") {
      this.runs.set(runId, typeof event.node_id === "string" ? event.node_id : "");
      return true;
    }
    if (RUN_END.has(event.type)) return this.runs.delete(runId);
    return false;
  }

  inFlight(): { runId: string; nodeId: string }[] {
    return [...this.runs].map(([runId, nodeId]) => ({ runId, nodeId }));
  }
}

export function statusText(runs: number, pending: number): string {
  return `$(hubot) Remora ${runs > 0 ? `$(sync~spin) ${runs}` : "$(check) 0"} · ${pending} pending`;
}
