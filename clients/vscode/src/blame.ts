/**
 * Remora: Toggle Blame. Lines an accepted proposal wrote (`remora.attribution`)
 * get a thin bar at their left and, on a span's first line, a GitLens-like
 * end-of-line annotation ("helper's agent · pr_… · 5 min ago"); the hover names
 * the node's agent, the proposal, when, and links to its conversation
 * (`remora.showHistory {node_id}`). Refreshed when the file changes, another
 * editor shows, or a proposal is accepted.
 */
import { BlameLines, HISTORY_COMMAND, REVERT_COMMAND, annotation, blameLines, hoverMarkdown } from "./blameModel";
import type { Exec } from "./serverCommand";
import { vscode } from "./vscodeapi";

/** What was last drawn in one file (the e2e reads it through the extension's API). */
export interface BlameShown {
  uri: string;
  lines: BlameLines[];
  annotations: string[];
  hovers: string[];
}

const REFRESH_DELAY_MS = 400;

export class Blame implements vscode.Disposable {
  enabled = false;
  /** By file URI: the spans decorated there now. */
  readonly shown = new Map<string, BlameShown>();
  private readonly names = new Map<string, string | undefined>();
  private readonly bar = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    borderWidth: "0 0 0 2px",
    borderStyle: "solid",
    borderColor: new vscode.ThemeColor("editorGutter.addedBackground"),
    overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.addedForeground"),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly note = vscode.window.createTextEditorDecorationType({
    after: { color: new vscode.ThemeColor("editorCodeLens.foreground"), margin: "0 0 0 3em", fontStyle: "italic" },
  });
  private readonly disposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly exec: Exec) {
    this.disposables.push(
      vscode.window.onDidChangeVisibleTextEditors(() => this.refreshSoon()),
      vscode.workspace.onDidChangeTextDocument((change) => {
        if (this.enabled && this.shown.has(change.document.uri.toString())) this.refreshSoon();
      }),
    );
  }

  async toggle(on?: boolean): Promise<{ enabled: boolean }> {
    this.enabled = on ?? !this.enabled;
    if (this.enabled) await this.refresh();
    else this.clear();
    return { enabled: this.enabled };
  }

  refreshSoon(): void {
    if (!this.enabled) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), REFRESH_DELAY_MS);
  }

  /** Decorate every visible Python file. */
  async refresh(): Promise<void> {
    if (!this.enabled) return;
    const editors = vscode.window.visibleTextEditors.filter(
      (e) => e.document.uri.scheme === "file" && e.document.languageId === "python",
    );
    for (const editor of editors) await this.decorate(editor);
  }

  private async decorate(editor: vscode.TextEditor): Promise<void> {
    const uri = editor.document.uri.toString();
    let ranges: unknown[];
    try {
      ranges = (await this.exec<unknown[]>("remora.attribution", { uri })) ?? [];
    } catch {
      ranges = []; // a file outside the project, or no server: nothing to mark
    }
    const lines = blameLines(ranges);
    const now = Date.now() / 1000;
    const bars: vscode.DecorationOptions[] = [];
    const notes: vscode.DecorationOptions[] = [];
    const shown: BlameShown = { uri, lines, annotations: [], hovers: [] };
    for (const span of lines) {
      if (span.start >= editor.document.lineCount) continue;
      const name = await this.nodeName(span.agentId);
      const hover = new vscode.MarkdownString(hoverMarkdown(span, name, now));
      hover.isTrusted = { enabledCommands: [HISTORY_COMMAND, REVERT_COMMAND] };
      const last = Math.min(span.end, editor.document.lineCount - 1);
      // The hover is on the lines' text (a whole-line decoration's range still decides where it hovers).
      bars.push({ range: new vscode.Range(span.start, 0, last, editor.document.lineAt(last).range.end.character), hoverMessage: hover });
      const text = annotation(span, name, now);
      const end = editor.document.lineAt(span.start).range.end;
      notes.push({ range: new vscode.Range(end, end), renderOptions: { after: { contentText: text } } });
      shown.annotations.push(text);
      shown.hovers.push(hover.value);
    }
    editor.setDecorations(this.bar, bars);
    editor.setDecorations(this.note, notes);
    this.shown.set(uri, shown);
  }

  private async nodeName(nodeId: string): Promise<string | undefined> {
    if (this.names.has(nodeId)) return this.names.get(nodeId);
    let name: string | undefined;
    try {
      const card = await this.exec<{ qualified_name?: string; name?: string } | null>("remora.node.get", { node_id: nodeId });
      name = card?.qualified_name ?? card?.name;
    } catch {
      name = undefined; // the node is gone: its id is all there is
    }
    this.names.set(nodeId, name);
    return name;
  }

  private clear(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      editor.setDecorations(this.bar, []);
      editor.setDecorations(this.note, []);
    }
    this.shown.clear();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.bar.dispose();
    this.note.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
