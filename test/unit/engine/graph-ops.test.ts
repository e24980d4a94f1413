/**
 * The graph knows issue 11's operators: their kinds, their knobs with the exact text they span, the
 * mixtures as operators with several inputs in order, and `reduce` as the end of a chain.
 */
import * as assert from 'node:assert/strict';
import { editsForChanges } from '../../../src/engine/fixes/edits';
import type { FileGraph, GraphOp } from '../../../src/engine/graph/types';
import { graphOf as virtualGraph, spanned } from './virtualGraph';

const graphOf = (lines: string[]): { graph: FileGraph; text: string } => virtualGraph(lines, 'issue11-virtual.ts');

function value(op: GraphOp, key: string): unknown {
  const k = op.knobs[key];
  return k?.state === 'literal' ? k.value : k?.state;
}

describe('server graph: windows, shards, mixtures, bucketing and padded batches', () => {
  const { graph, text } = graphOf([
    "import { range, from, sampleFromDatasets, chooseFromDatasets } from 'plumber-data';",
    'function lengthOf(x: number[]): number { return x.length; }',
    'export const text = range(1000)',
    '  .shard(4, 1)',
    '  .enumerate(10)',
    '  .map(([i, x]) => [i, x])',
    '  .ignoreErrors({ logWarning: true })',
    '  .scan(0, (s: number, x: unknown) => [s + 1, x])',
    '  .window(5, { shift: 2, stride: 1, dropRemainder: true })',
    '  .flatMap((w) => w)',
    '  .map((x) => [x])',
    '  .bucketBySequenceLength(lengthOf, [8, 16], [32, 16, 8], { dropRemainder: false })',
    '  .rebatch(64, { dropRemainder: true })',
    '  .prefetch(2);',
    'export const padded = from([[1], [1, 2], [1, 2, 3]]).paddedBatch(2, { paddingValues: 0 }).groupByWindow((x) => 0, (k, ds) => ds, { windowSize: 3 });',
    'const a = range(10);',
    'const b = range(20).map((x) => x * 2);',
    'export const mixed = sampleFromDatasets([a, b], { weights: [0.8, 0.2], seed: 7 }).batch(4);',
    'const sources = [range(5), range(6)];',
    'export const chosen = chooseFromDatasets(sources, range(3).map((i) => i % 2));',
    'export const total = range(7).map((x) => x + 1).reduce(0, (s: number, x: number) => s + x);',
  ]);
  const pipeline = (name: string) => graph.pipelines.find((p) => p.name === name)!;
  const op = (name: string, kind: string) => pipeline(name).ops.find((o) => o.kind === kind)!;

  it('knows every new method as an operator of its kind, in chain order', () => {
    assert.deepEqual(
      pipeline('text').ops.map((o) => o.kind),
      ['range', 'shard', 'enumerate', 'map', 'ignoreErrors', 'scan', 'window', 'flatMap', 'map', 'bucketBySequenceLength', 'rebatch', 'prefetch'],
    );
    assert.deepEqual(
      pipeline('padded').ops.map((o) => o.kind),
      ['from', 'paddedBatch', 'groupByWindow'],
    );
  });

  it('reads shard, enumerate, window and rebatch knobs with the ranges of their literals', () => {
    const shard = op('text', 'shard');
    assert.equal(shard.label, 'shard(4, 1)');
    assert.deepEqual([value(shard, 'numShards'), value(shard, 'shardIndex')], [4, 1]);
    assert.equal(spanned(text, shard.knobs['shardIndex']), '1');
    assert.equal(value(op('text', 'enumerate'), 'start'), 10);
    const win = op('text', 'window');
    assert.deepEqual(
      ['batchSize', 'shift', 'stride', 'dropRemainder'].map((k) => value(win, k)),
      [5, 2, 1, true],
    );
    assert.equal(spanned(text, win.knobs['shift']), '2');
    assert.equal(win.options?.state, 'object');
    const rebatch = op('text', 'rebatch');
    assert.deepEqual([value(rebatch, 'batchSize'), value(rebatch, 'dropRemainder')], [64, true]);
    assert.equal(value(op('text', 'ignoreErrors'), 'logWarning'), true);
  });

  it('reads bucketing boundaries and batch sizes as expressions a fix must not touch, and its length function', () => {
    const bucket = op('text', 'bucketBySequenceLength');
    assert.equal(bucket.knobs['bucketBoundaries']?.state, 'expression');
    assert.equal(spanned(text, bucket.knobs['bucketBoundaries']), '[8, 16]');
    assert.equal(spanned(text, bucket.knobs['bucketBatchSizes']), '[32, 16, 8]');
    assert.equal(value(bucket, 'dropRemainder'), false);
    assert.equal(value(bucket, 'noPadding'), 'absent');
    assert.equal(bucket.fn?.name, 'lengthOf');
    assert.equal(bucket.label, 'bucketBySequenceLength(lengthOf)');
    assert.equal(op('text', 'scan').fn?.form, 'inline');
  });

  it('reads paddedBatch and groupByWindow knobs, and the size of a literal source', () => {
    const pb = op('padded', 'paddedBatch');
    assert.equal(value(pb, 'batchSize'), 2);
    assert.equal(value(pb, 'paddingValues'), 0);
    assert.equal(value(op('padded', 'groupByWindow'), 'windowSize'), 3);
    assert.equal(op('padded', 'from').cardinality, 3);
    assert.equal(op('text', 'range').cardinality, 1000);
  });

  it('makes sampleFromDatasets a multi-input operator with its datasets as inputs in order, and marks it random', () => {
    const p = pipeline('mixed');
    const sample = op('mixed', 'sampleFromDatasets');
    const [a, b] = sample.inputs.map((id) => p.ops.find((o) => o.id === id)!);
    assert.equal(sample.inputs.length, 2);
    assert.equal(a!.kind, 'range');
    assert.equal(a!.cardinality, 10);
    assert.equal(b!.kind, 'map');
    assert.equal(p.ops.find((o) => o.id === b!.inputs[0])!.cardinality, 20);
    assert.equal(spanned(text, sample.knobs['weights']), '[0.8, 0.2]');
    assert.equal(value(sample, 'seed'), 7);
    assert.equal(sample.random?.reason, 'sample');
    assert.equal(p.rootId, op('mixed', 'batch').id);
    assert.ok(p.ops.indexOf(sample) > p.ops.indexOf(b!), 'inputs come before their consumer');
  });

  it('makes chooseFromDatasets take the datasets of an array held by a const, then its choice dataset last', () => {
    const p = pipeline('chosen');
    const choose = op('chosen', 'chooseFromDatasets');
    const inputs = choose.inputs.map((id) => p.ops.find((o) => o.id === id)!);
    assert.deepEqual(
      inputs.map((o) => [o.kind, o.cardinality]),
      [
        ['range', 5],
        ['range', 6],
        ['map', undefined],
      ],
    );
    assert.equal(p.rootId, choose.id);
  });

  it('ends a chain at reduce without making reduce an operator', () => {
    assert.equal(
      graph.pipelines.some((p) => p.ops.some((o) => (o.kind as string) === 'reduce')),
      false,
    );
    const chain = graph.pipelines.find((p) => p.ops.length === 2 && p.ops[1]!.kind === 'map' && p.ops[0]!.cardinality === 7);
    assert.ok(chain, 'the chain before reduce is a pipeline of its own');
    assert.equal(
      graph.pipelines.some((p) => p.name === 'total'),
      false,
    );
  });
});

describe("fixes on issue 11's operators", () => {
  it('lists the options each operator accepts, and the fix engine refuses to write one the operator does not take', () => {
    const { graph } = graphOf(["import { range } from 'plumber-data';", 'export const p = range(100).window(4, { shift: 2 }).flatMap((w) => w).paddedBatch(8).prefetch(2);']);
    const pipeline = graph.pipelines[0]!;
    const win = pipeline.ops.find((o) => o.kind === 'window')!;
    assert.deepEqual(win.optionKeys, ['shift', 'stride', 'dropRemainder']);
    const ctx = { pipeline, graphOf: () => graph, textOf: () => '', opFor: (id: string) => pipeline.ops.find((o) => o.id === id) };
    const refused = editsForChanges([{ kind: 'parallelism', opId: win.id, from: undefined, to: 4, reason: 'test' }], ctx);
    assert.equal(refused.ok, false);
    assert.match(!refused.ok ? refused.reason : '', /window\(4\) takes no parallelism option/);
    const padded = pipeline.ops.find((o) => o.kind === 'paddedBatch')!;
    assert.equal(editsForChanges([{ kind: 'parallelism', opId: padded.id, from: undefined, to: 4, reason: 'test' }], ctx).ok, false);
  });
});
