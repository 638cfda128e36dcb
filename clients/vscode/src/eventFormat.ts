/**
 * One readable line per `remora/event` (the Remora output channel), and the
 * run bookkeeping the status bar shows. Pure.
 *
 * Every event type of `core/remora_core/events/models.py` has its own sentence
 * (a unit test reads that file and checks none is missing); an unknown type
 * (a newer server) still gets a line: its type and its usual fields.
 */
export interface RemoraEvent {
  type: string;
  seq?: number;
  id?: string;
  node_id?: string;
  run_id?: string | null;
  proposal_id?: string;
  agent_id?: string | null;
  /** Seconds since the epoch (older servers sent an ISO string). */
  timestamp?: number | string;
  [key: string]: unknown;
}

const SHOWN_FIELDS = ["node_id", "run_id", "proposal_id", "question_id", "summary", "reason", "error", "message", "result", "feedback"];

export function short(value: unknown, limit = 120): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const oneLine = (text ?? "").replace(/\s+/g, " ").trim();
  return oneLine.length > limit ? `${oneLine.slice(0, limit - 1)}…` : oneLine;
}

export function isRemoraEvent(value: unknown): value is RemoraEvent {
  return typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
}

function s(event: RemoraEvent, key: string): string {
  const value = event[key];
  return typeof value === "string" ? value : value === undefined || value === null ? "" : String(value);
}

function list(value: unknown): string[] {
  return Array.isArray(value) ? value.map((v) => String(v)) : [];
}

function quoted(value: unknown, limit = 120): string {
  return `“${short(value, limit)}”`;
}

/** Who an event is about: its agent, else its node. */
function who(event: RemoraEvent): string {
  return s(event, "agent_id") || s(event, "node_id") || "an agent";
}

/** " and N others" when one refusal names several agents (a cascade's budget). */
function others(event: RemoraEvent): string {
  const ids = Array.isArray(event.agent_ids) ? event.agent_ids.length : 0;
  return ids > 1 ? ` and ${plural(ids - 1, "other")}` : "";
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** A check (`{name, ok, status, detail}`) in a few words. */
export function checkText(check: unknown): string {
  if (typeof check !== "object" || check === null) return short(check, 60);
  const c = check as { name?: unknown; ok?: unknown; status?: unknown; detail?: unknown };
  const verdict = c.ok === true ? "passed" : c.ok === false ? "failed" : typeof c.status === "string" && c.status ? c.status.replace(/_/g, " ") : "not decided";
  const detail = typeof c.detail === "string" && c.detail ? `: ${short(c.detail, 80)}` : "";
  return `${typeof c.name === "string" ? c.name : "check"} ${verdict}${detail}`;
}

/** Token counts of a `model_response` (`usage: {input_tokens, output_tokens}`). */
export function usageOf(event: RemoraEvent): { input: number; output: number } {
  const usage = event.usage;
  if (event.type !== "model_response" || typeof usage !== "object" || usage === null) return { input: 0, output: 0 };
  const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);
  const u = usage as Record<string, unknown>;
  return { input: num(u.input_tokens), output: num(u.output_tokens) };
}

/** A tool call's arguments as `name: value, …` (values cut short). */
function argumentsText(args: unknown): string {
  if (typeof args !== "object" || args === null) return "";
  return short(Object.entries(args).map(([k, v]) => `${k}: ${short(v, 40)}`).join(", "), 100);
}

type Describe = (event: RemoraEvent) => string;

