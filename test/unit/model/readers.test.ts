import * as assert from 'node:assert/strict';
import { analyze, plan } from '../../../src/model';
import { READER_KINDS as MODEL_READERS, readerParts } from '../../../src/model/readers';
import { READER_KINDS } from '../../../src/data/tracing';
import type { PlanChange } from '../../../src/shared/analysis';
import type { OpCounters, Profile } from '../../../src/shared/profile';
import { ProfileBuilder } from './builder';

const id = ProfileBuilder.id;

function change<K extends PlanChange['kind']>(changes: PlanChange[], kind: K, opId?: string): Extract<PlanChange, { kind: K }> | undefined {
  return changes.find((c): c is Extract<PlanChange, { kind: K }> => c.kind === kind && (opId === undefined || c.opId === opId));
}

interface ReaderSpec {
  kind?: 'csv' | 'jsonLines' | 'tfrecord';
  /** Seconds per element of each part. */
  read?: number;
  decompress?: number;
  parse?: number;
  shards?: number;
  parallelism?: number;
  rate: number;
  elements?: number;
}

/**
 * A reader feeding a batch(32), with the counters the reader keeps: its parse time on the main
 * thread (its own time), decompression on libuv's pool (the process's other CPU) and its waits.
 */
function readerProfile(s: ReaderSpec, patch?: (c: OpCounters) => void): Profile {
  const elements = s.elements ?? 100;
  const b = new ProfileBuilder({ cores: 2 }).op({ kind: s.kind ?? 'csv', ownPerElement: s.parse ?? 0, parallelism: s.parallelism ?? 1, bytes: 200, ...(s.shards !== undefined ? { numShards: s.shards } : {}) }).batch(32);
  const profile = b.build({ rootElements: elements, rate: s.rate, otherCpuSeconds: elements * 32 * (s.decompress ?? 0), availableCores: 2 });
  const c = profile.ops[0]!.counters;
  c.parseSeconds = c.produced * (s.parse ?? 0);
  c.decompressSeconds = c.produced * (s.decompress ?? 0);
  c.ioWaitSeconds = c.produced * (s.read ?? 0);
  c.bytesDecompressed = c.produced * 200;
  c.shardsOpened = Math.min(s.shards ?? 1, s.parallelism ?? 1);
  c.waitSeconds += c.ioWaitSeconds;
  patch?.(c);
  return profile;
}

