/**
 * Content of the read-only `remora-proposal:` documents the diff editor shows:
 * `remora-proposal:/<proposal_id>/<side>/<file path>?indent=<n>` where side is
 * `current` or `proposed`. The path ends in the proposal's real file (so the tab
 * names it and VS Code picks its language), and `indent` is the column the
 * definition starts at in that file: a proposal's source starts at its `def`
 * (or decorator), so its first line is stored without the indentation its body
 * keeps; the diff puts it back. A change set's member adds `member=<i>` to the
 * query: the sides are that member's (a new file's current side is empty). Pure.
 */
export const SCHEME = "remora-proposal";

export type Side = "current" | "proposed";

export interface DiffAnswer extends ProposalPlace {
  diff?: string;
  old_source?: string;
  new_source?: string;
  status?: string;
  checks?: unknown[];
  kind?: string;
  summary?: string;
  members?: { index?: number; path?: string; kind?: string; old_source?: string; new_source?: string; diff?: string }[];
  depends_on?: unknown;
}

/** Where a proposal is, as `remora.proposal.diff` and `remora.proposals.list` say. */
export interface ProposalPlace {
  id?: string;
  file_path?: string;
  uri?: string;
  start_byte?: number;
}

/** The URI path of one side: the file's project path, each segment encoded. */
export function proposalPath(proposalId: string, side: Side, filePath: string): string {
  const segments = (filePath || "proposal.py").split("/").filter((s) => s !== "" && s !== "." && s !== "..");
  const file = segments.length > 0 ? segments.map(encodeURIComponent).join("/") : "proposal.py";
  return `/${encodeURIComponent(proposalId)}/${side}/${file}`;
}

export function parseProposalPath(uriPath: string): { proposalId: string; side: Side; filePath: string } | undefined {
  const match = /^\/([^/]+)\/(current|proposed)\/(.+)$/.exec(uriPath);
  if (!match) return undefined;
  const filePath = match[3]!.split("/").map(decodeURIComponent).join("/");
  return { proposalId: decodeURIComponent(match[1]!), side: match[2] as Side, filePath };
}

/** The query carrying the definition's indentation (spaces and tabs, as in the file). */
export function indentQuery(indent: string): string {
  return indent === "" ? "" : `indent=${encodeURIComponent(indent)}`;
}

/** The query naming a change set's member (and its indentation). */
export function memberQuery(member: number, indent: string): string {
  const rest = indentQuery(indent);
  return `member=${member}${rest ? `&${rest}` : ""}`;
}

/** The member a query names, if any. */
export function parseMemberQuery(query: string): number | undefined {
  const match = /(?:^|&)member=(\d+)(?:&|$)/.exec(query);
  return match ? Number(match[1]) : undefined;
}

/**
 * The indentation of the line `source` starts on in `text` (where a rewritten
 * definition is now: its exact old text), or "" when it is not there.
 */
export function indentationOf(text: string, source: string | undefined): string {
  if (!source) return "";
  const at = text.indexOf(source);
  if (at < 0) return "";
  const lineStart = text.lastIndexOf("\n", at - 1) + 1;
  const prefix = text.slice(lineStart, at);
  return /^[ \t]*$/.test(prefix) ? prefix : "";
}

export function parseIndentQuery(query: string): string {
  const match = /(?:^|&)indent=([^&]*)/.exec(query);
  const indent = match ? decodeURIComponent(match[1]!) : "";
  return /^[ \t]*$/.test(indent) ? indent : "";
}

/**
 * The indentation of the line on which byte `startByte` (UTF-8, as the server
 * counts) of `text` starts: what precedes it on its line when that is blank,
 * else "" (the text changed since, or the definition does not start a line).
 */
export function indentationAt(text: string, startByte: number): string {
  const bytes = new TextEncoder().encode(text);
  if (!Number.isInteger(startByte) || startByte < 0 || startByte > bytes.length) return "";
  const before = new TextDecoder().decode(bytes.subarray(0, startByte));
  const lineStart = before.lastIndexOf("\n") + 1;
  const prefix = before.slice(lineStart);
  return /^[ \t]*$/.test(prefix) ? prefix : "";
}

/** `source` with its first line at `indent`, as the file holds it. */
export function atTrueIndentation(source: string, indent: string): string {
  if (indent === "" || source === "" || source.startsWith(indent)) return source;
  return `${indent}${source}`;
}

export function sideContent(answer: DiffAnswer, side: Side, indent = "", member?: number): string {
  const shown = member === undefined ? answer : answer.members?.[member];
  if (shown === undefined) return `# Remora: this proposal has no member ${member === undefined ? "" : member + 1}\n`;
  const text = side === "current" ? shown.old_source : shown.new_source;
  if (typeof text === "string") return atTrueIndentation(text, indent);
  return `# Remora: this proposal has no ${side} source (status: ${answer.status ?? "unknown"})\n`;
}

export function diffTitle(proposalId: string, status: string | undefined, filePath = ""): string {
  const file = filePath.split("/").pop() ?? "";
  const where = file !== "" ? `${file}: ` : "";
  return `${where}Remora proposal ${proposalId}${status && status !== "pending" ? ` (${status})` : ""}: current ↔ proposed`;
}

/** The title of a member's diff: "2/3 models.py: change set pr_…: current ↔ proposed". */
export function memberDiffTitle(proposalId: string, member: number, count: number, filePath: string, kind: string | undefined): string {
  const file = filePath.split("/").pop() ?? filePath;
  const side = kind === "new_file" ? "(new file) ↔ proposed" : "current ↔ proposed";
  return `${member + 1}/${count} ${file}: change set ${proposalId}: ${side}`;
}
