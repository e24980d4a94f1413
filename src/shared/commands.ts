/**
 * Every command the extension contributes (package.json `contributes.commands`), declared once.
 * The client's registry has a handler for each; the server names them in the code lenses it
 * resolves, so a renamed command is a compile error on both sides rather than a lens that does
 * nothing. This module imports nothing, so the extension's activation bundle can take the ids
 * without taking vscode-jsonrpc with them (see protocol.ts).
 */
export const Commands = {
  /** Profile one pipeline: (uri?, pipeline name?) or a Bottlenecks tree node. */
  profilePipeline: 'plumber.profilePipeline',
  /** Profile every exported pipeline of a file: (uri?). */
  profileFile: 'plumber.profileFile',
  /** Apply the fix on one operator: a tree node, or (uri, pipeline, opId), or the cursor. */
  applyFix: 'plumber.applyFix',
  /** Apply every offered fix of a pipeline: (uri?, pipeline name?) or a tree node. */
  applyAllFixes: 'plumber.applyAllFixes',
  /** Open the report of a pipeline: (uri?, pipeline name?) or a tree node. */
  showReport: 'plumber.showReport',
  /** Forget the profiles of a document, or of every document: (uri?). */
  clearProfile: 'plumber.clearProfile',
  restartServer: 'plumber.restartServer',
  showOutput: 'plumber.showOutput',
  refreshBottlenecks: 'plumber.refreshBottlenecks',
  /** Select and reveal a range: (uri, range). */
  revealRange: 'plumber.revealRange',
} as const;

/** A command id the extension contributes. */
export type CommandId = (typeof Commands)[keyof typeof Commands];
