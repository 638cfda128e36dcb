/**
 * The status-bar item: runs in flight, the project's pending proposals and the
 * session's tokens (`sessionTally.ts`); a click shows the runs view.
 */
import { SessionTally, statusText, statusTooltip } from "./sessionTally";
import { vscode } from "./vscodeapi";

export class StatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("remora.status", vscode.StatusBarAlignment.Left, 50);

  constructor(private readonly tally: SessionTally) {
    this.item.name = "Remora";
    this.item.command = "remora.runs.focus";
    this.update(0, 0);
    this.item.show();
  }

  update(runs: number, pending: number): void {
    this.item.text = statusText(runs, pending, this.tally.tokens);
    this.item.tooltip = statusTooltip(runs, pending, this.tally);
  }

  get text(): string {
    return this.item.text;
  }

  dispose(): void {
    this.item.dispose();
  }
}
