/**
 * Blame: which lines an agent wrote, from `remora.attribution {uri}` (ranges of
 * whole lines, end exclusive, still holding an accepted proposal's lines), as
 * the end-of-line annotation and the hover shown on them. Pure.
 */
export interface AttributedRange {
  range: { start: { line: number; character?: number }; end: { line: number; character?: number } };
  agent_id: string;
  proposal_id: string;
  accepted_at: number;
}

export interface BlameLines {
  /** First line (0-based). */
  start: number;
  /** Last line (0-based, inclusive). */
  end: number;
  agentId: string;
  proposalId: string;
  acceptedAt: number;
}

export function isAttributedRange(value: unknown): value is AttributedRange {
  const v = value as Partial<AttributedRange> | null;
  return (
    typeof v === "object" && v !== null && typeof v.agent_id === "string" && typeof v.proposal_id === "string" &&
    typeof v.range?.start?.line === "number" && typeof v.range?.end?.line === "number"
  );
}

/** The server's ranges as inclusive line spans (an end at column 0 ends on the line before). */
export function blameLines(ranges: readonly unknown[]): BlameLines[] {
  return ranges.filter(isAttributedRange).map((r) => {
    const endLine = r.range.end.line;
    const end = (r.range.end.character ?? 0) === 0 && endLine > r.range.start.line ? endLine - 1 : endLine;
    return { start: r.range.start.line, end, agentId: r.agent_id, proposalId: r.proposal_id, acceptedAt: r.accepted_at };
  });
}

/** "5 min ago", "3 h ago", "2 days ago". */
export function ago(seconds: number, nowSeconds: number): string {
  const delta = Math.max(0, nowSeconds - seconds);
  if (delta < 60) return "just now";
  if (delta < 3600) return `${Math.floor(delta / 60)} min ago`;
  if (delta < 86400) return `${Math.floor(delta / 3600)} h ago`;
  const days = Math.floor(delta / 86400);
  return `${days} day${days === 1 ? "" : "s"} ago`;
}

/** The end-of-line annotation on a span's first line. */
export function annotation(lines: BlameLines, nodeName: string | undefined, nowSeconds: number): string {
  return `${nodeName ?? lines.agentId}'s agent · ${lines.proposalId} · ${ago(lines.acceptedAt, nowSeconds)}`;
}

export const HISTORY_COMMAND = "remora.showHistory";
export const REVERT_COMMAND = "remora.revertProposal";

/** The hover on attributed lines: which node's agent, which proposal, when, its conversation, and a way back. */
export function hoverMarkdown(lines: BlameLines, nodeName: string | undefined, nowSeconds: number): string {
  const when = new Date(lines.acceptedAt * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  const link = `command:${HISTORY_COMMAND}?${encodeURIComponent(JSON.stringify([{ node_id: lines.agentId }]))}`;
  // A revert is a proposal to review: nothing is written by clicking it.
  const revert = `command:${REVERT_COMMAND}?${encodeURIComponent(JSON.stringify([{ proposal_id: lines.proposalId }]))}`;
  const who = nodeName ? `\`${nodeName}\`'s agent (\`${lines.agentId}\`)` : `agent \`${lines.agentId}\``;
  const span = lines.start === lines.end ? `Line ${lines.start + 1}` : `Lines ${lines.start + 1}–${lines.end + 1}`;
  return [
    `**Remora** · ${span} written by ${who}`,
    "",
    `Proposal \`${lines.proposalId}\`, accepted ${when} (${ago(lines.acceptedAt, nowSeconds)}).`,
    "",
    `[Show the conversation](${link}) · [Revert…](${revert})`,
  ].join("\n");
}
