/**
 * What the status bar counts, from the event stream: runs in flight, the
 * project's pending proposals (read from the server) and the tokens the
 * session's model calls used (the sum of every `model_response`'s `usage`;
 * no other event carries tokens). Pure.
 */
import { RemoraEvent, usageOf } from "./eventFormat";

export class SessionTally {
  inputTokens = 0;
  outputTokens = 0;
  /** Tokens per run id, for the runs view (runs seen in this session only). */
  private readonly byRun = new Map<string, number>();

  /** Count an event; true if a total changed. */
  update(event: RemoraEvent): boolean {
    const { input, output } = usageOf(event);
    if (input + output === 0) return false;
    this.inputTokens += input;
    this.outputTokens += output;
    if (typeof event.run_id === "string") this.byRun.set(event.run_id, (this.byRun.get(event.run_id) ?? 0) + input + output);
    return true;
  }

  get tokens(): number {
    return this.inputTokens + this.outputTokens;
  }

  /** Tokens a run used, if this session saw its model calls. */
  tokensOf(runId: string | null | undefined): number | undefined {
    return runId ? this.byRun.get(runId) : undefined;
  }
}

/** 1234 → "1.2k", 2_500_000 → "2.5M". */
export function compactNumber(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function statusText(runs: number, pending: number, tokens: number): string {
  return `$(hubot) Remora ${runs > 0 ? `$(sync~spin) ${runs}` : "$(check) 0"} · ${pending} pending · ${compactNumber(tokens)} tokens`;
}

export function statusTooltip(runs: number, pending: number, tally: SessionTally): string {
  return [
    `Remora: ${runs} run${runs === 1 ? "" : "s"} in flight`,
    `${pending} pending proposal${pending === 1 ? "" : "s"} in the project`,
    `this session's model tokens: ${tally.inputTokens} in, ${tally.outputTokens} out`,
    "(click: the runs)",
  ].join("\n");
}
