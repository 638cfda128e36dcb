/**
 * Content of the read-only `remora-proposal:` documents the diff editor shows:
 * `remora-proposal:/<proposal_id>/<side>/<file name>` where side is `current` or
 * `proposed`. Pure.
 */
export const SCHEME = "remora-proposal";

export type Side = "current" | "proposed";

export interface DiffAnswer {
  diff?: string;
  old_source?: string;
  new_source?: string;
  status?: string;
}

export function proposalPath(proposalId: string, side: Side, fileName: string): string {
  return `/${encodeURIComponent(proposalId)}/${side}/${encodeURIComponent(fileName || "node.py")}`;
}

export function parseProposalPath(uriPath: string): { proposalId: string; side: Side } | undefined {
  const match = /^\/([^/]+)\/(current|proposed)\//.exec(uriPath);
  if (!match) return undefined;
  return { proposalId: decodeURIComponent(match[1]!), side: match[2] as Side };
}

export function sideContent(answer: DiffAnswer, side: Side): string {
  const text = side === "current" ? answer.old_source : answer.new_source;
  if (typeof text === "string") return text;
  return `# Remora: this proposal has no ${side} source (status: ${answer.status ?? "unknown"})\n`;
}

export function diffTitle(proposalId: string, status: string | undefined): string {
  return `Remora proposal ${proposalId}${status && status !== "pending" ? ` (${status})` : ""}: current ↔ proposed`;
}
