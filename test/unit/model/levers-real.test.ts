/**
 * The levers and the conversion on profiles the runner recorded from dialect pipelines as users
 * write them (test/fixtures/model/dialects; re-capture with test/fixtures/model/capture.ts). The
 * numbers depend on the machine and its load when they were recorded (these were, on a busy 2-core
 * machine), so the plans are for a 2-core target and the tests check what must hold on any
 * machine: which operator binds, which changes are made in the dialect and which only by
 * converting it.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { analyze, changeTitle, plan } from '../../../src/model';
import type { PlanChange } from '../../../src/shared/analysis';
import type { Profile } from '../../../src/shared/profile';

const DIR = path.resolve(__dirname, '../../fixtures/model');
const TARGET = { cores: 2 };

function load(name: string): Profile {
  return JSON.parse(readFileSync(path.join(DIR, `${name}.profile.json`), 'utf8')) as Profile;
}

function opOf(profile: Profile, fnName: string): string {
  const op = profile.ops.find((o) => o.fnName === fnName && o.kind === 'map');
  assert.ok(op, `the profile has no map of ${fnName}`);
  return op.id;
}

function change<K extends PlanChange['kind']>(changes: PlanChange[], kind: K, opId?: string): Extract<PlanChange, { kind: K }> | undefined {
  return changes.find((c): c is Extract<PlanChange, { kind: K }> => c.kind === kind && (opId === undefined || c.opId === opId));
}

describe('model: levers on recorded dialect profiles', () => {
  it('tfjs-data map(augment): binds the main thread, gets no worker placement, and a conversion moves it to worker threads', () => {
    const profile = load('tfjs-augmented');
    const augment = opOf(profile, 'augment');
    const a = analyze(profile, TARGET);
    assert.equal(a.bottleneck.opId, augment);
    assert.match(a.bottleneck.reason, /tfjs-data runs it on the main thread only: converted to plumber-data, the plan can move it\./);
    const p = plan(profile, TARGET);
    assert.equal(change(p.changes, 'placement'), undefined);
    const convert = change(p.changes, 'convert');
    assert.ok(convert, JSON.stringify(p.changes));
    assert.equal(convert.from, 'tfjs-data');
    assert.deepEqual(
      convert.opIds,
      profile.ops.map((o) => o.id),
    );
    assert.equal(change(convert.then, 'placement', augment)?.to, 'worker');
    assert.ok(p.predictedRate > 1.05 * p.currentRate);
  });

  it('tfjs-data mapAsync(lookup): waits one call at a time, which only a conversion raises', () => {
    const profile = load('tfjs-lookups');
    const lookup = opOf(profile, 'lookup');
    const a = analyze(profile, TARGET);
    assert.equal(a.bottleneck.opId, lookup);
    assert.match(a.bottleneck.reason, /tfjs-data awaits its calls one at a time and has no knob for more/);
    const p = plan(profile, TARGET);
    assert.equal(change(p.changes, 'parallelism'), undefined);
    const convert = change(p.changes, 'convert');
    assert.ok(convert, JSON.stringify(p.changes));
    assert.ok((change(convert.then, 'parallelism', lookup)?.to ?? 0) >= 8, JSON.stringify(convert.then));
    assert.ok(p.predictedRate > 4 * p.currentRate);
  });

  it('Node streams map(lookup, { concurrency: 1 }): raises its concurrency, and proposes no conversion', () => {
    const profile = load('streams-lookups');
    const lookup = opOf(profile, 'lookup');
    assert.equal(analyze(profile, TARGET).bottleneck.opId, lookup);
    const p = plan(profile, TARGET);
    const raise = change(p.changes, 'parallelism', lookup);
    assert.ok(raise && raise.to >= 8, JSON.stringify(p.changes));
    assert.equal(changeTitle(raise, profile), `set concurrency of map(lookup) to ${raise.to}`);
    assert.equal(change(p.changes, 'convert'), undefined);
  });
});
