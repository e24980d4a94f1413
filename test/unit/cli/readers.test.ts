/**
 * `plumber plan` on the readers' examples (issue 51): the built CLI, a real process, profiles the
 * gzip-csv example's csv reader with its counters, names the part of its work that binds and
 * plans its knobs; and plans the webdataset-shards example, whose readers an interleave reads.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { ensureShards } from '../../../examples/webdataset-shards/prepare';
import { ROOT, plumber } from './bin';

// The example read through once (no repeat), so no cache can pay and the reader's knobs are what the plan changes.
const ONCE = path.join(ROOT, 'test/fixtures/pipelines/gzip-csv-once.ts');

interface Out {
  profile: {
    ops: Array<{
      id: string;
      kind: string;
      knobs: { numShards?: number };
      counters: { parseSeconds?: number; decompressSeconds?: number; bytesDecompressed?: number; shardsOpened?: number };
      moveCost?: unknown;
      moveBlocked?: unknown;
    }>;
    machine: unknown;
  };
  analysis: { bottleneck: { opId?: string; reason: string } };
  plan: { changes: Array<{ kind: string; opId: string; to?: unknown; parallelism?: number }>; notes?: string[]; currentRate: number; predictedRate: number; coresNote?: string };
}

describe('plumber plan on the gzip-csv example', function () {
  // The limit only stops a hang: the example's shards are generated on first use.
  this.timeout(180_000);

  it('names the part of the csv reader’s work that binds and plans its shards at once or worker placement', async () => {
    // Planned for the machine's 2 cores whatever else runs on it, and not verified: the plan, not a
    // measurement, is under test.
    const r = await plumber('plan', ONCE, '--seconds', '1.5', '--warmup', '0.5', '--cores', '2', '--no-verify', '--passes', '1', '--json', '--quiet');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Out;
    const reader = out.profile.ops.find((o) => o.kind === 'csv');
    assert.ok(reader, `no csv op in ${out.profile.ops.map((o) => o.kind).join(', ')}`);
    assert.equal(reader.id, '7:21');
    assert.equal(reader.knobs.numShards, 8);
    assert.ok((reader.counters.parseSeconds ?? 0) > 0 && (reader.counters.bytesDecompressed ?? 0) > 0, JSON.stringify(reader.counters));
    assert.equal(out.analysis.bottleneck.opId, '7:21', out.analysis.bottleneck.reason);
    assert.match(out.analysis.bottleneck.reason, /csv\S* binds on (reading \(waiting on the disk or the network\)|decompressing|parsing): [\d.]+ [µm]s per row[^;]*; 1 of its 8 shards read at once\./);
    const planned = out.plan.changes.filter((c) => c.opId === '7:21');
    assert.ok(
      planned.some((c) => (c.kind === 'placement' && c.to === 'worker' && (c.parallelism ?? 0) >= 1 && (c.parallelism ?? 0) <= 8) || (c.kind === 'parallelism' && Number(c.to) >= 2 && Number(c.to) <= 8)),
      JSON.stringify(out.plan.changes),
    );
  });
});

describe('plumber plan on the webdataset-shards example', function () {
  // The limit only stops a hang.
  this.timeout(300_000);

  // Generated here, on first use, not while the profile's process loads the example: a process
  // that has just encoded the pictures is not the pipeline's.
  before(function () {
    this.timeout(120_000);
    ensureShards();
  });

  it('profiles the webdataset readers inside the interleave, finds the decode binding, and plans its move or nothing', async () => {
    const r = await plumber('plan', path.join(ROOT, 'examples/webdataset-shards/pipeline.ts'), '--seconds', '1.5', '--warmup', '0.5', '--cores', '2', '--no-verify', '--passes', '1', '--json', '--quiet');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Out;
    const reader = out.profile.ops.find((o) => o.kind === 'webdataset');
    assert.ok(reader, `no webdataset op in ${out.profile.ops.map((o) => o.kind).join(', ')}`);
    // Each inner webdataset(shard) reads one tar shard.
    assert.equal(reader.knobs.numShards, 1);
    assert.ok((reader.counters.shardsOpened ?? 0) >= 1 || (reader.counters.parseSeconds ?? 0) > 0, JSON.stringify(reader.counters));
    // Every JPEG is decoded on the main thread: the decode binds.
    assert.equal(out.analysis.bottleneck.opId, '13:4', out.analysis.bottleneck.reason);
    // The plan changes the decode, or proposes nothing and predicts the rate measured: what a move
    // gains here rests on the decode's timing in a worker thread, and jpeg-js's first calls there
    // take about half the worker's warm-up, so that timing may settle while the decode still gets
    // cheaper (read up to twice the main thread's) or not settle (priced from the main thread's).
    const { changes, notes, currentRate, predictedRate, coresNote } = out.plan;
    const decode = out.profile.ops.find((o) => o.id === '13:4');
    const why = JSON.stringify({ notes, currentRate, predictedRate, coresNote, bottleneck: out.analysis.bottleneck.reason, moveCost: decode?.moveCost, moveBlocked: decode?.moveBlocked, cores: out.profile.machine });
    assert.ok(changes.some((c) => c.opId === '13:4') || (changes.length === 0 && predictedRate === currentRate), why);
  });
});
