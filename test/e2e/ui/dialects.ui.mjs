#!/usr/bin/env node
// Pipelines people already have, as a person sees them: a Node-streams pipeline and a tfjs-data
// pipeline of the fixture workspace, profiled from the command palette; the rate lenses on each
// stage's line, the bottleneck named where it sits, and the tfjs pipeline's quick fixes with
// "Convert to plumber-data". Screenshots: artifacts/screenshots/dialects-*.png.
// Usage: node test/e2e/ui/dialects.ui.mjs WORKSPACE_FOLDER   (scripts/e2e/run.mjs passes a fresh copy)
import { join, resolve } from 'node:path';
import { ROOT, launchBrowser, startCodeServer, workbenchUrl } from '../../../scripts/e2e/codeServer.mjs';
import { UI_SETTINGS, workbench } from './page.mjs';

const folder = resolve(process.argv[2] ?? join(ROOT, 'out/e2e/workspace'));
const server = await startCodeServer({ folder, settings: UI_SETTINGS });
const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
const { shot, palette, open } = workbench(page);
let step = 'start';

/** Profiles the open file from the palette; resolves when a lens shows a rate, throws when Plumber says the profile failed. */
async function profileOpenFile() {
  await page.locator('.codelens-decoration a').first().waitFor({ timeout: 60_000 });
  await palette('Plumber: Profile Pipeline');
  const failed = page.locator('.notifications-toasts', { hasText: 'Plumber could not profile' }).first();
  const winner = await Promise.race([
    page
      .locator('.codelens-decoration', { hasText: 'bottleneck' })
      .first()
      .waitFor({ timeout: 180_000 })
      .then(() => 'lenses'),
    failed.waitFor({ timeout: 180_000 }).then(() => 'failed'),
  ]);
  if (winner === 'failed') throw new Error(`the profile failed: ${await failed.innerText()}`);
}

try {
  step = 'open the workbench';
  await page.goto(workbenchUrl(server, { folder, extensionDevelopmentPath: ROOT }));
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await page.locator('.activitybar .action-item a[aria-label^="Plumber"]').first().click({ timeout: 30_000 });

  step = 'profile the Node-streams pipeline';
  await open('streams.ts', 'Readable.from');
  await profileOpenFile();
  const streamsLens = await page.locator('.codelens-decoration', { hasText: 'bottleneck' }).first().innerText();
  if (!/waiting/.test(streamsLens)) throw new Error(`the map's lens should say it waits: ${streamsLens}`);
  await page
    .locator('.monaco-list-row', { hasText: /map\(lookup/ })
    .first()
    .waitFor();
  await shot('dialects-1-streams');

  step = 'profile the tfjs-data pipeline';
  await open('tfjs.ts', 'mapAsync');
  await profileOpenFile();
  await shot('dialects-2-tfjs');

  step = 'the quick fixes on the mapAsync line offer Convert to plumber-data';
  await page.locator('.monaco-editor .view-line', { hasText: '.mapAsync(lookup)' }).first().click();
  await page.keyboard.press('Control+.');
  await page.locator('.action-widget', { hasText: 'Convert to plumber-data' }).first().waitFor({ timeout: 20_000 });
  await shot('dialects-3-convert-offered', true);
  await page.keyboard.press('Escape');
  console.log('dialects UI test passed');
} catch (error) {
  console.error(`dialects UI test failed at "${step}": ${error instanceof Error ? error.message : String(error)}`);
  await shot('dialects-failure').catch(() => {});
  process.exitCode = 1;
} finally {
  await browser.close().catch(() => {});
  server.stop();
}
