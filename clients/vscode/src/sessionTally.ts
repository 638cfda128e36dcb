/**
 * What the status bar counts: runs in flight, the project's pending proposals
 * (read from the server) and the tokens agents used today as the server stored
 * them (`remora.usage` since local midnight: each run's tokens as the model
 * reported them). The extension reads the totals again shortly after an event
 * that may change them (:meth:`UsageTally.changes`). Pure.
 */
import { RemoraEvent } from "./eventFormat";

/** Events after which the stored totals may have grown. */
const CHANGING = new Set(["model_response", "agent_completed", "agent_failed", "agent_cancelled"]);

export interface StoredTotals {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cached_tokens?: unknown;
}

const count = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0);

export class SessionTally {
  inputTokens = 0;
  outputTokens = 0;
  cachedTokens = 0;

  /** Whether the stored totals may have changed after `event` (read them again). */
  changes(event: RemoraEvent): boolean {
    return CHANGING.has(event.type);
  }

  /** Take the server's totals (`remora.usage`'s `total`); true if they changed. */
  set(total: StoredTotals | undefined): boolean {
    if (!total) return false;
    const next = [count(total.input_tokens), count(total.output_tokens), count(total.cached_tokens)];
    const changed = next[0] !== this.inputTokens || next[1] !== this.outputTokens || next[2] !== this.cachedTokens;
    [this.inputTokens, this.outputTokens, this.cachedTokens] = next as [number, number, number];
    return changed;
  }

  get tokens(): number {
    return this.inputTokens + this.outputTokens;
  }
}

/** 1234 → "1.2k", 2_500_000 → "2.5M". */
export function compactNumber(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function statusText(runs: number, pending: number, tokens: number): string {
  return `$(hubot) Remora ${runs > 0 ? `$(sync~spin) ${runs}` : "$(check) 0"} · ${pending} pending · ${compactNumber(tokens)} tokens today`;
}

export function statusTooltip(runs: number, pending: number, tally: SessionTally): string {
  return [
    `Remora: ${runs} run${runs === 1 ? "" : "s"} in flight`,
    `${pending} pending proposal${pending === 1 ? "" : "s"} in the project`,
    `model tokens today: ${tally.inputTokens} in (${tally.cachedTokens} cached), ${tally.outputTokens} out`,
    "(click: the runs; Remora: Show Usage for more)",
  ].join("\n");
}
