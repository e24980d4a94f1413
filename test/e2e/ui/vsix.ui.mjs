#!/usr/bin/env node
// Installs the packaged extension (artifacts/plumber.vsix, from `npm run package`) into a fresh
// code-server the way a user would (--install-extension), opens the fixture without any development
// path, profiles the pipeline from the command palette and waits for the rate lenses: the VSIX
// carries everything it needs (server, runner, tsx).
// Usage: node test/e2e/ui/vsix.ui.mjs WORKSPACE_FOLDER
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT, launchBrowser, startCodeServer } from '../../../scripts/e2e/codeServer.mjs';

const vsix = join(ROOT, 'artifacts/plumber.vsix');
if (!existsSync(vsix)) {
  console.error('vsix test: artifacts/plumber.vsix is missing; run `npm run package` first.');
  process.exit(1);
}
const folder = resolve(process.argv[2] ?? join(ROOT, 'out/e2e/workspace'));
const shots = join(ROOT, 'artifacts/screenshots');
mkdirSync(shots, { recursive: true });

const server = await startCodeServer({ folder, install: [vsix] });
const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
let step = 'open the workbench';
try {
  await page.goto(`${server.url}/?folder=${encodeURIComponent(folder)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  step = 'open pipeline.ts';
  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget input').fill('pipeline.ts');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'pipeline.ts' }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.codelens-decoration a').first().waitFor({ timeout: 60_000 });
  step = 'profile with the installed extension';
  await page.keyboard.press('F1');
  await page.locator('.quick-input-widget input').fill('>Plumber: Profile Pipeline');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Plumber: Profile Pipeline' }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.codelens-decoration', { hasText: 'el/s' }).first().waitFor({ timeout: 120_000 });
  await page.screenshot({ path: join(shots, 'vsix-installed.png') });
  console.log('VSIX test passed: the installed extension profiled the pipeline (artifacts/screenshots/vsix-installed.png)');
} catch (error) {
  console.error(`VSIX test failed at "${step}": ${error instanceof Error ? error.message : String(error)}`);
  await page.screenshot({ path: join(shots, 'vsix-failure.png') }).catch(() => {});
  process.exitCode = 1;
} finally {
  await browser.close().catch(() => {});
  server.stop();
}
