/**
 * Runs the mocha files next to the compiled entry inside the VS Code extension host. VS Code calls
 * `run()` from the module named by extensionTestsPath; a rejection makes the workbench exit 1.
 */
import Mocha from 'mocha';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'node:util';

/** Printed before the run: the launcher relays the host's console from here on. */
export const BEGIN_MARKER = 'PLUMBER_E2E_BEGIN';

export function runMochaIn(dir: string): Promise<void> {
  // The workbench relays console.log's arguments unformatted; format them here so the lines read.
  Mocha.reporters.Base.consoleLog = (...args: unknown[]) => console.log(format(...args));
  console.log(BEGIN_MARKER);
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 120_000, reporter: 'spec' });
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith('.test.js'))
    .sort())
    mocha.addFile(join(dir, f));
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} end-to-end test(s) failed.`)) : resolve()));
  });
}
