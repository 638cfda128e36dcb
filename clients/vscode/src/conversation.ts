/**
 * The Conversation view: a webview view showing one node's card and its whole
 * conversation (`conversationModel.ts`), following it live and read back from
 * `remora.agent.history` whenever the server (re)starts.
 *
 * The webview is locked down: a Content-Security-Policy allowing only this
 * view's nonce'd script and style (no remote content, no inline handlers),
 * `localResourceRoots` empty, every text escaped before it reaches the page.
 * Its buttons post a message; the extension acts through the same `remora.*`
 * commands as everywhere else. Colours are VS Code's theme variables.
 */
import * as crypto from "node:crypto";
import type { ServerManager } from "./client";
import { CardLike, Check, Conversation, Entry, renderConversation } from "./conversationModel";
import { RemoraEvent } from "./eventFormat";
import { vscode } from "./vscodeapi";

export const CONVERSATION_VIEW = "remora.conversation";
const RENDER_DELAY_MS = 50;
const CARD_EVENTS = new Set(["agent_started", "agent_completed", "agent_failed", "agent_cancelled", "agent_blocked", "agent_resumed", "run_interrupted", "rewrite_proposed", "rewrite_applied", "rewrite_rejected", "rewrite_stale"]);
/** How many of the latest proposals get their checks read after a load. */
const CHECKED_PROPOSALS = 10;

interface Message {
  action?: string;
  proposal?: string;
  question?: string;
  answer?: string;
  run?: string;
  text?: string;
}