/** The sentence of each event type (the taxonomy of `events/models.py`). */
export const DESCRIBE: Readonly<Record<string, Describe>> = {
  content_changed: (e) => `${s(e, "path")} ${s(e, "change") || "modified"} (${plural(list(e.node_ids).length, "node")})`,
  topology_changed: (e) => {
    const parts = [["added", "+"], ["removed", "−"], ["orphaned", "orphaned "]]
      .map(([key, mark]) => [list(e[key!]).length, mark] as const)
      .filter(([n]) => n > 0)
      .map(([n, mark]) => `${mark}${n}`);
    return `${s(e, "path")}: nodes ${parts.length > 0 ? parts.join(" ") : "unchanged"}`;
  },
  human_chat: (e) => `you → ${s(e, "to_agent")}: ${quoted(e.message)}`,
  agent_message: (e) => {
    const tags = list(e.tags);
    const what = e.reply_to ? "reply" : tags.includes("request") ? "request" : "message";
    return `${s(e, "from_name") || s(e, "from_agent")} → ${s(e, "to_name") || s(e, "to_agent")} (${what}): ${quoted(e.message)}`;
  },
  agent_started: (e) => `${who(e)} started${list(e.trigger_ids).length > 0 ? ` (on ${plural(list(e.trigger_ids).length, "event")})` : ""}`,
  agent_completed: (e) => `${who(e)} answered: ${quoted(e.result)}${e.answered_by ? ` (with run ${s(e, "answered_by")})` : ""}`,
  agent_failed: (e) => `${who(e)} failed: ${short(e.error)}`,
  agent_cancelled: (e) => `${who(e)} cancelled${e.reason ? `: ${short(e.reason)}` : ""}`,
  agent_blocked: (e) => `${who(e)} asks you: ${quoted(e.question)}${list(e.options).length > 0 ? ` [${list(e.options).join(" | ")}]` : ""}`,
  agent_resumed: (e) => {
    const outcome = s(e, "outcome") || "answered";
    return outcome === "answered" ? `${who(e)} got your answer: ${quoted(e.answer)}` : `${who(e)} resumed: the question ${outcome.replace("_", " ")}`;
  },
  model_request: (e) => {
    const attempt = typeof e.attempt === "number" && e.attempt > 1 ? ` (attempt ${e.attempt}${e.retry_reason ? `: ${short(e.retry_reason, 80)}` : ""})` : "";
    return `${who(e)} asks the model${e.model ? ` ${s(e, "model")}` : ""}${attempt}`;
  },
  model_response: (e) => {
    const { input, output } = usageOf(e);
    return `${who(e)}: the model answered (${input} in / ${output} out tokens${e.finish_reason ? `, ${s(e, "finish_reason")}` : ""})`;
  },
  tool_called: (e) => `${who(e)} calls ${s(e, "tool")}(${argumentsText(e.arguments)})`,
  tool_result: (e) => `${who(e)}: ${s(e, "tool")} ${e.ok === false ? "failed" : "ok"}${e.summary ? `: ${short(e.summary)}` : ""}`,
  rewrite_proposed: (e) => {
    const checks = Array.isArray(e.checks) && e.checks.length > 0 ? ` — ${e.checks.map(checkText).join("; ")}` : "";
    return `${s(e, "node_id")} proposes ${s(e, "proposal_id")}${checks}`;
  },
  rewrite_applied: (e) => `${s(e, "proposal_id")} accepted: in ${s(e, "node_id")}`,
  rewrite_rejected: (e) =>
    `${Array.isArray(e.members) && e.members.length > 0 ? `${e.members.length === 1 ? "a member" : `${e.members.length} members`} of ` : ""}${s(e, "proposal_id")} rejected by ${e.by === "tests" ? "the tests" : "you"}${e.feedback ? `: ${quoted(e.feedback)}` : ""}`,
  rewrite_stale: (e) => `${s(e, "proposal_id")} went stale${e.reason ? `: ${short(e.reason)}` : ""}`,
  rewrite_not_applied: (e) => `${s(e, "proposal_id")} was not applied (still pending)${e.reason ? `: ${short(e.reason)}` : ""}`,
  proposal_checked: (e) => `${s(e, "proposal_id")}: ${checkText(e.check)}`,
  checkpoint_created: (e) => `checkpoint ${s(e, "checkpoint_id")} created`,
  checkpoint_restored: (e) => `checkpoint ${s(e, "checkpoint_id")} restored`,
  graph_started: (e) => `graph ${s(e, "name")} started (${s(e, "graph_run_id")}): ${plural(list(e.steps).length, "step")} on ${plural(Number(e.node_count) || 0, "node")}`,
  graph_step_finished: (e) => `graph ${s(e, "graph_run_id")}: step ${s(e, "step")} on ${s(e, "node_id")} ${s(e, "outcome")}${e.detail ? `: ${short(e.detail, 80)}` : ""}`,
  graph_completed: (e) => {
    const counts = typeof e.counts === "object" && e.counts !== null ? Object.entries(e.counts).map(([k, v]) => `${String(v)} ${k}`).join(", ") : "";
    return `graph ${s(e, "graph_run_id")} ${s(e, "outcome")}${counts ? ` (${counts})` : ""}`;
  },
  trigger_refused: (e) => `${who(e)}${others(e)} not started (${s(e, "rule").replace("_", " ")}): ${short(e.reason)}`,
  limit_reached: (e) => `${who(e)} reached ${s(e, "limit")}: ${short(e.reason)}`,
  run_interrupted: (e) => `${who(e)}: run interrupted (the server stopped during it)`,
};

/** The event's sentence, without time and seq. */
export function describeEvent(event: RemoraEvent): string {
  const describe = DESCRIBE[event.type];
  if (describe) return describe(event);
  const parts = [event.type];
  for (const key of SHOWN_FIELDS) {
    const value = event[key];
    if (value !== undefined && value !== null && value !== "") parts.push(`${key}=${short(value)}`);
  }
  return parts.join(" ");
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** HH:MM:SS of an event's timestamp (local time; "" when there is none). */
export function timeOf(timestamp: unknown): string {
  if (typeof timestamp === "number" && Number.isFinite(timestamp)) {
    const d = new Date(timestamp * 1000);
    return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }
  if (typeof timestamp === "string") return timestamp.replace(/^.*T/, "").replace(/\..*$|Z$|[+-]\d\d:\d\d$/, "");
  return "";
}

export function formatEvent(event: RemoraEvent): string {
  const run = event.run_id && DESCRIBE[event.type] ? ` [${event.run_id}]` : "";
  return [timeOf(event.timestamp), `#${event.seq ?? "-"}`, `${describeEvent(event)}${run}`].filter((p) => p !== "").join(" ");
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
      const nodeId = typeof event.agent_id === "string" ? event.agent_id : typeof event.node_id === "string" ? event.node_id : "";
      this.runs.set(runId, nodeId);
      return true;
    }
    if (RUN_END.has(event.type)) return this.runs.delete(runId);
    return false;
  }

  /** Forget every run (the server restarted: whatever ran ended with it). */
  clear(): void {
    this.runs.clear();
  }

  inFlight(): { runId: string; nodeId: string }[] {
    return [...this.runs].map(([runId, nodeId]) => ({ runId, nodeId }));
  }
}
