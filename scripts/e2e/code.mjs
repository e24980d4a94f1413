#!/usr/bin/env node
// A `code`-like launcher over code-server + headless Chromium, so tools that expect a VS Code
// binary (e.g. @vscode/test-electron's vscodeExecutablePath) can run extension tests here:
//   node scripts/e2e/code.mjs --extensionDevelopmentPath=EXT --extensionTestsPath=TESTS [--trust] FOLDER
// Exits with the code the test run reports.
import { resolve } from 'node:path';
import { runExtensionTests } from './codeServer.mjs';

const opts = { trust: false };
const rest = [];
for (const arg of process.argv.slice(2)) {
  const m = /^--([^=]+)=(.*)$/.exec(arg);
  if (m && m[1] === 'extensionDevelopmentPath') opts.extensionDevelopmentPath = resolve(m[2]);
  else if (m && m[1] === 'extensionTestsPath') opts.extensionTestsPath = resolve(m[2]);
  else if (arg === '--trust')
    opts.trust = true; // keep Workspace Trust on: the folder opens untrusted
  else if (arg.startsWith('--'))
    continue; // flags real VS Code takes (--disable-extensions, …) do not apply here
  else rest.push(arg);
}
if (!opts.extensionDevelopmentPath || !opts.extensionTestsPath || rest.length === 0) {
  console.error('usage: code.mjs --extensionDevelopmentPath=DIR --extensionTestsPath=FILE [--trust] FOLDER');
  process.exit(2);
}
opts.folder = resolve(rest[rest.length - 1]);
process.exit(await runExtensionTests(opts));
