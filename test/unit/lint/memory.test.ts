/**
 * The measured memory rule on real source joined with a profile of the same pipeline: a shuffle
 * buffer whose elements, sized as the run measured them, would take the process past V8's heap
 * limit once it fills; and one that fits, which is not flagged.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import type { PipelineGraph } from '../../../src/engine/graph/types';
import { joinOps } from '../../../src/engine/join';
import { measuredLints, type MeasuredPipeline } from '../../../src/engine/lints/measured';
import { allRules } from '../../../src/engine/lints/catalog';
import type { Profile } from '../../../src/shared/profile';
import { ProfileBuilder, type OpSpec } from '../model/builder';
import { FIXTURES } from '../server/helpers';

const SOURCE = [
  "import { range } from 'plumber-data';",
  'export function decode(i: number): Float64Array { return new Float64Array(1250).fill(i); }',
  'export const big = range(1000000).map(decode).shuffle(1000000).prefetch(2);',
  'export const small = range(1000000).map(decode).shuffle(1000).prefetch(2);',
  'export async function load(i: number): Promise<Float64Array> { return new Float64Array(1250).fill(i); }',
  'export const waits = range(1000000).map(load).prefetch(500000);',
];

function pipelines(): PipelineGraph[] {
  const ws = new GraphWorkspace({
    onError: (f, e) => {
      throw new Error(`${f}: ${String(e)}`);
    },
  });
  const file = path.join(FIXTURES, 'lints', 'memory-virtual.ts');
  ws.setText(file, SOURCE.join('\n'));
  return ws.graphOf(file).pipelines;
}

/** `graph` joined with a profile whose ops are `specs`, ids as the graph's, with the memory the runner measures. */
function view(graph: PipelineGraph, specs: OpSpec[]): MeasuredPipeline {
  const b = new ProfileBuilder({ heapLimitBytes: 4e9 });
  for (const s of specs) b.op(s);
  const built = b.build({ rootElements: 1000, rate: 1000 });
  const ids = new Map(built.ops.map((o, i) => [o.id, graph.ops[i]!.id]));
  const profile: Profile = {
    ...built,
    run: { ...built.run, baseRssBytes: 100e6, windowPeakRssBytes: 150e6 },
    pipeline: { ...built.pipeline, rootId: graph.rootId },
    ops: built.ops.map((o) => ({ ...o, id: ids.get(o.id)!, inputs: o.inputs.map((i) => ids.get(i)!) })),
  };
  return { graph, profile, byProfileId: joinOps(graph, profile).byProfileId };
}

/** range → map(decode) of 10 kB elements on the heap → shuffle(n) → prefetch(2). */
const specs = (n: number): OpSpec[] => [
  { kind: 'range', cardinality: 1e6, bytes: 8 },
  { kind: 'map', fnName: 'decode', self: 1e-5, bytes: 10e3, heapBytes: 10.1e3, heldSizeBytes: 10e3, cardinality: 1e6 },
  { kind: 'shuffle', bufferSize: n, bytes: 10e3 },
  { kind: 'prefetch', bufferSize: 2, bytes: 10e3 },
];

describe('lints from a profile: memory past the heap limit', () => {
  const all = pipelines();
  const named = (n: string) => all.find((p) => p.name === n)!;

  it('warns on a shuffle buffer whose measured elements would pass the heap limit once full, naming it and its bytes', () => {
    const found = measuredLints([view(named('big'), specs(1_000_000))]).filter((f) => f.rule === 'plumber/memory-past-heap-limit');
    assert.equal(found.length, 1);
    const f = found[0]!;
    assert.equal(f.severity, 'warning');
    assert.equal(f.op.kind, 'shuffle');
    // 1,000,000 elements × 10.1 kB = 10.1 GB, past the 4 GB limit.
    assert.match(f.message, /past V8's heap limit of 4 GB: the shuffle buffer of shuffle\(1000000\) \(1,000,000 elements\) holds ≈ 10\.1 GB once full/);
  });

  it('warns on a prefetch its consumer drains (one element expected in it) that would pass the heap limit full, and says which figure it used', () => {
    // An awaited load of 10 ms, one at a time, binds: the prefetch after it holds one element while
    // the consumer keeps up, 500,000 × 10.1 kB = 5.05 GB when the consumer pauses (5.2 GB with the base and the working memory).
    const waits: OpSpec[] = [
      { kind: 'range', cardinality: 1e6, bytes: 8 },
      { kind: 'map', fnName: 'load', latency: 0.01, bytes: 10e3, heapBytes: 10.1e3, heldSizeBytes: 10e3, cardinality: 1e6 },
      { kind: 'prefetch', bufferSize: 500_000, bytes: 10e3 },
    ];
    const found = measuredLints([view(named('waits'), waits)]).filter((f) => f.rule === 'plumber/memory-past-heap-limit');
    assert.equal(found.length, 1);
    assert.match(
      found[0]!.message,
      /^Projected peak memory with every buffer full ≈ 5\.2 GB \(≈ [\d.]+ MB expected while its consumer keeps up\) is past V8's heap limit of 4 GB: the prefetch buffer of prefetch\(500000\)/,
    );
  });

  it('says nothing of a shuffle buffer that fits', () => {
    const found = measuredLints([view(named('small'), specs(1000))]).filter((f) => f.rule === 'plumber/memory-past-heap-limit');
    assert.deepEqual(found, []);
  });

  it('is listed with its help in the rule catalog, as a measured rule', () => {
    const rule = allRules().find((r) => r.id === 'plumber/memory-past-heap-limit');
    assert.ok(rule?.measured);
    assert.match(rule.help, /heap limit/);
  });
});
