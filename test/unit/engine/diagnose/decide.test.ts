/**
 * The keep/drop decision (src/engine/diagnose/decide.ts) on configurations built by hand: no run,
 * no clock, only what was measured.
 */
import * as assert from 'node:assert/strict';
import { chooseKept, lostAlone, verdictOf, type Measurements } from '../../../../src/engine/diagnose/decide';
import { keyOf, unmeasured, type Config } from '../../../../src/engine/diagnose/config';
import type { PlanChange } from '../../../../src/shared/analysis';

const fetch: PlanChange = { kind: 'parallelism', opId: 'fetch', from: 1, to: 8, reason: 'More calls in flight.' };
const decode: PlanChange = { kind: 'placement', opId: 'decode', to: 'worker', parallelism: 2, reason: 'Off the main thread.' };

/** A configuration of `changes` measured at `rate` in five one-second windows spread ±1%. */
function at(changes: PlanChange[], rate: number): Config {
  const c = unmeasured(keyOf(changes), changes, {});
  c.runs = 1;
  c.slices = [-2, -1, 0, 1, 2].map((k) => ({ elements: rate * (1 + k * 0.01), seconds: 1 }));
  return c;
}

/** A configuration of `changes` whose one run failed. */
function failed(changes: PlanChange[], message: string): Config {
  const c = unmeasured(keyOf(changes), changes, {});
  c.runs = 1;
  c.error = { kind: 'throw', message };
  return c;
}

/**
 * What verification measured of the plan [fetch, decode]: as written and the plan, then `others`
 * in the order they ran; `parts` of them were measured as parts of the plan (left out in turn, or
 * run by a pass).
 */
function measurements(asWritten: Config, planned: Config, others: Config[] = [], parts: Config[] = []): Measurements {
  const all = [fetch, decode];
  const order = [asWritten, planned, ...others];
  return {
    all,
    asWritten,
    planned,
    configs: new Map(order.map((c) => [c.key, c])),
    order,
    measuredParts: new Set(parts),
    name: (c) => (c === asWritten ? 'as written' : c === planned ? 'the plan' : c.changes.map((x) => x.opId).join(' + ')),
  };
}

