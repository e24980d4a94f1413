import * as assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as vscode from 'vscode';
import { EXTENSION_ID, openFixture, plumber } from '../helpers';

describe('Activation', () => {
  it('is not active before a TypeScript file opens, and activates cheaply when one does', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, 'the extension is loaded');
    assert.equal(ext.isActive, false, 'onLanguage activation: nothing should activate it at startup');
    const started = performance.now();
    await openFixture();
    const api = await plumber();
    const wall = performance.now() - started;
    // One line run.mjs picks up for the report: activate()'s own time and the time VS Code took
    // to load the bundle and call it (opening the document included).
    console.log(`PLUMBER_ACTIVATION activate=${api.activationMs.toFixed(1)}ms open+load+activate=${wall.toFixed(1)}ms`);
    assert.ok(ext.isActive);
    assert.ok(api.activationMs < 150, `activate() took ${api.activationMs.toFixed(1)} ms; the budget is 150 ms`);
  });

  it('loads its bundle and activates within the 150 ms budget', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const api = await plumber();
    // Loading the code is part of activation's cost: time a fresh load of the same bundle (the
    // module cache entry is dropped first; the file is warm in the OS cache as it was for VS Code).
    const bundle = vscode.Uri.joinPath(ext.extensionUri, 'dist', 'client', 'extension.js').fsPath;
    const req = createRequire(__filename);
    delete req.cache[req.resolve(bundle)];
    const started = performance.now();
    req(bundle);
    const loadMs = performance.now() - started;
    const total = loadMs + api.activationMs;
    console.log(`PLUMBER_ACTIVATION_BUDGET load=${loadMs.toFixed(1)}ms activate=${api.activationMs.toFixed(1)}ms total=${total.toFixed(1)}ms (budget 150 ms)`);
    assert.ok(total < 150, `loading (${loadMs.toFixed(1)} ms) plus activate() (${api.activationMs.toFixed(1)} ms) exceed 150 ms`);
  });

  it('starts the language server in the background and reports it ready', async () => {
    const api = await plumber();
    await api.whenServerReady(60_000);
    assert.equal(api.serverState(), 'ready');
    assert.ok(api.serverPid(), 'the server runs as a child process with a pid');
    assert.match(api.statusBarText(), /Plumber/);
  });
});
