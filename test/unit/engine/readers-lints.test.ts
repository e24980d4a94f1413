/**
 * The readers' lints: one compressed or large file read by one reader (static where the path is a
 * literal, else measured), and a CSV or JSON Lines reader whose parsing on the main thread binds.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import type { GraphOp, PipelineGraph } from '../../../src/engine/graph/types';
import { readerLints, readerMeasuredLints } from '../../../src/engine/lints/readers';
import type { Profile } from '../../../src/shared/profile';
import { FIXTURES } from '../server/helpers';
import { ProfileBuilder } from '../model/builder';

function pipelinesOf(lines: string[]): PipelineGraph[] {
  const ws = new GraphWorkspace({
    onError: (f, e) => {
      throw new Error(`${f}: ${String(e)}`);
    },
  });
  const file = path.join(FIXTURES, 'graph', 'issue51-lints-virtual.ts');
  ws.setText(file, lines.join('\n'));
  return ws.graphOf(file).pipelines;
}

const pipelines = pipelinesOf([
  "import { csv, jsonLines } from 'plumber-data';",
  "export const one = csv('data/all.csv.gz').batch(32);",
  "export const shards = csv('data/part-*.csv.gz', { parallelism: 4 }).batch(32);",
  "export const plain = jsonLines('events.jsonl').batch(32);",
]);
const named = (n: string) => pipelines.find((p) => p.name === n)!;

/** A profile of `p` whose reader (its first op) parsed `parse` s and waited `read` s per element. */
function profileOf(p: PipelineGraph, c: { parse: number; read?: number; sourceBytes?: number; compressed?: boolean; numShards?: number }): { profile: Profile; byProfileId: Map<string, GraphOp> } {
  const profile = new ProfileBuilder({ cores: 2 })
    .op({ kind: p.ops[0]!.kind, ownPerElement: c.parse, bytes: 100, ...(c.numShards !== undefined ? { numShards: c.numShards } : {}) })
    .batch(32)
    .build({ rootElements: 100, rate: 1 / (32 * (c.parse + (c.read ?? 0))), availableCores: 2 });
  const r = profile.ops[0]!.counters;
  r.parseSeconds = r.produced * c.parse;
  r.ioWaitSeconds = r.produced * (c.read ?? 0);
  r.waitSeconds += r.ioWaitSeconds;
  if (c.sourceBytes !== undefined) r.sourceBytes = c.sourceBytes;
  if (c.compressed) r.bytesDecompressed = r.produced * 100;
  return { profile, byProfileId: new Map(profile.ops.map((o, i) => [o.id, p.ops[i]!])) };
}

describe('lints: readers', () => {
  it('says a literal compressed file read by one reader cannot be split by parallelism, and suggests shards', () => {
    const found = readerLints(named('one'));
    assert.equal(found.length, 1);
    assert.equal(found[0]!.rule, 'plumber/reader-one-shard');
    assert.match(found[0]!.message, /reads one compressed file, which decompresses front to back on one thread/);
    assert.match(found[0]!.message, /csv\('…\*\.gz', \{ parallelism \}\)/);
  });

  it('leaves a glob of shards and a plain file alone without a profile', () => {
    assert.deepEqual(readerLints(named('shards')), []);
    assert.deepEqual(readerLints(named('plain')), []);
  });

  it('finds one large file from the run: the bytes the reader matched', () => {
    const p = named('plain');
    const big = readerMeasuredLints({ graph: p, ...profileOf(p, { parse: 1e-6, read: 5e-6, sourceBytes: 200e6 }) });
    assert.deepEqual(
      big.map((f) => f.rule),
      ['plumber/reader-one-shard'],
    );
    assert.match(big[0]!.message, /read one file of 200 MB \(measured\)/);
    assert.deepEqual(readerMeasuredLints({ graph: p, ...profileOf(p, { parse: 1e-6, read: 5e-6, sourceBytes: 10e6 }) }), []);
  });

  it('finds a glob that matched one compressed shard, as the reader counted it', () => {
    const p = named('shards');
    const found = readerMeasuredLints({ graph: p, ...profileOf(p, { parse: 1e-6, read: 5e-6, compressed: true, numShards: 1, sourceBytes: 5e6 }) });
    assert.deepEqual(
      found.map((f) => f.rule),
      ['plumber/reader-one-shard'],
    );
    assert.match(found[0]!.message, /one compressed file of 5 MB/);
    assert.deepEqual(readerMeasuredLints({ graph: p, ...profileOf(p, { parse: 1e-6, read: 5e-6, compressed: true, numShards: 8 }) }), []);
  });

  it('says a CSV parsed on the main thread binds, and how worker placement moves it', () => {
    const p = named('shards');
    const found = readerMeasuredLints({ graph: p, ...profileOf(p, { parse: 40e-6, numShards: 8 }) });
    assert.deepEqual(
      found.map((f) => f.rule),
      ['plumber/parse-on-main-thread'],
    );
    assert.match(found[0]!.message, /binds the pipeline parsing on the main thread \(measured: 40 µs per element\)\. placement: 'worker'/);
  });

  it('does not blame parsing for a reader that waits on its reads', () => {
    const p = named('shards');
    assert.deepEqual(readerMeasuredLints({ graph: p, ...profileOf(p, { parse: 2e-6, read: 1e-3, numShards: 8 }) }), []);
  });
});
