/**
 * What Show Trust prints: per workspace folder, whether its repository is
 * trusted and who decided, what it wants that needs trust and where the API
 * key may go (`remora.trust.get` / `remora.trust.revoke`'s rows).
 */

/** One row of `remora.trust.get`. */
export interface TrustRow {
  root: string;
  trusted: boolean;
  decided_by: string;
  wants: string;
  hosts: Record<string, boolean>;
}

const WHO: Record<string, string> = {
  client: "VS Code's workspace trust",
  person: "your remembered answer",
  session: "your answer in this session",
  undecided: "nobody has answered: untrusted",
};

/** The lines shown for the rows. */
export function trustLines(rows: TrustRow[]): string[] {
  return rows.flatMap((row) => [
    `Remora trust: ${row.root}: ${row.trusted ? "trusted" : "not trusted"} (${WHO[row.decided_by] ?? row.decided_by})`,
    ...(row.wants ? [`  it wants to ${row.wants}`] : []),
    ...Object.keys(row.hosts ?? {})
      .sort()
      .map((host) => `  ${host} ${row.hosts[host] ? "may receive" : "may not receive"} your API key`),
  ]);
}

/** Whether there is an answer of the person's to forget (key hosts; trust VS Code does not manage). */
export function hasAnswers(rows: TrustRow[]): boolean {
  return rows.some((row) => row.decided_by === "person" || Object.keys(row.hosts ?? {}).length > 0);
}
