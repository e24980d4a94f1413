import * as vscode from 'vscode';

// The suite applies fixes without VS Code's refactor preview: a person confirms a preview by a
// click, which an extension-host test cannot give. The Playwright UI test (glance.ui.mjs) shows and
// confirms the preview as a person would.
before(async () => {
  await vscode.workspace.getConfiguration('plumber').update('fixes.preview', false, vscode.ConfigurationTarget.Workspace);
});
