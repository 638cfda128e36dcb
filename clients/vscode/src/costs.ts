/**
 * What agents cost and why they wake, as text a person reads: the
 * `remora.usage` report and a node's subscriptions (`remora.subscriptions.list`)
 * as lines of the Remora Events output. Pure.
 */
import { formatDuration } from "./runsModel";
import { compactNumber } from "./sessionTally";

export interface Usage {
  runs?: number;
  input_tokens?: number;
  output_tokens?: number;
  cached_tokens?: number;
  tokens?: number;
  requests?: number;
  seconds?: number;
}

export interface UsageRow extends Usage {
  key: string;
  name?: string | null;
}

export interface UsageReport {
  since?: number | null;
  total?: Usage;
  by_node?: UsageRow[];
  by_graph?: UsageRow[];
  by_cascade?: UsageRow[];
  by_day?: UsageRow[];
}

export interface Subscription {
  id: string;
  default?: boolean;
  text?: string;
  fired?: number;
  matched?: { run_id?: string; event_type?: string | null; at?: number }[];
}

export interface NodeSubscriptions {
  node_id: string;
  muted?: boolean;
  subscriptions?: Subscription[];
}

const num = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) ? n : 0);

/** "1.2k tokens · 4 s" (the time left out when none was measured). */
export function costText(usage: Usage | undefined): string {
  if (!usage) return "";
  const time = formatDuration(num(usage.seconds));
  return `${compactNumber(num(usage.tokens))} tokens${num(usage.seconds) > 0 ? ` · ${time}` : ""}`;
}

function rowLine(label: string, usage: Usage): string {
  return `  ${label} — ${num(usage.runs)} runs, ${num(usage.tokens)} tokens (${num(usage.input_tokens)} in, ${num(usage.output_tokens)} out, ${num(usage.cached_tokens)} cached), ${formatDuration(num(usage.seconds))}`;
}

/** The report as lines: the total, then by day, node, graph run and cascade. */
export function usageLines(report: UsageReport): string[] {
  const since = typeof report.since === "number" ? ` since ${new Date(report.since * 1000).toISOString().slice(0, 16).replace("T", " ")}` : "";
  const lines = [`── what agents used${since} ──`, rowLine("in all", report.total ?? {})];
  const groups: [string, UsageRow[] | undefined][] = [["by day", report.by_day], ["by node", report.by_node], ["by graph run", report.by_graph], ["by cascade", report.by_cascade]];
  for (const [title, rows] of groups) {
    if (!rows || rows.length === 0) continue;
    lines.push(title);
    for (const row of rows) lines.push(rowLine(row.name ? `${row.name} (${row.key})` : row.key, row));
  }
  return lines;
}

/** What wakes a node, in one line ("muted · messages to it; …"). */
export function wakesText(found: Pick<NodeSubscriptions, "muted" | "subscriptions">): string {
  const texts = (found.subscriptions ?? []).map((s) => s.text ?? s.id).join("; ");
  return found.muted ? `muted (only your messages) · ${texts}` : texts;
}

/** A node's subscriptions as lines: each with what it fired lately. */
export function subscriptionLines(found: NodeSubscriptions, name: string): string[] {
  const lines = [`── what wakes ${name} (${found.node_id})${found.muted ? ": muted, only your messages" : ""} ──`];
  for (const s of found.subscriptions ?? []) {
    const last = s.matched?.[0];
    const fired = num(s.fired) > 0 ? `fired ${num(s.fired)} runs, last ${last?.run_id ?? "?"} (${last?.event_type ?? "?"})` : "fired no run lately";
    lines.push(`  ${s.id} [${s.default ? "default" : "own"}] ${s.text ?? ""} — ${fired}`);
  }
  return lines;
}
