/**
 * One way to call a `remora.*` server command (`workspace/executeCommand` with
 * one argument object) for the batch, proposals and blame modules.
 */
import type { ServerManager } from "./client";

export type Exec = <T>(command: string, argument?: Record<string, unknown>) => Promise<T>;

export function serverExec(server: ServerManager): Exec {
  return async <T>(command: string, argument: Record<string, unknown> = {}): Promise<T> => {
    const client = server.client;
    if (!client) throw new Error("Remora: the server is not running (see the Remora Server output).");
    return (await client.sendRequest("workspace/executeCommand", { command, arguments: [argument] })) as T;
  };
}
