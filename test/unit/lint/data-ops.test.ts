/**
 * The lints of issue 11's operators, on real source text: a shard placed after expensive work or a
 * shuffle, and a shuffle buffer much smaller than a dataset whose size the source states.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { GraphWorkspace } from '../../../src/engine/graph/workspace';
import { lintPipelines, staticSize, type LintFinding } from '../../../src/engine/lints/rules';
import { FIXTURES } from '../server/helpers';

function graphOf(body: string[]) {
  const ws = new GraphWorkspace({
    onError: (f, e) => {
      throw new Error(`${f}: ${String(e)}`);
    },
  });
  const file = path.join(FIXTURES, 'lints', 'issue11-virtual.ts');
  ws.setText(file, ["import { range, from, files } from 'plumber-data';", 'export function decode(x: number): number { return x + 1; }', ...body].join('\n'));
  return ws.graphOf(file);
}

function lint(body: string[], rule: string): LintFinding[] {
  return lintPipelines(graphOf(body).pipelines, { cores: 4 }).filter((f) => f.rule === rule);
}

describe('lints of shards and shuffle buffers', () => {
  it('flags a shard after a map, saying each worker keeps 1 in n of the work it did', () => {
    const [f, ...rest] = lint(['export const p = range(1000).map(decode).shard(8, 3).prefetch(2);'], 'plumber/shard-late');
    assert.equal(rest.length, 0);
    assert.equal(f!.op.label, 'shard(8, 3)');
    assert.match(f!.message, /every worker runs map\(decode\) on all the elements, then keeps 1 in 8/);
    assert.deepEqual(
      f!.related.map((r) => r.op.label),
      ['map(decode)'],
    );
  });

  it('does not flag the same shard moved right after the source', () => {
    assert.deepEqual(lint(['export const p = range(1000).shard(8, 3).map(decode).shuffle(100).prefetch(2);'], 'plumber/shard-late'), []);
  });

  it('flags a shard after a shuffle (the shards overlap) and after reading files', () => {
    const [shuffled] = lint(['export const p = range(1000).shuffle(1000).shard(2, 0);'], 'plumber/shard-late');
    assert.match(shuffled!.message, /its own random order, so the shards overlap/);
    assert.deepEqual(
      shuffled!.related.map((r) => r.op.kind),
      ['shuffle'],
    );
    const [seeded] = lint(['export const p = range(1000).shuffle(1000, { seed: 1 }).shard(2, 0);'], 'plumber/shard-late');
    assert.match(seeded!.message, /unless every worker uses the same seed/);
    const [read] = lint(["export const p = files('data/*.bin').shard(2, 0);"], 'plumber/shard-late');
    assert.deepEqual(
      read!.related.map((r) => r.op.kind),
      ['files'],
    );
    assert.match(read!.message, /every worker reads every file of files\('data\/\*\.bin'\), then keeps 1 in 2/);
  });

  it('says which fraction of the dataset a small shuffle buffer holds, counting through batch and take', () => {
    const [f] = lint(['export const p = range(100000).map(decode).take(50000).batch(10).shuffle(50).prefetch(2);'], 'plumber/shuffle-buffer-small');
    // 100,000 → take 50,000 → 5,000 batches; a buffer of 50 is 1% of them.
    assert.match(f!.message, /^shuffle\(50\) holds 1% of the 5,000 elements it shuffles \(counted from range\(100000\)\)/);
    assert.match(f!.message, /Shuffle quality suffers/);
    assert.deepEqual(
      f!.related.map((r) => r.op.label),
      ['range(100000)'],
    );
  });

  it('is quiet when the buffer holds a tenth of the data or more, or when the size depends on the data', () => {
    assert.deepEqual(lint(['export const p = range(1000).shuffle(100);'], 'plumber/shuffle-buffer-small'), []);
    assert.equal(lint(['export const p = range(1000).shuffle(99);'], 'plumber/shuffle-buffer-small').length, 1);
    assert.deepEqual(lint(['export const p = range(100000).filter((x) => x > 5).shuffle(10);'], 'plumber/shuffle-buffer-small'), []);
  });

  it('counts a literal array, a shard and the inputs of concatenate', () => {
    const graph = graphOf(['export const p = from([1, 2, 3, 4, 5]).concatenate(range(10, 20)).shard(4, 1);']);
    const ops = graph.pipelines[0]!.ops;
    const byId = new Map(ops.map((o) => [o.id, o]));
    const sizeOf = (kind: string) =>
      staticSize(
        ops.find((o) => o.kind === kind)!,
        byId,
      );
    assert.deepEqual([sizeOf('from'), sizeOf('range'), sizeOf('concatenate'), sizeOf('shard')], [5, 10, 15, 4]);
  });
});
