/**
 * The Runs view's data, from `remora.runs.list` (RunRow): runs grouped as a
 * person reads them — waiting for you, running, queued, recent — each with its
 * trigger (and the subscription that fired it), outcome, duration and tokens
 * (as the server stored them). Pure.
 */
export interface RunRow {
  id: string | null;
  node: { id: string; name?: string | null; file_path?: string | null; line?: number | null };
  status: "queued" | "running" | "waiting" | "done" | "failed" | "cancelled" | "interrupted" | string;
  trigger?: {
    kind?: string;
    text?: string;
    message?: string;
    from?: { id?: string; name?: string | null };
    /** The node's subscription that fired the run. */
    subscription?: { id?: string; text?: string };
  };
  started_at?: number | null;
  ended_at?: number | null;
  queued_at?: number | null;
  outcome?: string | null;
  answered_by?: string | null;
  /** `limit_reached` when a token budget stopped the run. */
  reason?: string | null;
  /** What the run cost (not for a queued run). */
  usage?: { input_tokens?: number; output_tokens?: number; cached_tokens?: number; tokens?: number; requests?: number; seconds?: number };
}

export type GroupId = "waiting" | "running" | "queued" | "recent";

export interface RunGroup {
  id: GroupId;
  label: string;
  runs: RunRow[];
}

const GROUPS: { id: GroupId; label: string }[] = [
  { id: "waiting", label: "Waiting for you" },
  { id: "running", label: "Running" },
  { id: "queued", label: "Queued" },
  { id: "recent", label: "Recent" },
];

export const RECENT_SHOWN = 30;

export function groupOf(row: RunRow): GroupId {
  return row.status === "waiting" || row.status === "running" || row.status === "queued" ? row.status : "recent";
}

/** The non-empty groups, in the order a person acts on them. */
export function groupRuns(rows: readonly RunRow[]): RunGroup[] {
  return GROUPS.map((g) => ({ ...g, runs: rows.filter((r) => groupOf(r) === g.id).slice(0, g.id === "recent" ? RECENT_SHOWN : undefined) }))
    .filter((g) => g.runs.length > 0);
}

/** 850 ms, 12 s, 3 min 4 s, 2 h 5 min. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** How long a run took (or has taken so far, at `now` seconds). */
export function durationOf(row: RunRow, now: number): string {
  if (typeof row.started_at !== "number") return "";
  return formatDuration((typeof row.ended_at === "number" ? row.ended_at : now) - row.started_at);
}

function oneLine(text: string, limit: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
}

export function triggerText(row: RunRow): string {
  const t = row.trigger;
  if (!t) return "unknown trigger";
  if (t.kind === "person" && t.message) return `you: “${oneLine(t.message, 40)}”`;
  const text = t.text ?? t.kind ?? "unknown trigger";
  const fired = t.subscription?.text ?? t.subscription?.id;
  return fired ? `${text} [${fired}]` : text;
}

/** The tokens a run used, as the server stored them (undefined: queued). */
export function tokensOf(row: RunRow): number | undefined {
  return typeof row.usage?.tokens === "number" ? row.usage.tokens : undefined;
}

export function nodeName(row: RunRow): string {
  return row.node.name ?? row.node.id;
}

/** The item's description: trigger · outcome · duration · tokens. */
export function describeRun(row: RunRow, now: number): string {
  const parts = [triggerText(row)];
  const tokens = tokensOf(row);
  if (groupOf(row) === "recent") parts.push(row.reason === "limit_reached" ? "limit reached" : row.status === "done" ? "done" : row.status);
  const duration = durationOf(row, now);
  if (duration) parts.push(duration);
  if (tokens !== undefined) parts.push(`${tokens} tokens`);
  return parts.join(" · ");
}

export function runTooltip(row: RunRow, now: number): string {
  const lines = [`${nodeName(row)} — ${row.status}`, `run: ${row.id ?? "(queued, no id yet)"}`, `trigger: ${row.trigger?.text ?? "unknown"}`];
  if (row.trigger?.message) lines.push(`message: ${oneLine(row.trigger.message, 300)}`);
  const duration = durationOf(row, now);
  if (duration) lines.push(`duration: ${duration}`);
  const u = row.usage;
  lines.push(u ? `tokens: ${u.tokens ?? 0} (${u.input_tokens ?? 0} in, ${u.cached_tokens ?? 0} of them cached; ${u.output_tokens ?? 0} out; ${u.requests ?? 0} requests)` : "tokens: none yet");
  if (row.reason === "limit_reached") lines.push("stopped at a token budget (agents.max_tokens_per_*)");
  if (row.outcome) lines.push(`outcome: ${oneLine(row.outcome, 300)}`);
  if (row.answered_by) lines.push(`answered by run ${row.answered_by}`);
  return lines.join("\n");
}

const ICONS: Record<string, [string, string | undefined]> = {
  waiting: ["question", "charts.orange"],
  running: ["sync~spin", undefined],
  queued: ["clock", undefined],
  done: ["pass", "testing.iconPassed"],
  failed: ["error", "testing.iconFailed"],
  cancelled: ["circle-slash", "charts.yellow"],
  interrupted: ["debug-disconnect", "charts.yellow"],
};

/** A codicon and a theme colour id for the status. */
export function runIcon(row: RunRow): [string, string | undefined] {
  return ICONS[row.status] ?? ["circle-outline", undefined];
}

/** What the item's context menu may offer (`package.json` `when` clauses). */
export function runContext(row: RunRow): string {
  if (!row.id) return "run-queued-anonymous";
  // An interrupted run can be retried (`remora.agent.retry`): its own context.
  if (row.status === "interrupted") return "run-interrupted";
  return `run-${groupOf(row) === "recent" ? "ended" : row.status}`;
}