describe('diagnose: the decision on what was measured', () => {
  it('keeps the plan when it measured reliably faster than as written', () => {
    const m = measurements(at([], 100), at([fetch, decode], 200));
    assert.equal(chooseKept(m), m.planned);
  });

  it('keeps nothing when no configuration measured reliably faster than as written', () => {
    const m = measurements(at([], 100), at([fetch, decode], 101), [at([fetch], 99), at([decode], 100)]);
    assert.equal(chooseKept(m), undefined);
  });

  it('keeps a part of the plan over the plan only when it measured reliably faster than the plan', () => {
    const close = measurements(at([], 100), at([fetch, decode], 200), [at([fetch], 205)]);
    assert.equal(chooseKept(close), close.planned, "the plan is the model's best guess: a part within the spread of it does not replace it");
    const faster = at([fetch], 300);
    assert.equal(chooseKept(measurements(at([], 100), at([fetch, decode], 200), [faster])), faster);
  });

  it('never keeps a configuration holding a change that measured slower alone, or whose run failed alone', () => {
    const slower = measurements(at([], 100), at([fetch, decode], 200), [at([decode], 80), at([fetch], 150)]);
    assert.deepEqual(chooseKept(slower)?.changes, [fetch]);
    const broken = measurements(at([], 100), at([fetch, decode], 200), [failed([decode], 'the worker could not load decode'), at([fetch], 150)]);
    assert.deepEqual(chooseKept(broken)?.changes, [fetch]);
  });

  it('keeps a part measured beside the plan that the plan did not beat beyond the spread: what it leaves out was not measured to help', () => {
    const part = at([fetch], 195);
    const m = measurements(at([], 100), at([fetch, decode], 200), [part], [part]);
    assert.equal(chooseKept(m), part);
    // The same part, measured alone rather than as a part of the plan, does not say that.
    const alone = measurements(at([], 100), at([fetch, decode], 200), [at([fetch], 195)]);
    assert.equal(chooseKept(alone), alone.planned);
  });

  it('lets the plan keep a change the plan measured reliably faster with than without', () => {
    const part = at([fetch], 150);
    const m = measurements(at([], 100), at([fetch, decode], 200), [part], [part]);
    assert.equal(chooseKept(m), m.planned);
  });

  it('counts nothing as lost alone in a plan of one change: alone is the plan', () => {
    const asWritten = at([], 100);
    const planned = at([fetch], 80);
    const m: Measurements = {
      all: [fetch],
      asWritten,
      planned,
      configs: new Map([
        [asWritten.key, asWritten],
        [planned.key, planned],
      ]),
      order: [asWritten, planned],
      measuredParts: new Set(),
      name: () => 'the plan',
    };
    assert.equal(lostAlone(m).size, 0);
    assert.equal(lostAlone(measurements(at([], 100), at([fetch, decode], 80), [at([fetch], 80)])).get('parallelism:fetch'), 'measured 0.8× alone');
  });

  it('says a gain with what the kept configuration measured, and why each change left out went', () => {
    const m = measurements(at([], 100), at([fetch, decode], 200), [at([decode], 80), at([fetch], 150)]);
    const { verification, keep } = verdictOf(m, chooseKept(m));
    assert.equal(verification.verdict, 'gain');
    assert.deepEqual(keep, [fetch]);
    assert.equal(verification.speedup, 1.5);
    assert.match(verification.summary, /^verified 1\.50× ± 0\.0\d$/);
    assert.deepEqual(verification.kept.changes, ['parallelism:fetch']);
    assert.deepEqual(verification.dropped, [{ change: decode, why: 'measured 0.8× alone' }]);
  });

  it('says a change went because the plan measured faster without it, whatever it measured alone', () => {
    const without = at([fetch], 300);
    const m = measurements(at([], 100), at([fetch, decode], 200), [without, at([decode], 120)], [without]);
    const v = verdictOf(m, chooseKept(m)).verification;
    assert.deepEqual(v.dropped, [{ change: decode, why: 'the plan measured 2.0× with it and 3.0× without' }]);
  });

  it('says a change kept out by a leaner part was not measured to help', () => {
    const part = at([fetch], 195);
    const m = measurements(at([], 100), at([fetch, decode], 200), [part], [part]);
    const v = verdictOf(m, chooseKept(m)).verification;
    assert.deepEqual(v.dropped, [{ change: decode, why: 'not measured to help: the plan measured 2.0× with it and 1.9× without' }]);
  });

  it('says no reliable gain with what the plan and each other configuration measured, and keeps nothing', () => {
    const m = measurements(at([], 100), at([fetch, decode], 101), [at([fetch], 99), failed([decode], 'boom')]);
    const { verification, keep } = verdictOf(m, chooseKept(m));
    assert.equal(verification.verdict, 'no-gain');
    assert.deepEqual(keep, []);
    assert.equal(verification.speedup, 1);
    assert.equal(verification.summary, 'no reliable gain on this machine right now: the plan measured 101/s ± 1.98 against 100/s ± 1.96 as written (1.01× ± 0.03); fetch: 1.0×, decode: failed');
    assert.deepEqual(
      verification.dropped.map((d) => d.why),
      ['measured 1.0× alone', 'its run failed alone: boom'],
    );
  });

  it('says the plan failed when its run failed and no part of it measured a gain', () => {
    const m = measurements(at([], 100), failed([fetch, decode], 'the library refused the override'));
    const { verification, keep } = verdictOf(m, chooseKept(m));
    assert.equal(verification.verdict, 'error');
    assert.deepEqual(keep, []);
    assert.equal(verification.summary, "verification failed: the plan's run failed: the library refused the override");
    assert.deepEqual(
      verification.dropped.map((d) => d.why),
      ["the plan's run failed: the library refused the override", "the plan's run failed: the library refused the override"],
    );
  });
});
