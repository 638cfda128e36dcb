/**
 * Where the remora-lsp executable is: the `remora.server.path` setting, else the
 * workspace's `.venv/bin/remora-lsp` (a trusted workspace's only: in Restricted
 * Mode that file is the repository's code), else `remora-lsp` on PATH. Pure (the file
 * system is passed in) so it is unit-tested without VS Code.
 */
import * as path from "node:path";

export interface PathProbe {
  isExecutable(file: string): boolean;
}

export type Resolution =
  | { found: true; command: string; source: "setting" | "workspace" | "path" }
  | { found: false; reason: string };

const EXE = process.platform === "win32" ? "remora-lsp.exe" : "remora-lsp";
const VENV_BIN = process.platform === "win32" ? "Scripts" : "bin";

export function resolveServer(
  configured: string,
  workspaceFolders: readonly string[],
  envPath: string,
  probe: PathProbe,
  /** VS Code's workspace trust: an untrusted workspace's own .venv is not a server to run. */
  trustedWorkspace = true,
): Resolution {
  if (configured.trim() !== "") {
    // An explicit setting is never second-guessed by a fallback: a typo must be reported.
    return probe.isExecutable(configured)
      ? { found: true, command: configured, source: "setting" }
      : { found: false, reason: `remora.server.path is "${configured}", which is not an executable file.` };
  }
  for (const folder of trustedWorkspace ? workspaceFolders : []) {
    const candidate = path.join(folder, ".venv", VENV_BIN, EXE);
    if (probe.isExecutable(candidate)) {
      return { found: true, command: candidate, source: "workspace" };
    }
  }
  for (const dir of envPath.split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, EXE);
    if (probe.isExecutable(candidate)) {
      return { found: true, command: candidate, source: "path" };
    }
  }
  return {
    found: false,
    reason:
      "remora-lsp was not found (no remora.server.path, no .venv/bin/remora-lsp in the workspace, none on PATH). " +
      "Install it with `pip install remora-lsp` (or `pip install -e .` in the Remora repository), or set remora.server.path.",
  };
}
