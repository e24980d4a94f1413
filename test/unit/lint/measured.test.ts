/**
 * Lints from a profile, on real source joined with a profile of the same pipeline: the padding a
 * paddedBatch or a bucketing measured, and a shuffle buffer sized against the dataset the run
 * counted when the source does not say how big it is.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import type { PipelineGraph } from '../../../src/engine/graph/types';
import { joinOps } from '../../../src/engine/join';
import { measuredLints, type MeasuredPipeline } from '../../../src/engine/lints/measured';
import type { Profile } from '../../../src/shared/profile';
import { ProfileBuilder, type OpSpec } from '../model/builder';
import { FIXTURES } from '../server/helpers';

const SOURCE = [
  "import { files, range } from 'plumber-data';",
  'export function tokenize(s: string): number[] { return [...s].map((c) => c.charCodeAt(0)); }',
  'export function lengthOf(x: number[]): number { return x.length; }',
  "export const padded = files('data/*.txt').map(tokenize).paddedBatch(8).prefetch(2);",
  "export const bucketed = files('data/*.txt').map(tokenize).bucketBySequenceLength(lengthOf, [16], [8, 4]).prefetch(2);",
  "export const shuffled = files('data/*.txt').shuffle(50).prefetch(2);",
  'export const counted = range(100000).shuffle(50).prefetch(2);',
  'export function decode(x: number): number { return x + 1; }',
  'export const filled = range(100000).map(decode).shuffle(10000).batch(10);',
];

function pipelines(): PipelineGraph[] {
  const ws = new GraphWorkspace({
    onError: (f, e) => {
      throw new Error(`${f}: ${String(e)}`);
    },
  });
  const file = path.join(FIXTURES, 'lints', 'measured-virtual.ts');
  ws.setText(file, SOURCE.join('\n'));
  return ws.graphOf(file).pipelines;
}

/** `graph` joined with a profile whose ops are `specs` (one per graph op, in order), ids as the graph's. */
function view(graph: PipelineGraph, specs: OpSpec[]): MeasuredPipeline {
  const b = new ProfileBuilder();
  for (const s of specs) b.op(s);
  const built = b.build({ rootElements: 100, rate: 10 });
  const ids = new Map(built.ops.map((o, i) => [o.id, graph.ops[i]!.id]));
  const profile: Profile = {
    ...built,
    pipeline: { ...built.pipeline, rootId: graph.rootId },
    ops: built.ops.map((o) => ({ ...o, id: ids.get(o.id)!, inputs: o.inputs.map((i) => ids.get(i)!) })),
  };
  return { graph, profile, byProfileId: joinOps(graph, profile).byProfileId };
}

describe('lints from a profile', () => {
  const all = pipelines();
  const named = (n: string) => all.find((p) => p.name === n)!;

  it("says what share of a paddedBatch's positions is padding, with the measured lengths and a bucketing hint", () => {
    const v = view(named('padded'), [{ kind: 'files' }, { kind: 'map', fnName: 'tokenize' }, { kind: 'paddedBatch', batchSize: 8, positionsPerElement: 50, paddedShare: 0.38 }, { kind: 'prefetch' }]);
    const [f, ...rest] = measuredLints([v]);
    assert.equal(rest.length, 0);
    assert.equal(f!.rule, 'plumber/padding-waste');
    assert.equal(f!.op.kind, 'paddedBatch');
    assert.equal(
      f!.message,
      "38% of the positions in paddedBatch(8)'s batches are padding (measured: elements hold 31 positions on average and are padded to 50). bucketBySequenceLength with boundaries around the mean length (31 positions) would cut it: elements of similar lengths share a batch and pad less.",
    );
  });

  it('is quiet when little is padding, and tells a bucketing that its buckets are too wide', () => {
    const little = view(named('padded'), [{ kind: 'files' }, { kind: 'map', fnName: 'tokenize' }, { kind: 'paddedBatch', batchSize: 8, positionsPerElement: 50, paddedShare: 0.1 }, { kind: 'prefetch' }]);
    assert.deepEqual(measuredLints([little]), []);
    const wide = view(named('bucketed'), [{ kind: 'files' }, { kind: 'map', fnName: 'tokenize' }, { kind: 'bucketBySequenceLength', pullsPerOutput: 6, positionsPerElement: 40, paddedShare: 0.5 }, { kind: 'prefetch' }]);
    const [f] = measuredLints([wide]);
    assert.match(f!.message, /^50% of the positions in bucketBySequenceLength\(lengthOf\)'s batches are padding .* Its buckets are too wide/);
  });

  it('sizes a shuffle buffer against the dataset the run counted when the source does not say, and only then', () => {
    const shuffled = view(named('shuffled'), [{ kind: 'files', cardinality: 20000 }, { kind: 'shuffle', bufferSize: 50 }, { kind: 'prefetch' }]);
    const [f] = measuredLints([shuffled]);
    assert.equal(f!.rule, 'plumber/shuffle-buffer-small');
    assert.match(f!.message, /^shuffle\(50\) holds 0\.3% of the 20,000 elements it shuffles \(as the library counted it in the profiled run\)/);
    const enough = view(named('shuffled'), [{ kind: 'files', cardinality: 400 }, { kind: 'shuffle', bufferSize: 50 }, { kind: 'prefetch' }]);
    assert.deepEqual(measuredLints([enough]), []);
    // range(100000) states its size: the static lint reports it, the measured one does not repeat it.
    const counted = view(named('counted'), [{ kind: 'range', cardinality: 100000 }, { kind: 'shuffle', bufferSize: 50 }, { kind: 'prefetch' }]);
    assert.deepEqual(measuredLints([counted]), []);
  });

  it('reads a profile written before the padding counters existed without a finding', () => {
    const v = view(named('padded'), [{ kind: 'files' }, { kind: 'map', fnName: 'tokenize' }, { kind: 'paddedBatch', batchSize: 8 }, { kind: 'prefetch' }]);
    for (const op of v.profile!.ops) {
      const c = op.counters as unknown as Record<string, unknown>;
      delete c['paddedPositions'];
      delete c['totalPositions'];
    }
    assert.deepEqual(measuredLints([v]), []);
  });

  it('says when a shuffle after expensive work fills for most of the first batch, naming the work; quiet when the buffer fills fast', () => {
    // 10,000 elements behind a 4 ms decode: 40 s at the model's bound, 80 s at the run's measured efficiency (10 batches/s of a bound of 25, taken at its floor of 0.5).
    const slow = view(named('filled'), [
      { kind: 'range', cardinality: 100000 },
      { kind: 'map', fnName: 'decode', self: 4e-3 },
      { kind: 'shuffle', bufferSize: 10000 },
      { kind: 'batch', batchSize: 10 },
    ]);
    const findings = measuredLints([slow]).filter((f) => f.rule === 'plumber/shuffle-fill-dominates');
    assert.equal(findings.length, 1);
    assert.equal(findings[0]!.op.kind, 'shuffle');
    assert.match(findings[0]!.message, /^The first batch waits ≈ 80 s of its ≈ 80\.1 s \(predicted from the profiled run\) for this shuffle: the shuffle buffer of 10,000 fills behind map\(decode\)/);
    const fast = view(named('filled'), [
      { kind: 'range', cardinality: 100000 },
      { kind: 'map', fnName: 'decode', self: 20e-6 },
      { kind: 'shuffle', bufferSize: 10000 },
      { kind: 'batch', batchSize: 10 },
    ]);
    assert.deepEqual(
      measuredLints([fast]).filter((f) => f.rule === 'plumber/shuffle-fill-dominates'),
      [],
    );
  });
});
