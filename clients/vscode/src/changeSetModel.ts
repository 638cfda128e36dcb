/**
 * New files and change sets as the Proposals view shows them (DESIGN §15):
 * a `change_set` is one item, "Change set: add currency (2 definitions in 2
 * files, 1 new file)", whose children are its members — each its file, the
 * definition it rewrites or adds, its +/- lines, "new file" for a file it
 * creates and which other members it needs (`depends_on`). A `new_file`
 * proposal is "create tests/test_x.py (+24)". Pure.
 */
import { diffCounts } from "./proposalsModel";

export interface MemberLike {
  path?: string;
  kind?: string;
  node_id?: string | null;
  start_byte?: number;
  old_source?: string;
  new_source?: string;
  diff?: string;
}

export interface SetLike {
  id: string;
  kind?: string;
  summary?: string;
  reasoning?: string;
  file_path?: string;
  diff?: string;
  members?: MemberLike[];
  depends_on?: unknown;
}

export function isChangeSet(proposal: { kind?: string }): boolean {
  return proposal.kind === "change_set";
}

export function isNewFile(proposal: { kind?: string }): boolean {
  return proposal.kind === "new_file";
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** "4 definitions in 3 files, 1 new file" (as the server words it). */
export function memberCounts(members: readonly MemberLike[]): string {
  const definitions = members.filter((m) => m.kind !== "new_file");
  const files = new Set(definitions.map((m) => m.path));
  const created = members.length - definitions.length;
  const said: string[] = [];
  if (definitions.length > 0) said.push(`${count(definitions.length, "definition")} in ${count(files.size, "file")}`);
  if (created > 0) said.push(count(created, "new file"));
  return said.join(", ");
}

/** What the set does, in the agent's words (its first line). */
export function setSummary(set: SetLike): string {
  const text = (set.summary ?? set.reasoning ?? "").trim();
  return text.split("\n")[0] ?? "";
}

/** "Change set: add currency (2 definitions in 2 files, 1 new file)". */
export function setTitle(set: SetLike): string {
  const summary = setSummary(set);
  const counts = memberCounts(set.members ?? []);
  return `Change set${summary ? `: ${summary}` : ""}${counts ? ` (${counts})` : ""}`;
}

/** "create tests/test_x.py (+24)". */
export function newFileTitle(proposal: SetLike): string {
  const { added } = diffCounts(proposal.diff);
  return `create ${proposal.file_path ?? "?"} (+${added})`;
}

/** The definition a member's source starts with ("order"), if any. */
export function definedName(source: string | undefined): string | undefined {
  const found = /^(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)/m.exec(source ?? "");
  return found?.[1];
}

/** A member's label: its file, and the definition it rewrites or adds. */
export function memberLabel(member: MemberLike): string {
  const path = member.path ?? "?";
  if (member.kind === "new_file") return path;
  const name = definedName(member.new_source);
  return name ? `${path} · ${name}` : path;
}

/** The pairs `[i, j]` (member i needs member j) the server sent. */
export function dependencies(set: SetLike): [number, number][] {
  if (!Array.isArray(set.depends_on)) return [];
  return set.depends_on.filter(
    (pair): pair is [number, number] => Array.isArray(pair) && pair.length === 2 && pair.every((n) => Number.isInteger(n)),
  );
}

/** The members member `index` needs, numbered from 1 as the view shows them. */
export function needs(set: SetLike, index: number): number[] {
  return dependencies(set)
    .filter(([i]) => i === index)
    .map(([, j]) => j + 1)
    .sort((a, b) => a - b);
}

/** A member's description: "new file · +5", "+2 −1 · needs 2, 3". */
export function memberDescription(set: SetLike, index: number): string {
  const member = (set.members ?? [])[index] ?? {};
  const { added, removed } = diffCounts(member.diff);
  const size = member.kind === "new_file" ? `new file · +${added}` : `${member.kind === "new_node" ? "new definition · " : ""}+${added} −${removed}`;
  const needed = needs(set, index);
  return needed.length > 0 ? `${size} · needs ${needed.join(", ")}` : size;
}

/** The members accepting only `chosen` would leave out although one of them needs it. */
export function missingFor(set: SetLike, chosen: readonly number[]): string[] {
  const kept = new Set(chosen);
  return dependencies(set)
    .filter(([i, j]) => kept.has(i) && !kept.has(j))
    .map(([i, j]) => `${i + 1}. ${memberLabel((set.members ?? [])[i] ?? {})} needs ${j + 1}. ${memberLabel((set.members ?? [])[j] ?? {})}`);
}

/** The set's tooltip: id, what each member needs, how to act on it. */
export function setTooltip(set: SetLike): string {
  const pairs = dependencies(set);
  const lines = [`\`${set.id}\` · ${setSummary(set) || "no summary"}`];
  if (pairs.length > 0) {
    lines.push("", "Members that depend on each other (accept them together):");
    for (const [i, j] of pairs) lines.push(`- ${i + 1}. ${memberLabel((set.members ?? [])[i] ?? {})} needs ${j + 1}. ${memberLabel((set.members ?? [])[j] ?? {})}`);
  } else {
    lines.push("", "Its members do not depend on each other: any of them can be accepted alone.");
  }
  return lines.join("\n");
}
