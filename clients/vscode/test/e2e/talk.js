/**
 * The e2e scenarios of the conversation and runs views (required by suite.js,
 * run inside the real extension host): a plain question whose answer is read
 * from the webview's DOM by the runner (Playwright), a proposal's Diff button
 * clicked in the webview, the conversation read back after a server restart, a
 * run listed then cancelled from the Runs view, a node's standing instructions
 * set and shown on its card, and a waiting run answered from the Runs view.
 * `ctx` gives the suite's helpers; what was seen goes into `observed.talk`.
 */
const vscode = require("vscode");

/** The answer the scripted model gives to PLAIN_QUESTION (tests/clients/test_vscode.py). */
const PLAIN_QUESTION = "What does helper do?";

exports.run = async function run(ctx) {
  const { api, doc, at, helperId, observed, until, step, snapshot, webviewText, clickWebview, typeAnswer, pressKey } = ctx;
  const talk = (observed.talk = {});

  // A proposal in the conversation, with its checks and Accept / Reject / Diff:
  // the Diff button (clicked in the webview) opens the diff editor.
  const editor = await vscode.window.showTextDocument(doc);
  editor.selection = new vscode.Selection(at, at);
  const proposing = await vscode.commands.executeCommand("remora.ask", { message: "Use a keyword argument" });
  const proposed = await until("the proposal", () => api.events.find((e) => e.type === "rewrite_proposed" && e.run_id === proposing.run_id), 30000);
  await until("the proposal's run ends", () => api.events.find((e) => e.type === "agent_completed" && e.run_id === proposing.run_id), 30000);
  talk.proposalShown = await until("the proposal's buttons in the webview", () =>
    (api.conversation.shownText.includes(proposed.proposal_id) && api.conversation.shownText.includes("Accept") ? api.conversation.shownText : undefined), 15000);
  await vscode.commands.executeCommand("workbench.action.closeEditorsInOtherGroups");
  const diffTabs = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.toString().includes(proposed.proposal_id));
  const before = diffTabs().length;
  talk.clickedDiff = await clickWebview("clickdiff", `button[data-action="diff"][data-proposal="${proposed.proposal_id}"]`);
  talk.diffOpened = await until("the diff from the webview", () => (diffTabs().length > before ? diffTabs().map((t) => t.label) : undefined), 15000);
  talk.proposalId = proposed.proposal_id;
  step("talk-proposal");

  // A plain question: the answer shows in the Conversation view, as text.
  const back = await vscode.window.showTextDocument(doc);
  back.selection = new vscode.Selection(at, at);
  const asked = await vscode.commands.executeCommand("remora.ask", { message: PLAIN_QUESTION });
  talk.asked = asked;
  talk.answerEvent = await until("the plain answer", () => api.events.find((e) => e.type === "agent_completed" && e.run_id === asked.run_id), 30000);
  talk.viewNode = api.conversation.nodeId;
  talk.shownByWebview = await until("the answer in the webview", () => (api.conversation.shownText.includes("It orders two b's") ? api.conversation.shownText : undefined), 15000);
  talk.onScreen = await webviewText("plainanswer");
  talk.nodeEvents = await vscode.commands.executeCommand("remora.showNodeEvents", { node_id: talk.viewNode });
  // Today's tokens as the server stored them (read shortly after the run's events).
  talk.tokens = await until("today's tokens in the status bar", () => (api.tally.tokens > 0 ? api.tally.tokens : undefined), 15000);
  talk.statusText = api.status.text;
  step("talk-answer");

  // The conversation beside the code: the committed screenshot (the panel
  // closed; the runner widens the side bar and folds the Nodes view).
  await vscode.window.showTextDocument(doc, { preserveFocus: true });
  await vscode.commands.executeCommand("workbench.action.closePanel");
  await vscode.commands.executeCommand("remora.conversation.focus");
  talk.screenshot = await snapshot("conversation");
  step("talk-screenshot");

  // A server restart: the conversation is read back from remora.agent.history.
  const loads = api.conversation.loads;
  await vscode.commands.executeCommand("remora.restartServer");
  await until("the conversation read back", () => api.conversation.loads > loads, 30000);
  talk.afterRestart = await until("the answer after the restart", () =>
    (api.conversation.loads > loads && api.conversation.shownText.includes("It orders two b's") ? api.conversation.shownText : undefined), 15000);
  talk.onScreenAfterRestart = await webviewText("afterrestart");
  step("talk-restart");

  // A slow run is listed in the Runs view, then cancelled from its item.
  await vscode.commands.executeCommand("remora.runs.focus");
  const slow = await vscode.commands.executeCommand("remora.ask", { node_id: helperId, message: "Take your time, really" });
  const listed = await until("the run in the Runs view", () => api.runsView.rows().find((r) => r.id === slow.run_id && r.status === "running"), 30000);
  const item = api.runsView.getTreeItem(listed);
  talk.listed = { label: item.label, description: item.description, contextValue: item.contextValue, groups: api.runsView.getChildren().map((g) => g.label) };
  // What the item's inline Cancel button does: the command with the item.
  talk.cancelled = await vscode.commands.executeCommand("remora.runs.cancel", listed);
  talk.cancelEvent = await until("agent_cancelled", () => api.events.find((e) => e.type === "agent_cancelled" && e.run_id === slow.run_id), 30000);
  const ended = await until("the run shown as cancelled", () => api.runsView.rows().find((r) => r.id === slow.run_id && r.status === "cancelled"), 15000);
  const endedItem = api.runsView.getTreeItem(ended);
  talk.ended = { description: endedItem.description, contextValue: endedItem.contextValue, groups: api.runsView.getChildren().map((g) => g.label) };
  // The answered run's item says what it cost (stored by the server); Show Usage totals it.
  const answered = await until("the answered run in the Runs view", () => api.runsView.rows().find((r) => r.id === talk.asked.run_id), 15000);
  talk.answeredItem = api.runsView.getTreeItem(answered).description;
  talk.usage = await vscode.commands.executeCommand("remora.showUsage", {});
  // What wakes the node: muted, its subscriptions say so; unmuted again.
  talk.muted = await vscode.commands.executeCommand("remora.muteNode", { node_id: helperId });
  talk.wakes = await vscode.commands.executeCommand("remora.showSubscriptions", { node_id: helperId });
  talk.unmuted = await vscode.commands.executeCommand("remora.unmuteNode", { node_id: helperId });
  // Show Trust: VS Code's workspace trust decides; forgetting the person's answers.
  talk.trust = await vscode.commands.executeCommand("remora.showTrust", { forget: true });
  talk.workspaceTrusted = vscode.workspace.isTrusted;
  step("talk-runs");

  // Standing instructions: set, then typed into the input box (which starts
  // with the current ones); the node's card in the Conversation view shows
  // them, and the next run (the question below) carries them to the model.
  talk.instructionsSet = await vscode.commands.executeCommand("remora.setNodeInstructions", { node_id: helperId, text: "Answer in one sentence." });
  const setting = vscode.commands.executeCommand("remora.setNodeInstructions", { node_id: helperId });
  talk.instructionsTyped = await typeAnswer("instructions", "Call the person by name.");
  talk.instructionsAnswer = await setting;
  talk.instructionsShown = await until("the instructions on the card", () =>
    (api.conversation.nodeId === helperId && api.conversation.shownText.includes("Call the person by name.") ? api.conversation.shownText : undefined), 15000);
  step("talk-instructions");

  // A question dismissed in its input box waits: the Runs view lists the run
  // under "Waiting for you", and clicking it asks the question again.
  const asking = await vscode.commands.executeCommand("remora.ask", { node_id: helperId, message: "Ask me for a name again" });
  talk.dismissed = await pressKey("dismiss", "Escape");
  const waiting = await until("the waiting run", () => api.runsView.rows().find((r) => r.id === asking.run_id && r.status === "waiting"), 30000);
  const waitingItem = api.runsView.getTreeItem(waiting);
  talk.waiting = { contextValue: waitingItem.contextValue, command: waitingItem.command.command, groups: api.runsView.getChildren().map((g) => g.label) };
  talk.waitingShown = await until("the open question in the conversation", () =>
    (api.conversation.shownText.includes("waits for your answer") ? api.conversation.shownText : undefined), 15000);
  // Nothing dropped on a restart: the question is kept, the run waits again.
  await vscode.commands.executeCommand("remora.restartServer");
  const again = await until("the run waiting again after a restart", async () => {
    await vscode.commands.executeCommand("remora.runs.refresh");
    return api.runsView.rows().find((r) => r.id === asking.run_id && r.status === "waiting");
  }, 45000);
  const againItem = api.runsView.getTreeItem(again);
  talk.waitingAfterRestart = { contextValue: againItem.contextValue, label: againItem.label, description: againItem.description };
  const seenBefore = api.events.length;
  const clicked = vscode.commands.executeCommand(againItem.command.command, ...againItem.command.arguments);
  talk.typedAgain = await typeAnswer("again", "Grace Hopper");
  talk.respondResult = await clicked;
  talk.answeredAgain = await until("the answer resumes the agent", () =>
    api.events.slice(seenBefore).find((e) => e.type === "agent_completed" && e.agent_id === helperId), 45000);
  step("talk-waiting");
};