export class ConversationView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private conv: Conversation | undefined;
  private card: CardLike | undefined;
  private renderTimer: NodeJS.Timeout | undefined;
  private cardTimer: NodeJS.Timeout | undefined;
  /** What the webview last reported it shows (its text), for tests and logs. */
  shownText = "";
  /** How many times the conversation was read back from the server. */
  loads = 0;
  private readonly shown = new vscode.EventEmitter<string>();
  /** Fires with the webview's text after each render it reports. */
  readonly onDidShow = this.shown.event;

  constructor(private readonly server: ServerManager) {}

  get nodeId(): string | undefined {
    return this.conv?.nodeId;
  }

  private async exec<T>(command: string, argument: Record<string, unknown>): Promise<T> {
    const client = this.server.client;
    if (!client) throw new Error("Remora: the server is not running (see the Remora output).");
    return (await client.sendRequest("workspace/executeCommand", { command, arguments: [argument] })) as T;
  }

  /** Open (or focus) the view on a node's conversation. */
  async show(nodeId: string): Promise<void> {
    if (this.conv?.nodeId !== nodeId) {
      this.conv = new Conversation(nodeId);
      this.card = undefined;
    }
    // Shown without taking the focus from the editor once the view exists.
    if (this.view) this.view.show(true);
    else await vscode.commands.executeCommand(`${CONVERSATION_VIEW}.focus`);
    await this.load();
  }

  /** Read the node's card and whole conversation back from the server. */
  async load(): Promise<void> {
    const conv = this.conv;
    if (!conv || !this.server.client) {
      this.render();
      return;
    }
    try {
      const mark = conv.runsMark();
      const [card, history, runs] = await Promise.all([
        this.exec<CardLike>("remora.node.get", { node_id: conv.nodeId }),
        this.exec<Entry[]>("remora.agent.history", { node_id: conv.nodeId }),
        this.exec<{ id?: string | null; status?: string }[]>("remora.runs.list", { node_id: conv.nodeId, limit: 20 }),
      ]);
      if (this.conv !== conv) return;
      this.card = card;
      conv.load(history);
      conv.setRunsRead(runs, mark);
      this.loads += 1;
      this.render();
      await this.readChecks(conv);
    } catch (error) {
      this.card = { id: conv.nodeId, qualified_name: `${conv.nodeId} (not found: ${error instanceof Error ? error.message : String(error)})` };
    }
    this.render();
  }

  private async readChecks(conv: Conversation): Promise<void> {
    const ids = [...new Set(conv.proposalIds())].slice(-CHECKED_PROPOSALS);
    await Promise.all(ids.map(async (id) => {
      try {
        const diff = await this.exec<{ status?: string; checks?: Check[] }>("remora.proposal.diff", { proposal_id: id });
        conv.setProposal(id, diff.status, diff.checks);
      } catch {
        // A proposal the server no longer knows keeps what the conversation says.
      }
    }));
  }

  /** The server (re)started: whatever was shown is read back from it. */
  onServerStarted(): void {
    if (this.conv) this.conv = new Conversation(this.conv.nodeId);
    void this.load();
  }

  onEvent(event: RemoraEvent): void {
    const conv = this.conv;
    if (!conv) return;
    if (conv.apply(event)) this.renderSoon();
    const about = event.agent_id === conv.nodeId || event.node_id === conv.nodeId;
    if (about && CARD_EVENTS.has(event.type)) this.reloadCardSoon();
  }

  private reloadCardSoon(): void {
    if (this.cardTimer) clearTimeout(this.cardTimer);
    this.cardTimer = setTimeout(() => {
      const conv = this.conv;
      if (!conv) return;
      void this.exec<CardLike>("remora.node.get", { node_id: conv.nodeId }).then((card) => {
        if (this.conv === conv) {
          this.card = card;
          this.renderSoon();
        }
      }, () => undefined);
    }, 300);
  }

  private renderSoon(): void {
    if (this.renderTimer) return;
    this.renderTimer = setTimeout(() => {
      this.renderTimer = undefined;
      this.render();
    }, RENDER_DELAY_MS);
  }

  private render(): void {
    const view = this.view;
    if (!view) return;
    const conv = this.conv;
    view.description = this.card?.qualified_name ?? this.card?.name ?? conv?.nodeId ?? "";
    const html = conv
      ? renderConversation(conv, this.card)
      : `<div class="empty muted">Ask a node (Remora: Ask the Node, or a node's lens) to see its conversation here.</div>`;
    void view.webview.postMessage({ type: "render", html, composer: conv !== undefined });
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, localResourceRoots: [] };
    view.webview.html = shell(view.webview.cspSource);
    view.webview.onDidReceiveMessage((message: Message) => void this.onMessage(message));
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
    });
    view.onDidChangeVisibility(() => {
      if (view.visible) this.render();
    });
  }

  private async onMessage(message: Message): Promise<void> {
    try {
      switch (message.action) {
        case "ready":
          this.render();
          return;
        case "rendered":
          this.shownText = message.text ?? "";
          this.shown.fire(this.shownText);
          return;
        case "accept":
          await vscode.commands.executeCommand("remora.acceptProposal", { proposal_id: message.proposal });
          return;
        case "reject":
          await vscode.commands.executeCommand("remora.rejectProposal", { proposal_id: message.proposal });
          return;
        case "revert":
          await vscode.commands.executeCommand("remora.revertProposal", { proposal_id: message.proposal });
          return;
        case "diff":
          await vscode.commands.executeCommand("remora.showDiff", { proposal_id: message.proposal });
          return;
        case "cancel":
          await vscode.commands.executeCommand("remora.cancelRun", { run_id: message.run });
          return;
        case "answer":
          if (message.question && message.answer) {
            const answered = await this.exec<{ ok?: boolean }>("remora.agent.respond", { question_id: message.question, answer: message.answer });
            if (!answered.ok) void vscode.window.showWarningMessage("Remora: that question no longer waits for an answer.");
          }
          return;
        case "send":
          if (this.conv && message.text?.trim()) await this.exec("remora.agent.chat", { node_id: this.conv.nodeId, message: message.text });
          return;
        default:
          return;
      }
    } catch (error) {
      void vscode.window.showErrorMessage(error instanceof Error ? error.message : String(error));
    }
  }

  dispose(): void {
    if (this.renderTimer) clearTimeout(this.renderTimer);
    if (this.cardTimer) clearTimeout(this.cardTimer);
    this.shown.dispose();
  }
}

/** The page: CSP with a fresh nonce, theme-coloured CSS, the small script
 *  that swaps in rendered HTML and posts button clicks back. */
function shell(cspSource: string): string {
  const nonce = crypto.randomBytes(16).toString("base64");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${cspSource}; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); background: var(--vscode-sideBar-background); padding: 0 8px 8px; }
