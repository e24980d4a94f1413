/**
 * The flow levers through the real runner (issue 54): the reshape bench's pipelines profiled as
 * written and with the lever as an override, the profile carrying what the model prices them from,
 * and the equivalence check holding (fuse: the same sequence; deterministic: false: the same
 * multiset, another order).
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { predict } from '../../../src/model';
import { checkEquivalence } from '../../../src/runner/equivalence';
import { flowUnoffered } from '../../../src/engine/reshape/flow-check';
import { runProfile } from '../../../src/runner/spawn';

const PIPELINES = path.resolve(__dirname, '../../../bench/reshape/pipelines');
const ADJACENT = path.join(PIPELINES, 'adjacent-worker-maps.ts');
const LONG_TAIL = path.join(PIPELINES, 'long-tail.ts');
const SMALL = path.resolve(__dirname, '../../fixtures/pipelines/long-tail-small.ts');
const BATCHED = path.resolve(__dirname, '../../fixtures/pipelines/unordered-batches.ts');

/** The id of the map of one export of BATCHED, from a short run. */
async function mapOf(exportName: string): Promise<string> {
  const p = await runProfile({ file: BATCHED, exportName, seconds: 0.3, warmupSeconds: 0, probes: false });
  const map = p.ops.find((o) => o.kind === 'map');
  assert.ok(map, JSON.stringify(p.error));
  return map.id;
}

describe('runner: fuse and deterministic as overrides', function () {
  this.timeout(180_000);

  it('runs the later of two adjacent worker maps in the earlier one’s tasks under a fuse override, with the same elements in the same order', async () => {
    const asWritten = await runProfile({ file: ADJACENT, seconds: 0.8, warmupSeconds: 0.3, probes: false });
    const maps = asWritten.ops.filter((o) => o.kind === 'map');
    assert.equal(maps.length, 2);
    const [parse, featurize] = maps;
    assert.ok(parse.counters.workerTasks > 0 && featurize.counters.workerTasks > 0);
    const fused = await runProfile({ file: ADJACENT, seconds: 0.8, warmupSeconds: 0.3, probes: false, overrides: { [featurize.id]: { fuse: true } } });
    const f = fused.ops.find((o) => o.id === featurize.id);
    const p = fused.ops.find((o) => o.id === parse.id);
    assert.equal(f?.knobs.fuse, true);
    assert.equal(f?.overridden, true);
    assert.equal(f?.counters.workerTasks, 0, 'featurize posts no task of its own');
    assert.ok((p?.counters.workerTasks ?? 0) > 0);
    assert.ok((f?.counters.calls ?? 0) > 0 && (f?.counters.workerCpuSeconds ?? 0) > 0, 'featurize keeps its own calls and CPU');
    const same = await checkEquivalence({ file: ADJACENT }, { file: ADJACENT, overrides: { [featurize.id]: { fuse: true } } }, { elements: 40 });
    assert.equal(same.equivalent, true, same.reason);
    assert.equal(same.sameSequence, true);
  });

  it('records the long tail of a map’s latency, prices the order it costs, and lets the same elements pass in another order', async () => {
    const profile = await runProfile({ file: LONG_TAIL, seconds: 1.5, warmupSeconds: 0.3, probes: false });
    const lookup = profile.ops.find((o) => o.kind === 'map');
    assert.ok(lookup);
    const h = lookup.counters.latencyHistogram ?? [];
    const calls = h.reduce((a, b) => a + b, 0);
    // Calls are counted as they start and timed as they settle: the window starts and ends with up to 8 in flight.
    assert.ok(Math.abs(calls - lookup.counters.asyncCalls) <= 8, `${calls} timed of ${lookup.counters.asyncCalls}`);
    // 40 ms calls land in bucket 15 (32.8–65.5 ms) or above; most calls are 2 ms (bucket 10–11).
    assert.ok(h.slice(15).reduce((a, b) => a + b, 0) > 0, JSON.stringify(h));
    assert.ok(h.slice(0, 13).reduce((a, b) => a + b, 0) > calls / 2, JSON.stringify(h));
    const ordered = predict(profile, {}).rate;
    const unordered = predict(profile, { [lookup.id]: { deterministic: false } }).rate;
    // 2.6× on an idle machine; about 1.3× beside two threads spinning on its two cores.
    assert.ok(unordered > 1.2 * ordered, `${ordered} → ${unordered}`);
    // The whole of a small pass: the same elements, in another order.
    const small = (await runProfile({ file: SMALL, seconds: 0.3, warmupSeconds: 0, probes: false })).ops.find((o) => o.kind === 'map');
    assert.ok(small);
    const v = await checkEquivalence({ file: SMALL }, { file: SMALL, overrides: { [small.id]: { deterministic: false } } }, { elements: 100, ordered: false });
    assert.equal(v.equivalent, true, v.reason);
    assert.equal(v.elements, 60);
    assert.equal(v.sameSequence, false, 'the slow elements come out later');
  });

  it('offers deterministic: false only when a whole pass yields the same rows: regrouped batches pass, a dropped remainder that changes with the order does not', async () => {
    const keeps = await mapOf('keepsAll');
    const change = { kind: 'deterministic' as const, opId: keeps, to: false as const, reason: '' };
    // The plan's other knobs run in both configurations: only the order differs.
    assert.equal(await flowUnoffered(change, BATCHED, 'keepsAll', {}, { [keeps]: { parallelism: 8, deterministic: false } }), undefined);
    const rows = await checkEquivalence({ file: BATCHED, exportName: 'keepsAll' }, { file: BATCHED, exportName: 'keepsAll', overrides: { [keeps]: { deterministic: false } } }, { elements: 100, wholePassRows: true });
    assert.equal(rows.equivalent, true, rows.reason);
    assert.equal(rows.elements, 60, 'every row of every batch is compared');
    assert.equal(rows.sameSequence, false, 'the first element comes out last');
    const drops = await mapOf('dropsLast');
    const why = await flowUnoffered({ ...change, opId: drops }, BATCHED, 'dropsLast');
    assert.match(why ?? '', /could not be shown to yield the same elements: Element \d+ of 56 differs/);
    // A sample that stops before the end cannot compare a change of order.
    const cut = await checkEquivalence({ file: BATCHED, exportName: 'keepsAll' }, { file: BATCHED, exportName: 'keepsAll', overrides: { [keeps]: { deterministic: false } } }, { elements: 3, wholePassRows: true });
    assert.equal(cut.equivalent, false);
    assert.match(cut.reason, /whole pass/);
  });
});
