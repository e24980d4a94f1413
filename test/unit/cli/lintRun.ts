/** `plumber lint` as the CLI tests run it: the built bin in a directory of the test's choosing, on files the test writes. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BIN, run, type Ran } from './bin';

export type { Ran } from './bin';

/** Runs `plumber lint …args` in `cwd` and collects its exit code and output. */
export function lint(cwd: string, ...args: string[]): Promise<Ran> {
  return run(process.execPath, [BIN, 'lint', ...args], cwd);
}

/** A fresh directory holding `files` (relative path → text); removed by the returned function. */
export function project(files: Record<string, string>): { dir: string; remove(): void } {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'plumber-lint-')));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A pipeline file whose lines 3 and 4 each hold one finding: an Information (3) and a Warning (4). */
export const TWO_FINDINGS = [
  "import { range } from 'plumber-data';",
  'function f(x: number): number { return x; }',
  'export const p = range(10).map(f).batch(2);',
  'export const q = range(10).batch(2).shuffle(3).prefetch(1);',
  '',
].join('\n');
