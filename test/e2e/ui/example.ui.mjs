#!/usr/bin/env node
// The README's pictures on a real example: a copy of examples/images (its JPEGs shared through a
// link to examples/images/data), profiled from the command palette in code-server. It waits for the
// rate lenses, shows the Bottlenecks view, applies every fix, saves, profiles again and opens the
// report with the before/after history. Screenshots: artifacts/screenshots/example-*.png.
// Usage: node test/e2e/ui/example.ui.mjs
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, launchBrowser, startCodeServer, workbenchUrl } from '../../../scripts/e2e/codeServer.mjs';
import { UI_SETTINGS, workbench } from './page.mjs';

// A copy, because the test applies fixes to it; inside the repo so `plumber-data` resolves.
const source = join(ROOT, 'examples/images');
const folder = join(ROOT, 'out/e2e/example-images');
rmSync(folder, { recursive: true, force: true });
mkdirSync(folder, { recursive: true });
for (const f of ['pipeline.ts', 'transforms.ts', 'prepare.ts', 'README.md']) if (existsSync(join(source, f))) cpSync(join(source, f), join(folder, f));
mkdirSync(join(source, 'data'), { recursive: true });
symlinkSync(join(source, 'data'), join(folder, 'data'));

// The flow (fix, stale, profile again) must not depend on how busy this machine is: what
// verification measures on a loaded machine, or what a second pass measures on the one core left
// free, decides whether a fix is offered (a CI run once got none). So: one pass, the model's plan
// alone (fixes marked "not verified", or "not verifiable here" on a machine of fewer cores), for a 4-core target, where moving the decode off the main
// thread is a clear gain whatever one run here measured.
const server = await startCodeServer({ folder, settings: { ...UI_SETTINGS, 'plumber.model.cores': 4, 'plumber.plan.passes': 1, 'plumber.plan.verify': false, 'plumber.fixes.preview': false } });
const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
const { shot, palette, open } = workbench(page);
let step = 'open the workbench';
try {
  await page.goto(workbenchUrl(server, { folder, extensionDevelopmentPath: ROOT }));
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await page.locator('.activitybar .action-item a[aria-label^="Plumber"]').first().click({ timeout: 30_000 });
  await open('pipeline.ts', 'randomCropFlip');

  step = 'profile the example';
  await page.locator('.codelens-decoration a').first().waitFor({ timeout: 60_000 });
  await palette('Plumber: Profile Pipeline');
  const failed = page.locator('.notifications-toasts', { hasText: 'Plumber could not profile' }).first();
  const winner = await Promise.race([
    page
      .locator('.codelens-decoration', { hasText: 'el/s' })
      .first()
      .waitFor({ timeout: 180_000 })
      .then(() => 'lenses'),
    failed.waitFor({ timeout: 180_000 }).then(() => 'failed'),
  ]);
  if (winner === 'failed') throw new Error(`the profile failed: ${await failed.innerText()}`);
  await page
    .locator('.monaco-list-row', { hasText: /map\(decode/ })
    .first()
    .waitFor();
  await shot('example-1-profiled');

  step = 'find the fixes offered';
  // Said here, with what the lenses show, rather than as a status bar that never turns stale.
  const applyAll = page.locator('.codelens-decoration', { hasText: 'Apply all Plumber fixes' }).first();
  if (
    !(await applyAll.waitFor({ timeout: 20_000 }).then(
      () => true,
      () => false,
    ))
  ) {
    throw new Error(`Plumber offered no fix for examples/images; the lenses say: ${(await page.locator('.codelens-decoration').allInnerTexts()).join(' | ')}`);
  }
  // The settings above reached the server: the fixes are the model's, marked as such.
  const offered = await applyAll.innerText();
  if (!/not verified|not verifiable here/.test(offered)) throw new Error(`the fixes should be the model's alone (plan.verify off): ${offered}`);

  step = 'apply all fixes, save, profile again';
  await palette('Plumber: Apply All Plumber Fixes');
  // The server marks the old numbers stale as soon as the edit lands.
  await page
    .locator('.statusbar-item', { hasText: /Plumber: images .*stale/ })
    .first()
    .waitFor({ timeout: 20_000 });
  await shot('example-2-fixed');
  await page.keyboard.press('Control+S');
  const before = readFileSync(join(source, 'pipeline.ts'), 'utf8');
  for (const deadline = Date.now() + 10_000; readFileSync(join(folder, 'pipeline.ts'), 'utf8') === before;) {
    if (Date.now() > deadline) throw new Error('the fixed example never reached the disk');
    await page.waitForTimeout(100);
  }
  await palette('Plumber: Profile Pipeline');
  await page
    .locator('.statusbar-item', { hasText: /Plumber: images .*\/s/ })
    .filter({ hasNotText: 'stale' })
    .first()
    .waitFor({ timeout: 180_000 });

  // VS Code asks for lenses again after the server's refresh, debounced by how slow lenses were.
  await page
    .locator('.codelens-decoration', { hasText: /^Pipeline / })
    .filter({ hasNotText: 'stale' })
    .first()
    .waitFor({ timeout: 20_000 });

  step = 'open the report';
  await palette('Plumber: Show Report');
  const deadline = Date.now() + 20_000;
  let report;
  while (!report && Date.now() < deadline) {
    for (const f of page.frames())
      if (
        await f
          .locator('table.history tr')
          .nth(2)
          .count()
          .catch(() => 0)
      )
        report = f;
    if (!report) await page.waitForTimeout(200);
  }
  if (!report) throw new Error('the report did not show two profiles in its history');
  await shot('example-3-report');
  console.log('example UI test passed');
} catch (error) {
  console.error(`example UI test failed at "${step}": ${error instanceof Error ? error.message : String(error)}`);
  await shot('example-failure').catch(() => {});
  process.exitCode = 1;
} finally {
  await browser.close().catch(() => {});
  server.stop();
}
