#!/usr/bin/env node
// Workspace Trust end to end, through the UI: code-server runs with trust on, so the folder opens in
// Restricted Mode. Profiling is refused with Plumber's message; then the person trusts the folder in
// the Workspace Trust editor, the extension tells the running server (plumber/trustChanged), and the
// same command profiles. Screenshots: artifacts/screenshots/trust-*.png.
// Usage: node test/e2e/ui/trust.ui.mjs WORKSPACE_FOLDER
import { join, resolve } from 'node:path';
import { ROOT, launchBrowser, startCodeServer, workbenchUrl } from '../../../scripts/e2e/codeServer.mjs';
import { UI_SETTINGS, workbench } from './page.mjs';

const folder = resolve(process.argv[2] ?? join(ROOT, 'out/e2e/workspace'));
const server = await startCodeServer({ folder, trust: true, settings: UI_SETTINGS });
const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
const { shot, palette, open } = workbench(page);
let step = 'open the workbench in Restricted Mode';
try {
  await page.goto(workbenchUrl(server, { folder, extensionDevelopmentPath: ROOT }));
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await open('pipeline.ts', 'fetchRecord');
  await page.locator('.codelens-decoration a').first().waitFor({ timeout: 60_000 });

  step = 'profiling is refused while untrusted';
  await palette('Plumber: Profile Pipeline');
  // The toast is in the picture once its fade-in animation has finished.
  await page.locator('.notification-fade-in-done', { hasText: 'Plumber does not run pipelines in an untrusted workspace' }).first().waitFor({ timeout: 20_000 });
  await shot('trust-1-refused');
  await page.keyboard.press('Escape');

  step = 'trust the folder in the Workspace Trust editor';
  await palette('Workspaces: Manage Workspace Trust');
  await page
    .locator('.workspace-trust-editor a.monaco-button', { hasText: /^Trust$/ })
    .first()
    .click({ timeout: 20_000 });
  await page.locator('.workspace-trust-editor', { hasText: 'You trust this folder' }).first().waitFor({ timeout: 10_000 });
  await page.locator('.tabs-container .tab', { hasText: 'pipeline.ts' }).first().click();
  await page.locator('.monaco-editor .view-lines', { hasText: 'fetchRecord' }).first().waitFor();

  step = 'profile now that the workspace is trusted';
  await palette('Plumber: Profile Pipeline');
  const failed = page.locator('.notifications-toasts', { hasText: /Plumber could not profile|untrusted/ }).first();
  const winner = await Promise.race([
    page
      .locator('.codelens-decoration', { hasText: 'el/s' })
      .first()
      .waitFor({ timeout: 120_000 })
      .then(() => 'lenses'),
    failed.waitFor({ timeout: 120_000 }).then(() => 'failed'),
  ]);
  if (winner === 'failed') throw new Error(`profiling after trust failed: ${await failed.innerText()}`);
  await shot('trust-2-profiled-after-trust');
  console.log('trust UI test passed');
} catch (error) {
  console.error(`trust UI test failed at "${step}": ${error instanceof Error ? error.message : String(error)}`);
  await shot('trust-failure').catch(() => {});
  process.exitCode = 1;
} finally {
  await browser.close().catch(() => {});
  server.stop();
}
