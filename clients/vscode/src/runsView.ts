/**
 * The Runs view (a tree): the project's runs from `remora.runs.list`, grouped
 * by `runsModel.ts`, refreshed on run events. Cancel from the item
 * (`remora.agent.cancel`); a run waiting for the person opens its question
 * and sends the answer (`remora.agent.respond`); any other run opens its
 * node's conversation.
 */
import { inTurn } from "./inTurn";
import type { ServerManager } from "./client";
import { RemoraEvent } from "./eventFormat";
import { RunGroup, RunRow, describeRun, groupRuns, nodeName, runContext, runIcon, runTooltip } from "./runsModel";
import { vscode } from "./vscodeapi";

export const RUNS_VIEW = "remora.runs";
const REFRESH_DELAY_MS = 150;
const RUN_EVENTS = new Set(["human_chat", "agent_message", "agent_started", "agent_completed", "agent_failed", "agent_cancelled", "agent_blocked", "agent_resumed", "run_interrupted", "model_response"]);

type Element = RunGroup | RunRow;

interface Question {
  question_id: string;
  question: string;
  options: string[];
}

function isGroup(element: Element): element is RunGroup {
  return "runs" in element;
}

export class RunsView implements vscode.TreeDataProvider<Element>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Element | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private groups: RunGroup[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Questions by run id, from `agent_blocked` (until `agent_resumed`). */
  private readonly questions = new Map<string, Question>();
  /** Resolves each time the view re-read the runs (for tests). */
  refreshes = 0;

  constructor(private readonly server: ServerManager) {}

  private async exec<T>(command: string, argument: Record<string, unknown>): Promise<T> {
    const client = this.server.client;
    if (!client) throw new Error("Remora: the server is not running (see the Remora output).");
    return (await client.sendRequest("workspace/executeCommand", { command, arguments: [argument] })) as T;
  }

  /** Re-read the runs (one refresh at a time: see inTurn). */
  readonly refresh = inTurn(() => this.load());

  private async load(): Promise<void> {
    try {
      const rows = this.server.client ? await this.exec<RunRow[]>("remora.runs.list", { limit: 100 }) : [];
      this.groups = groupRuns(rows);
    } catch {
      // Mid-restart: keep what was shown; the next event refreshes it.
    }
    this.refreshes += 1;
    this.changed.fire(undefined);
  }

  onEvent(event: RemoraEvent): void {
    const runId = typeof event.run_id === "string" ? event.run_id : undefined;
    if (event.type === "agent_blocked" && runId && typeof event.question_id === "string") {
      this.questions.set(runId, {
        question_id: event.question_id,
        question: typeof event.question === "string" ? event.question : "",
        options: Array.isArray(event.options) ? event.options.map(String) : [],
      });
    } else if (event.type === "agent_resumed" && runId) {
      this.questions.delete(runId);
    }
    if (!RUN_EVENTS.has(event.type)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), REFRESH_DELAY_MS);
  }

  /** The runs shown, flat (for tests and the commands). */
  rows(): RunRow[] {
    return this.groups.flatMap((g) => g.runs);
  }

  getChildren(element?: Element): Element[] {
    if (!element) return this.groups;
    return isGroup(element) ? element.runs : [];
  }

  getTreeItem(element: Element): vscode.TreeItem {
    if (isGroup(element)) {
      const item = new vscode.TreeItem(element.label, vscode.TreeItemCollapsibleState.Expanded);
      item.description = String(element.runs.length);
      item.contextValue = `group-${element.id}`;
      item.id = `group-${element.id}`;
      return item;
    }
    const now = Date.now() / 1000;
    const item = new vscode.TreeItem(nodeName(element), vscode.TreeItemCollapsibleState.None);
    item.description = describeRun(element, now);
    item.tooltip = runTooltip(element, now);
    const [icon, colour] = runIcon(element);
    item.iconPath = new vscode.ThemeIcon(icon, colour ? new vscode.ThemeColor(colour) : undefined);
    item.contextValue = runContext(element);
    if (element.id) item.id = `run-${element.id}`;
    item.command = element.status === "waiting"
      ? { title: "Answer", command: "remora.runs.answer", arguments: [element] }
      : { title: "Show Conversation", command: "remora.showHistory", arguments: [{ node_id: element.node.id }] };
    return item;
  }

  /** Cancel the run of an item (or of `{run_id}`). */
  async cancel(arg?: RunRow | { run_id?: string }): Promise<unknown> {
    const runId = arg && "run_id" in arg ? arg.run_id : arg && "id" in arg ? arg.id : undefined;
    if (!runId) {
      void vscode.window.showInformationMessage("Remora: this run has no id yet; it cannot be cancelled before it starts.");
      return undefined;
    }
    const answer = await this.exec<{ cancelled: boolean }>("remora.agent.cancel", { run_id: runId });
    if (!answer.cancelled) void vscode.window.showInformationMessage(`Remora: run ${runId} was no longer running.`);
    await this.refresh();
    return answer;
  }

  /** Run again a run a restart interrupted (same trigger, same message). */
  async retry(arg?: RunRow | { run_id?: string }): Promise<unknown> {
    const runId = arg && "run_id" in arg ? arg.run_id : arg && "id" in arg ? arg.id : undefined;
    if (!runId) return undefined;
    const answer = await this.exec<{ run_id: string }>("remora.agent.retry", { run_id: runId });
    void vscode.window.showInformationMessage(`Remora: run ${runId} retried as ${answer.run_id}.`);
    await this.refresh();
    return answer;
  }

  /** Show the question a waiting run asks and send the person's answer. */
  async answer(arg?: RunRow | { run_id?: string; answer?: string }): Promise<unknown> {
    const runId = arg && "run_id" in arg ? arg.run_id : arg && "id" in arg ? arg.id : undefined;
    if (!runId) return undefined;
    const question = this.questions.get(runId) ?? (await this.askedBy(runId));
    if (!question) {
      void vscode.window.showInformationMessage(`Remora: run ${runId} does not wait for an answer.`);
      return undefined;
    }
    const given = arg && "answer" in arg ? arg.answer : undefined;
    const answer = given ?? (question.options.length > 0
      ? await vscode.window.showQuickPick(question.options, { placeHolder: question.question, ignoreFocusOut: true })
      : await vscode.window.showInputBox({ prompt: `Remora: ${question.question}`, ignoreFocusOut: true }));
    if (answer === undefined) return undefined;
    const result = await this.exec<{ ok: boolean }>("remora.agent.respond", { question_id: question.question_id, answer });
    if (!result.ok) void vscode.window.showWarningMessage("Remora: that question no longer waits for an answer.");
    return result;
  }

  /** The latest question of a run, read from the event log (after a restart of the extension). */
  private async askedBy(runId: string): Promise<Question | undefined> {
    const events = await this.exec<RemoraEvent[]>("remora.events.list", { run_id: runId, type: "agent_blocked", limit: 1 });
    const last = events[events.length - 1];
    if (!last || typeof last.question_id !== "string") return undefined;
    return { question_id: last.question_id, question: typeof last.question === "string" ? last.question : "", options: Array.isArray(last.options) ? last.options.map(String) : [] };
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.changed.dispose();
  }
}