describe('model: readers', () => {
  it('knows the same reader kinds as the library', () => {
    assert.deepEqual([...MODEL_READERS].sort(), [...READER_KINDS].sort());
  });

  it('says a csv that parses on the main thread binds on parsing, per row, and how many of its shards it reads at once', () => {
    const profile = readerProfile({ parse: 38e-6, shards: 8, rate: 1 / (32 * 40e-6) });
    const a = analyze(profile);
    assert.equal(a.bottleneck.opId, id(0));
    assert.match(a.bottleneck.reason, /csv binds on parsing: 38(\.0)? µs per row on the main thread; 1 of its 8 shards read at once\./);
  });

  it('gives the reader its parts per row in the analysis, for the hover', () => {
    const profile = readerProfile({ parse: 38e-6, read: 2e-6, shards: 8, rate: 1 / (32 * 40e-6) });
    const op = analyze(profile).ops.find((o) => o.opId === id(0));
    assert.match(op?.readerParts ?? '', /^reading 2(\.0+)? µs, decompressing 0 µs and parsing 38(\.0)? µs per row: it binds on parsing on the main thread; 1 of its 8 shards read at once$/);
    assert.equal(analyze(profile).ops.find((o) => o.opId === id(1))?.readerParts, undefined);
  });

  it('moves a CPU-bound csv to worker threads with as many shards at once as the cores it gets', () => {
    const profile = readerProfile({ parse: 38e-6, shards: 8, rate: 1 / (32 * 40e-6) });
    const p = plan(profile);
    const move = change(p.changes, 'placement', id(0));
    assert.ok(move, `expected a placement change, got ${JSON.stringify(p.changes)}`);
    assert.equal(move.to, 'worker');
    assert.equal(move.parallelism, 2);
    assert.match(move.reason, /^csv decompresses and parses on the main thread, which keeps the main thread busy/);
    // What would bind then is said with the planned knobs.
    assert.match(p.predictedBottleneck.reason, /csv binds on parsing: 38(\.0)? µs per row in worker threads; 2 of its 8 shards read at once\./);
    // No module: the reader's decompression and parsing are plumber-data's own named exports.
    assert.deepEqual(p.overrides[id(0)], { placement: 'worker', parallelism: 2 });
    // Twice the cores, less the crossing: each row cloned back (200 B) and the dispatch of its task.
    assert.ok(p.predictedBound > 1.6 / (32 * 40e-6) && p.predictedBound < 2 / (32 * 38e-6), `bound ${p.predictedBound}`);
  });

  it('reads more shards at once for a reader that waits on the disk or network, up to its shards', () => {
    const profile = readerProfile({ read: 1e-3, parse: 2e-6, shards: 4, rate: 1 / (32 * 1.002e-3) });
    const a = analyze(profile);
    assert.match(a.bottleneck.reason, /binds on reading \(waiting on the disk or the network\): 1(\.00)? ms per row; 1 of its 4 shards read at once\./);
    const p = plan(profile);
    const par = change(p.changes, 'parallelism', id(0));
    assert.ok(par, `expected a parallelism change, got ${JSON.stringify(p.changes)}`);
    assert.equal(par.to, 4);
    assert.equal(change(p.changes, 'placement', id(0)), undefined);
  });

  it('reads as many shards at once as the waits need when the reader does not say how many it has', () => {
    const profile = readerProfile({ read: 1e-3, parse: 2e-6, rate: 1 / (32 * 1.002e-3) });
    const par = change(plan(profile).changes, 'parallelism', id(0));
    assert.ok(par && par.to > 4, `expected more than 4 shards at once, got ${JSON.stringify(par)}`);
  });

  it('gives a reader of one shard no more than one at once', () => {
    const profile = readerProfile({ parse: 38e-6, shards: 1, rate: 1 / (32 * 40e-6) });
    for (const c of plan(profile).changes) {
      if (c.opId !== id(0)) continue;
      if (c.kind === 'parallelism') assert.ok(c.to <= 1, JSON.stringify(c));
      if (c.kind === 'placement') assert.ok(c.parallelism <= 1, JSON.stringify(c));
    }
  });

  it('decompresses more shards at once on libuv’s pool for a reader whose decompression binds', () => {
    const profile = readerProfile({ decompress: 30e-6, parse: 3e-6, shards: 4, rate: 1 / (32 * 33e-6) });
    assert.match(analyze(profile).bottleneck.reason, /csv binds on decompressing: 30(\.0)? µs per row; 1 of its 4 shards read at once\./);
    const par = change(plan(profile).changes, 'parallelism', id(0));
    assert.ok(par && par.to >= 2 && par.to <= 4, JSON.stringify(plan(profile).changes));
  });

  it('says which part binds from the counters: decompression when it outweighs parsing and waits', () => {
    const profile = readerProfile({ decompress: 30e-6, parse: 5e-6, read: 1e-6, shards: 2, rate: 900 });
    const parts = readerParts(profile.ops[0]!, 1);
    assert.ok(parts);
    assert.equal(parts.binds, 'decompress');
    assert.equal(parts.cpuBound, true);
    assert.equal(parts.shards, 2);
  });

  it("plans nothing its library cannot do for tfjs-data's csv (prefetch only)", () => {
    const profile = readerProfile({ parse: 38e-6, shards: 8, rate: 1 / (32 * 40e-6) });
    profile.ops[0]!.levers = ['prefetch'];
    profile.ops[0]!.dialect = 'tfjs-data';
    const p = plan(profile);
    assert.equal(change(p.changes, 'placement', id(0)), undefined);
    assert.equal(change(p.changes, 'parallelism', id(0)), undefined);
  });
});
