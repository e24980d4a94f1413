#!/usr/bin/env node
// The UI test: what a person sees in a real VS Code (code-server + headless Chromium). It opens the
// fixture pipeline, profiles it from the command palette, waits for the rate lenses, opens the
// Bottlenecks view, runs "Apply All Plumber Fixes" from the palette, opens the report, and saves a
// PNG of each step under artifacts/screenshots/.
// Usage: node test/e2e/ui/workbench.ui.mjs WORKSPACE_FOLDER   (scripts/e2e/run.mjs passes a fresh copy)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT, launchBrowser, startCodeServer, workbenchUrl } from '../../../scripts/e2e/codeServer.mjs';
import { UI_SETTINGS, workbench } from './page.mjs';

const folder = resolve(process.argv[2] ?? join(ROOT, 'out/e2e/workspace'));
// Apply All applies at once here (glance.ui.mjs shows the refactor preview a multi-place fix opens).
const server = await startCodeServer({ folder, settings: { ...UI_SETTINGS, 'plumber.fixes.preview': false } });
const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
const { shot, palette, open } = workbench(page);
let step = 'start';

try {
  step = 'open the workbench';
  await page.goto(workbenchUrl(server, { folder, extensionDevelopmentPath: ROOT }));
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });

  step = 'the Plumber view shows its welcome before anything is open';
  await page.locator('.activitybar .action-item a[aria-label^="Plumber"]').first().click({ timeout: 30_000 });
  await page.locator('.welcome-view-content', { hasText: 'No profiled pipelines yet' }).waitFor({ timeout: 30_000 });
  await shot('0-welcome-view');

  step = 'open pipeline.ts';
  await open('pipeline.ts', 'fetchRecord');

  step = 'the static lenses appear (the server parsed the pipeline)';
  await page.locator('.codelens-decoration a').first().waitFor({ timeout: 60_000 });
  await shot('1-pipeline-before-profile');

  step = 'profile from the command palette and wait for rate lenses';
  await palette('Plumber: Profile Pipeline');
  // Either the rate lenses appear or Plumber says the profile failed: stop at whichever comes first.
  const failed = page.locator('.notifications-toasts', { hasText: 'Plumber could not profile' }).first();
  const winner = await Promise.race([
    page
      .locator('.codelens-decoration', { hasText: 'el/s' })
      .first()
      .waitFor({ timeout: 120_000 })
      .then(() => 'lenses'),
    failed.waitFor({ timeout: 120_000 }).then(() => 'failed'),
  ]);
  if (winner === 'failed') throw new Error(`the profile failed: ${await failed.innerText()}`);
  const lensTexts = await page.locator('.codelens-decoration').allInnerTexts();
  console.log(`  lenses: ${lensTexts.join(' | ')}`);
  assert.ok(
    lensTexts.some((t) => /bottleneck/i.test(t)),
    'a lens names the bottleneck',
  );
  await shot('2-pipeline-profiled-lenses');

  step = 'open the Bottlenecks view';
  await palette('Plumber: Focus on Bottlenecks View');
  const treeRow = page.locator('.monaco-list-row', { hasText: 'records' }).first();
  await treeRow.waitFor({ timeout: 15_000 });
  const mapRow = page.locator('.monaco-list-row', { hasText: /map\(fetchRecord/ }).first();
  await mapRow.waitFor();
  // Hovering shows the row's inline "Apply Plumber Fix" action.
  await mapRow.hover();
  await mapRow.locator('.actions .action-label').first().waitFor({ timeout: 5_000 });
  await shot('3-bottlenecks-view', true);

  step = 'apply all fixes from the command palette';
  await palette('Plumber: Apply All Plumber Fixes');
  await page
    .locator('.monaco-editor .view-lines', { hasText: /parallelism:\s(\d{2,}|[2-9])\b/ })
    .first()
    .waitFor({ timeout: 20_000 });
  await shot('4-after-apply-all-fixes');

  step = 'save and profile again';
  await page.keyboard.press('Control+S');
  await page.locator('.tab.dirty').waitFor({ state: 'detached', timeout: 10_000 });
  // The runner profiles the file on disk: wait until the saved fix is really there.
  const onDisk = join(folder, 'pipeline.ts');
  for (const deadline = Date.now() + 10_000; !/parallelism:\s*(\d{2,}|[2-9])\b/.test(readFileSync(onDisk, 'utf8'));) {
    if (Date.now() > deadline) throw new Error('the saved file on disk does not contain the fix');
    await page.waitForTimeout(100);
  }
  const firstStatus = await page.locator('.statusbar-item', { hasText: 'Plumber:' }).first().innerText();
  await palette('Plumber: Profile Pipeline');
  // The status bar shows the new result once the second profile is in (and no longer "stale").
  await page
    .locator('.statusbar-item', { hasText: /Plumber: records .*\/s/ })
    .filter({ hasNotText: 'stale' })
    .first()
    .waitFor({ timeout: 120_000 });
  const secondStatus = await page.locator('.statusbar-item', { hasText: 'Plumber:' }).first().innerText();
  console.log(`  status bar: "${firstStatus.trim()}" → "${secondStatus.trim()}"`);

  // VS Code asks for lenses again after the server's refresh, debounced by how slow lenses were.
  await page
    .locator('.codelens-decoration', { hasText: /^Pipeline / })
    .filter({ hasNotText: 'stale' })
    .first()
    .waitFor({ timeout: 20_000 });

  step = 'open the report';
  await palette('Plumber: Show Report');
  const report = await (async () => {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      for (const f of page.frames()) {
        if (
          await f
            .locator('#root h1')
            .count()
            .catch(() => 0)
        )
          return f;
      }
      await page.waitForTimeout(200);
    }
    throw new Error('the report webview did not render');
  })();
  await report.locator('svg .node').first().waitFor();
  await report.locator('table.history tr', { hasText: '×' }).nth(1).waitFor({ timeout: 10_000 });
  await shot('5-report');
  console.log('UI test passed');
} catch (error) {
  console.error(`UI test failed at "${step}": ${error instanceof Error ? error.message : String(error)}`);
  await shot('failure').catch(() => {});
  process.exitCode = 1;
} finally {
  await browser.close().catch(() => {});
  server.stop();
}
