/**
 * What the editor says of a way back: a revert (`remora.proposal.revert`, `remora.graph.revert`,
 * `remora.checkpoint.restore {files: true}`): the proposals made to review, and the
 * lines refused because they were edited after the accept. Pure, for the unit tests.
 */

export interface RefusedLike {
  proposal_id: string;
  path: string;
  first_line: number;
  last_line: number;
  reason: string;
}

export interface RevertedLike {
  proposal_ids: string[];
  reverted?: string[];
  refused?: RefusedLike[];
}

function lines(part: RefusedLike): string {
  return part.first_line === part.last_line ? `line ${part.first_line}` : `lines ${part.first_line}–${part.last_line}`;
}

/** The information message: what was proposed, and how to accept it. */
export function revertMessage(answer: RevertedLike, what: string): string {
  const ids = answer.proposal_ids;
  if (ids.length === 0) return `Remora: nothing of ${what} could be reverted.`;
  const files = ids.length === 1 ? "a revert proposal" : `${ids.length} revert proposals (one per file, accept them together)`;
  return `Remora: ${files} for ${what}: ${ids.join(", ")}. Review, then accept; nothing is written until you do.`;
}

/** The warning naming each refused part, or undefined when none was. */
export function refusedMessage(answer: RevertedLike): string | undefined {
  const refused = answer.refused ?? [];
  if (refused.length === 0) return undefined;
  const parts = refused.map((part) => `${part.path} ${lines(part)} (${part.proposal_id})`);
  return `Remora: left as they are, edited after the accept — revert by hand: ${parts.join("; ")}.`;
}

/** The restore's words about files proposed back (`files: true`). */
export function filesProposedMessage(answer: { proposal_ids?: string[]; not_restored?: { path: string; reason: string }[] }): string | undefined {
  const ids = answer.proposal_ids;
  if (ids === undefined) return undefined;
  const skipped = (answer.not_restored ?? []).map((s) => `${s.path} (${s.reason})`);
  const made = ids.length === 0 ? "No file needs proposing back." : `${ids.length} proposal${ids.length === 1 ? "" : "s"} put files back as they were: ${ids.join(", ")}; review, then accept.`;
  return skipped.length === 0 ? made : `${made} Not restored: ${skipped.join(", ")}.`;
}

/** The offer to go on with a graph run a restart interrupted (its `graph_completed`), or undefined. */
export function interruptedOffer(event: { type: string; [key: string]: unknown }): string | undefined {
  if (event.type !== "graph_completed" || event.outcome !== "interrupted" || typeof event.graph_run_id !== "string") return undefined;
  const finished = Array.isArray(event.finished_nodes) ? event.finished_nodes.length : 0;
  const done = finished === 0 ? "no node had finished" : `${finished} node${finished === 1 ? " had" : "s had"} finished`;
  return `Remora: graph run ${event.graph_run_id} was interrupted by a restart (${done}). Resume it? Finished steps are not run again.`;
}
