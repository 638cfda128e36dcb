/**
 * The extension's settings, and the engine settings the server may see.
 *
 * A plain language client answers the server's `workspace/configuration` pull for
 * section `remora` with every `remora.*` setting, including the client's own keys
 * (`server`, `trace`, `initializationOptions`); the server wants remora.yaml keys
 * only, which are what `remora.initializationOptions` holds.
 */
export const CLIENT_KEYS = ["server", "trace", "initializationOptions"] as const;

/** The settings whose change restarts the server. */
export const RESTART_SETTINGS = [
  "remora.server.path",
  "remora.server.args",
  "remora.trace.server",
  "remora.initializationOptions",
] as const;

export interface RemoraSettings {
  serverPath: string;
  serverArgs: string[];
  initializationOptions: Record<string, unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The answer for section `remora`: the engine settings only. */
export function engineSettings(initializationOptions: unknown): Record<string, unknown> {
  return isRecord(initializationOptions) ? { ...initializationOptions } : {};
}

/** Read settings from a getter (the `vscode` configuration in the extension). */
export function readSettings(get: (key: string) => unknown): RemoraSettings {
  const path = get("server.path");
  const args = get("server.args");
  return {
    serverPath: typeof path === "string" ? path : "",
    serverArgs: Array.isArray(args) ? args.filter((a): a is string => typeof a === "string") : [],
    initializationOptions: engineSettings(get("initializationOptions")),
  };
}
