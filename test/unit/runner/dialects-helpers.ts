/**
 * What the runner's dialect tests share: where an operator sits in a fixture (its op id, found in
 * the fixture's text so the tests do not hard-code positions), profiling a fixture through the real
 * runner, and draining a fixture's pipeline with and without the adapters.
 */
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { runProfile, type RunProfileOptions } from '../../../src/runner/spawn';
import type { OpProfile, Profile } from '../../../src/shared/profile';

export const FIXTURES = path.resolve(__dirname, '../../fixtures/runner-dialects');

/** The op id (`line:column`) of `name` inside the `nth` occurrence of `needle` in the fixture. */
export function idOf(fixture: string, needle: string, name: string, nth = 0): string {
  const text = readFileSync(path.join(FIXTURES, fixture), 'utf8');
  let at = -1;
  for (let i = 0; i <= nth; i++) {
    at = text.indexOf(needle, at + 1);
    assert.ok(at >= 0, `${needle} (#${nth}) is not in ${fixture}`);
  }
  const offset = at + needle.indexOf(name);
  const before = text.slice(0, offset);
  return `${before.split('\n').length}:${offset - before.lastIndexOf('\n')}`;
}

/** Profiles one export of a fixture with the real runner (no probes: these tests read counters). */
export async function profile(fixture: string, exportName: string, o: Partial<RunProfileOptions> = {}): Promise<Profile> {
  const p = await runProfile({ file: path.join(FIXTURES, fixture), exportName, seconds: 0.6, warmupSeconds: 0.2, probes: false, ...o });
  assert.equal(p.error, undefined, p.error?.message);
  return p;
}

/** The operator with this id. */
export function op(p: Profile, id: string): OpProfile {
  const found = p.ops.find((o) => o.id === id);
  assert.ok(found, `no operator ${id} in ${p.ops.map((o) => `${o.kind}@${o.id}`).join(', ')}`);
  return found;
}

/** No operator's waits or self time exceed the run's measured seconds (a little slack for the element in flight at each end). */
export function assertFiguresAddUp(p: Profile): void {
  const limit = p.run.seconds * 1.05 + 0.02;
  for (const o of p.ops) {
    assert.ok(o.counters.waitSeconds <= limit, `${o.kind}@${o.id} waited ${o.counters.waitSeconds} s in a ${p.run.seconds} s run`);
    assert.ok(o.counters.selfSeconds <= limit, `${o.kind}@${o.id} ran ${o.counters.selfSeconds} s in a ${p.run.seconds} s run`);
    // One call at a time: its summed latency fits in the run too.
    if (o.counters.inFlightHighWater <= 1) assert.ok(o.counters.asyncLatencySeconds <= limit, `${o.kind}@${o.id} awaited ${o.counters.asyncLatencySeconds} s in a ${p.run.seconds} s run`);
  }
}

/** What draining an export yielded, and the operators the adapters saw (traced only). */
export interface Drained {
  out: unknown[];
  error?: string;
  ops: Array<{ kind: string; produced: number }>;
  /** The drain's milliseconds, wall and CPU (loading excluded). */
  ms: number;
  cpuMs: number;
}

/** Drains a fixture's export in a child process, as Node runs it or under the adapters. */
export async function drain(fixture: string, exportName: string, mode: 'plain' | 'traced'): Promise<Drained> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(FIXTURES, 'collect.ts'), path.join(FIXTURES, fixture), exportName, mode], { maxBuffer: 1 << 24 });
  return JSON.parse(stdout) as Drained;
}