.muted { color: var(--vscode-descriptionForeground); }
code { font-family: var(--vscode-editor-font-family); font-size: 0.9em; }
.card { border-bottom: 1px solid var(--vscode-panel-border); padding: 6px 0 8px; margin-bottom: 6px; }
.card .title { font-weight: 600; font-size: 1.05em; }
.card .facts, .card .rel, .card .last { margin-top: 2px; }
.card .last { white-space: pre-wrap; }
.entry { margin: 6px 0; padding: 6px 8px; border-radius: 4px; border-left: 3px solid var(--vscode-panel-border); background: var(--vscode-editor-background); }
.entry .who { font-weight: 600; margin-bottom: 2px; }
.entry .when { font-weight: normal; color: var(--vscode-descriptionForeground); font-size: 0.85em; }
.entry .text { white-space: pre-wrap; word-wrap: break-word; }
.role-person { border-left-color: var(--vscode-textLink-foreground); }
.role-agent { border-left-color: var(--vscode-charts-green); }
.role-node { border-left-color: var(--vscode-charts-purple); }
.kind-failure, .kind-interrupted { border-left-color: var(--vscode-errorForeground); }
.kind-cancelled, .kind-stale { border-left-color: var(--vscode-charts-yellow); }
.kind-question { border-left-color: var(--vscode-charts-orange); }
pre.diff { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); overflow-x: auto; margin: 4px 0; padding: 4px; background: var(--vscode-textCodeBlock-background); }
pre.diff .add { color: var(--vscode-gitDecoration-addedResourceForeground); }
pre.diff .del { color: var(--vscode-gitDecoration-deletedResourceForeground); }
pre.diff .meta { color: var(--vscode-descriptionForeground); }
.checks { list-style: none; padding: 0; margin: 4px 0; }
.checks .ok { color: var(--vscode-testing-iconPassed); }
.checks .bad { color: var(--vscode-testing-iconFailed); }
.checks .wait { color: var(--vscode-descriptionForeground); }
.status { font-size: 0.85em; padding: 0 4px; border-radius: 3px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
.actions, .reply { display: flex; gap: 4px; margin-top: 4px; flex-wrap: wrap; }
button { font-family: inherit; font-size: inherit; border: none; padding: 3px 10px; border-radius: 2px; cursor: pointer; }
button.primary { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
button.primary:hover { background: var(--vscode-button-hoverBackground); }
button.secondary { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); }
input, textarea { flex: 1; font-family: inherit; font-size: inherit; color: var(--vscode-input-foreground); background: var(--vscode-input-background); border: 1px solid var(--vscode-input-border, transparent); padding: 3px 6px; }
.running { margin: 6px 0; color: var(--vscode-descriptionForeground); }
#composer { display: none; gap: 4px; margin-top: 8px; }
#composer.on { display: flex; }
#composer textarea { resize: vertical; min-height: 2.2em; }
</style>
</head>
<body>
<div id="remora-conversation" role="log" aria-live="polite"></div>
<form id="composer"><textarea id="message" rows="2" placeholder="Ask this node… (Ctrl+Enter)"></textarea><button class="primary" type="submit">Send</button></form>
<script nonce="${nonce}">
(function () {
  const vscode = acquireVsCodeApi();
  const log = document.getElementById("remora-conversation");
  const composer = document.getElementById("composer");
  const message = document.getElementById("message");
  let shownCount = -1;
  window.addEventListener("message", (event) => {
    const data = event.data;
    if (!data || data.type !== "render") return;
    // Follow the conversation: scroll down when something new arrived (or the
    // person was already at the bottom); otherwise keep their place.
    const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    log.innerHTML = data.html;
    composer.classList.toggle("on", Boolean(data.composer));
    const count = log.querySelectorAll(".entry, .running").length;
    if (atBottom || count !== shownCount) window.scrollTo(0, document.body.scrollHeight);
    shownCount = count;
    vscode.postMessage({ action: "rendered", text: log.innerText });
  });
  log.addEventListener("click", (event) => {
    const target = event.target instanceof Element ? event.target.closest("button[data-action]") : null;
    if (!target) return;
    const d = target.dataset;
    let answer = d.answer;
    if (d.action === "answer" && answer === undefined) {
      const input = target.parentElement && target.parentElement.querySelector("input");
      answer = input ? input.value : "";
      if (!answer) return;
    }
    vscode.postMessage({ action: d.action, proposal: d.proposal, question: d.question, run: d.run, answer });
  });
  log.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && event.target instanceof HTMLInputElement) {
      const button = event.target.parentElement && event.target.parentElement.querySelector("button");
      if (button) button.click();
    }
  });
  const send = () => {
    const text = message.value.trim();
    if (!text) return;
    vscode.postMessage({ action: "send", text });
    message.value = "";
  };
  composer.addEventListener("submit", (event) => { event.preventDefault(); send(); });
  message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); send(); }
  });
  vscode.postMessage({ action: "ready" });
}());
</script>
</body>
</html>`;
}
