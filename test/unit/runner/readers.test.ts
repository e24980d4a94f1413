/**
 * The runner traces a reader (issue 51): a real csv pipeline over gzip'd shards written by
 * Python's csv and gzip modules, profiled in a child process. The profile carries the reader's
 * counters (bytes from disk and after decompression, I/O wait, decompression and parse time,
 * shards opened), its knobs and shards; an override sets its shards at once and its placement.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runProfile } from '../../../src/runner/spawn';
import type { OpProfile } from '../../../src/shared/profile';

const PIPELINE = path.resolve(__dirname, '../../fixtures/pipelines/readers-csv.ts');

/** Four gzip'd CSV shards of 20,000 rows each, written by Python's standard library from a seed. */
function writeShards(dir: string): void {
  const script = [
    'import csv, gzip, random, sys',
    'random.seed(51)',
    'for s in range(4):',
    "    with gzip.open(f'{sys.argv[1]}/part-{s}.csv.gz', 'wt', newline='') as f:",
    '        w = csv.writer(f)',
    "        w.writerow(['id', 'x', 'y'])",
    '        for i in range(20000):',
    '            w.writerow([s * 20000 + i, round(random.random() * 100, 4), round(random.gauss(0, 1), 6)])',
  ].join('\n');
  execFileSync('python3', ['-c', script, dir]);
}

describe('runner: readers', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'plumber-readers-runner-'));
    writeShards(dir);
    process.env['PLUMBER_TEST_CSV_DIR'] = dir;
  });
  after(() => {
    delete process.env['PLUMBER_TEST_CSV_DIR'];
    rmSync(dir, { recursive: true, force: true });
  });

  const csvOp = (ops: OpProfile[]): OpProfile => {
    const op = ops.find((o) => o.kind === 'csv');
    assert.ok(op, `no csv op among ${ops.map((o) => o.kind).join(', ')}`);
    return op;
  };

  it('profiles a csv reader with its counters, its call site and its shards', async () => {
    const profile = await runProfile({ file: PIPELINE, seconds: 0.8, warmupSeconds: 0.3, probes: false });
    assert.equal(profile.error, undefined, profile.error?.message);
    const op = csvOp(profile.ops);
    assert.equal(op.id, '5:21');
    assert.equal(op.placement, 'main');
    assert.equal(op.knobs.numShards, 4);
    assert.equal(op.knobs.resolvedParallelism, 1);
    const c = op.counters;
    assert.ok(c.produced > 0);
    assert.ok(c.diskBytesRead > 0, `diskBytesRead ${c.diskBytesRead}`);
    // Decompressed text is several times the gzip'd bytes read.
    assert.ok((c.bytesDecompressed ?? 0) > c.diskBytesRead, `bytesDecompressed ${String(c.bytesDecompressed)} vs disk ${c.diskBytesRead}`);
    for (const k of ['decompressSeconds', 'parseSeconds'] as const) assert.ok((c[k] ?? 0) > 0, `${k} is ${String(c[k])}`);
    // I/O wait is the event loop's idle time while a read is outstanding: timed on every read, and
    // legitimately zero when the page cache answers while the thread is busy.
    assert.equal(typeof c.ioWaitSeconds, 'number', 'ioWaitSeconds is not recorded');
    assert.ok(c.ioWaitSeconds! >= 0 && c.ioWaitSeconds! <= profile.run.warmupSeconds + profile.run.seconds, `ioWaitSeconds ${String(c.ioWaitSeconds)} of a ${profile.run.warmupSeconds + profile.run.seconds} s run`);
    assert.ok((c.shardsOpened ?? 0) >= 1, `shardsOpened ${String(c.shardsOpened)}`);
    // Parsing on the main thread is its own main-thread time.
    assert.ok(c.selfSeconds >= (c.parseSeconds ?? 0) * 0.999);
  });

  it('reads as many shards at once as an override asks, in worker threads when it says so', async () => {
    const profile = await runProfile({ file: PIPELINE, seconds: 0.8, warmupSeconds: 0.3, probes: false, overrides: { '5:21': { parallelism: 3, placement: 'worker' } } });
    assert.equal(profile.error, undefined, profile.error?.message);
    const op = csvOp(profile.ops);
    assert.equal(op.overridden, true);
    assert.equal(op.placement, 'worker');
    assert.equal(op.knobs.resolvedParallelism, 3);
    assert.ok(op.counters.produced > 0);
    assert.ok((op.counters.parseSeconds ?? 0) > 0, 'the workers report their parse time');
    // Counted in the measured window: the shards opened during the warm-up are not.
    assert.ok((op.counters.shardsOpened ?? 0) >= 1, `shardsOpened ${String(op.counters.shardsOpened)}`);
  });
});
