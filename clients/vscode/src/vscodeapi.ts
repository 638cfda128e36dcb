/**
 * The one place the `vscode` API is imported, so every other module is plain
 * TypeScript (and the pure ones are unit-tested without VS Code).
 */
export * as vscode from "vscode";
