/**
 * The extension's settings, and which of them come from whom.
 *
 * A repository can ship `.vscode/settings.json` (or a `.code-workspace` file),
 * so a workspace-level value is the repository's, not the person's. The
 * settings that choose what runs or where requests and the key go —
 * `remora.server.path`, `remora.server.args`, and the `model` section of
 * `remora.initializationOptions` — are read from the person's user settings
 * only (their `globalValue`): a workspace value for them is ignored and
 * reported. The rest of a workspace's `remora.initializationOptions` is the
 * repository's and gets a repository's rights (docs/security.md): below the
 * person's own values (which win key by key), no `workspaceTrust`, and
 * `limits` only where they tighten a bound the person set. In an untrusted
 * workspace (VS Code's Restricted Mode) no workspace value is read at all.
 *
 * `workspaceTrust` is VS Code's own answer (`vscode.workspace.isTrusted`), sent
 * as a top-level key of `initializationOptions` (remora_lsp/trust.py).
 *
 * A plain language client answers the server's `workspace/configuration` pull for
 * section `remora` with every `remora.*` setting, including the client's own keys
 * (`server`, `trace`, `initializationOptions`); the server wants remora.yaml keys
 * only: the answer is the resolved `initializationOptions`. Pure.
 */
export const CLIENT_KEYS = ["server", "trace", "initializationOptions"] as const;

/** The settings whose change restarts the server. */
export const RESTART_SETTINGS = [
  "remora.server.path",
  "remora.server.args",
  "remora.trace.server",
  "remora.initializationOptions",
] as const;

/** Keys of `remora.initializationOptions` a workspace may never set. */
export const PERSON_ONLY_SECTIONS = ["model", "workspaceTrust"] as const;

export interface RemoraSettings {
  serverPath: string;
  serverArgs: string[];
  initializationOptions: Record<string, unknown>;
}

/** What `WorkspaceConfiguration.inspect(key)` answers (the fields used here). */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export interface ResolvedSettings extends RemoraSettings {
  /** Workspace values that were not used, e.g. "remora.server.path". */
  ignored: string[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The answer for section `remora`: the engine settings only. */
export function engineSettings(initializationOptions: unknown): Record<string, unknown> {
  return isRecord(initializationOptions) ? { ...initializationOptions } : {};
}

/** Read settings from a getter (every scope merged: only for tests and old callers). */
export function readSettings(get: (key: string) => unknown): RemoraSettings {
  const path = get("server.path");
  const args = get("server.args");
  return {
    serverPath: typeof path === "string" ? path : "",
    serverArgs: stringArray(args),
    initializationOptions: engineSettings(get("initializationOptions")),
  };
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((a): a is string => typeof a === "string") : [];
}

/** `override` over `base`, objects merged key by key (as the server merges sections). */
export function deepMerge(base: Record<string, unknown>, override: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const under = merged[key];
    merged[key] = isRecord(under) && isRecord(value) ? deepMerge(under, value) : value;
  }
  return merged;
}

/**
 * The repository's part of `remora.initializationOptions`: what a repository
 * may set, and the names of what it may not (reported, never used).
 */
export function repositoryOptions(
  workspace: Record<string, unknown>,
  person: Record<string, unknown>,
): { options: Record<string, unknown>; ignored: string[] } {
  const options: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(workspace)) {
    if ((PERSON_ONLY_SECTIONS as readonly string[]).includes(key)) {
      ignored.push(`remora.initializationOptions.${key}`);
    } else if (key === "limits") {
      const { kept, refused } = tighterLimits(value, person.limits);
      if (Object.keys(kept).length > 0) options.limits = kept;
      ignored.push(...refused.map((name) => `remora.initializationOptions.limits.${name}`));
    } else {
      options[key] = value;
    }
  }
  return { options, ignored };
}

/** A repository's bounds kept only where they are below a bound the person set. */
function tighterLimits(repository: unknown, person: unknown): { kept: Record<string, unknown>; refused: string[] } {
  const kept: Record<string, unknown> = {};
  const refused: string[] = [];
  if (!isRecord(repository)) return { kept, refused: ["(not an object)"] };
  const own = isRecord(person) ? person : {};
  for (const [name, value] of Object.entries(repository)) {
    const mine = own[name];
    if (typeof value === "number" && typeof mine === "number" && value <= mine) kept[name] = value;
    else refused.push(name);
  }
  return { kept, refused };
}

/**
 * The settings to start the server with, from each key's `inspect()` answer:
 * the person's values, the repository's where a repository may set them, and
 * the workspace trust.
 */
export function resolveSettings(inspect: (key: string) => Inspected | undefined, trusted: boolean): ResolvedSettings {
  const ignored: string[] = [];
  const personal = (key: string): unknown => {
    const found = inspect(key);
    if (found?.workspaceValue !== undefined || found?.workspaceFolderValue !== undefined) ignored.push(`remora.${key}`);
    return found?.globalValue;
  };
  const path = personal("server.path");
  const args = personal("server.args");
  const options = inspect("initializationOptions");
  const person = engineSettings(options?.globalValue);
  delete person.workspaceTrust; // VS Code's own trust decides, not a setting
  let initializationOptions = person;
  if (trusted) {
    const workspace = deepMerge(engineSettings(options?.workspaceValue), engineSettings(options?.workspaceFolderValue));
    const repository = repositoryOptions(workspace, person);
    ignored.push(...repository.ignored);
    initializationOptions = deepMerge(repository.options, person);
    // A bound the repository tightens is the smaller one (kept only when below the person's).
    const tighter = repository.options.limits;
    if (isRecord(tighter)) initializationOptions.limits = deepMerge(engineSettings(person.limits), tighter);
  } else if (options?.workspaceValue !== undefined || options?.workspaceFolderValue !== undefined) {
    ignored.push("remora.initializationOptions (the workspace is not trusted)");
  }
  return {
    serverPath: typeof path === "string" ? path : "",
    serverArgs: stringArray(args),
    initializationOptions: { ...initializationOptions, workspaceTrust: trusted },
    ignored,
  };
}

/** The one message saying which workspace settings were not used, and why. */
export function ignoredMessage(ignored: readonly string[]): string {
  return (
    `Remora: ignored the workspace's ${ignored.join(", ")}. A repository's .vscode/settings.json may not choose ` +
    "the server, the model, where requests go or which key is sent, nor loosen your limits: set these in your user settings."
  );
}
