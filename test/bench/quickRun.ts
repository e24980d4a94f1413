import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ROOT, run, type Ran } from '../unit/cli/bin';
import { RESULTS_FILE } from '../../bench/results';

/** A benchmark run small, as a smoke test runs it: how it exited, its JSON lines, and whether bench/RESULTS.md is as it was. */
export interface QuickRun<L> {
  result: Ran;
  lines: L[];
  /** A small run measures something else than the benchmark's goals: it must never rewrite bench/RESULTS.md. */
  resultsUnchanged(): boolean;
}

/** Runs `bench/<name>/index.ts --json` with `args` (its quick or smoke flags) in a process of its own. */
export async function runQuick<L = Record<string, unknown>>(name: string, args: string[]): Promise<QuickRun<L>> {
  const before = readFileSync(RESULTS_FILE, 'utf8');
  const result = await run(process.execPath, ['--import', 'tsx', `bench/${name}/index.ts`, '--json', ...args], ROOT);
  const lines = result.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as L);
  return { result, lines, resultsUnchanged: () => readFileSync(RESULTS_FILE, 'utf8') === before };
}

/** The benchmark exited 0; otherwise the failure shows the tail of what it printed on stderr. */
export function assertRan(result: Ran): void {
  assert.equal(result.code, 0, `the benchmark failed:\n${result.stderr.slice(-4000)}`);
}
