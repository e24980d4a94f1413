// Helpers the UI tests share: screenshots, the command palette and Quick Open, on a Playwright page.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../../scripts/e2e/codeServer.mjs';

export const SHOTS = join(ROOT, 'artifacts/screenshots');
mkdirSync(SHOTS, { recursive: true });

/** Settings that keep the pictures about Plumber: no minimap, no command centre. */
export const UI_SETTINGS = { 'editor.minimap.enabled': false, 'window.commandCenter': false };

export function workbench(page) {
  return {
    /** A PNG of what a person sees; the mouse moves to a quiet spot first so no hover covers it. */
    async shot(name, keepMouse = false) {
      if (!keepMouse) await page.mouse.move(900, 700);
      await page.screenshot({ path: join(SHOTS, `${name}.png`) });
      console.log(`  screenshot artifacts/screenshots/${name}.png`);
    },
    /** Runs a command from the palette by clicking its exact entry (Enter could pick a recent one). */
    async palette(command) {
      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible' });
      await input.fill(`>${command}`);
      const row = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: new RegExp(`^${command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }) }).first();
      await row.waitFor({ timeout: 15_000 });
      await row.click();
    },
    /** Opens a workspace file with Quick Open and waits for its text. */
    async open(file, text) {
      await page.keyboard.press('Control+P');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible' });
      await input.fill(file);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: file }).first().waitFor();
      await page.keyboard.press('Enter');
      await page.locator('.monaco-editor .view-lines', { hasText: text }).first().waitFor();
    },
  };
}
