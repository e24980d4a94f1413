/**
 * cache(path) writes behind: a chunk goes downstream while its records are written, and the next
 * chunk's write waits for it. Writes are held at the file handle (Node's own FileHandle, its
 * `write` wrapped for the test) so the order of hand-over and write is seen, not timed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { range } from 'plumber-data';

type Write = FileHandle['write'];

/** Node's FileHandle prototype, whose `write` the library's handles use. */
async function fileHandleProto(dir: string): Promise<{ write: Write }> {
  const fh = await open(join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(fh) as { write: Write };
  await fh.close();
  rmSync(join(dir, 'probe'));
  return proto;
}

describe('plumber-data cache(path) writes behind the pass', function () {
  this.timeout(20_000);
  let dir: string;
  let proto: { write: Write };
  let original: Write;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-cache-wb-'));
    proto = await fileHandleProto(dir);
    original = proto.write;
  });
  afterEach(() => {
    proto.write = original;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Writes at a position past 0 (records; the header goes at 0) wait for `gate`; `written` counts those done. */
  function holdRecords(gate: Promise<void>): { written: () => number } {
    let written = 0;
    const orig = original;
    proto.write = function (this: FileHandle, ...args: unknown[]) {
      const position = args[3];
      const write = (): unknown => (orig as (...a: unknown[]) => unknown).apply(this, args);
      if (typeof position === 'number' && position > 0)
        return gate.then(write).then((r) => {
          written++;
          return r;
        });
      return write();
    } as Write;
    return { written: () => written };
  }

  it('hands the first chunk on while its records are still being written, then completes the file in order', async () => {
    const path = join(dir, 'train.cache');
    let release!: () => void;
    const { written } = holdRecords(new Promise<void>((r) => (release = r)));
    const it = range(200).cache(path)[Symbol.asyncIterator]();
    // Awaiting its own write first, the pass would never hand this element on (the write is held).
    const first = await it.next();
    assert.equal(first.value, 0);
    assert.equal(written(), 0);
    release();
    const rest: number[] = [];
    for (let r = await it.next(); !r.done; r = await it.next()) rest.push(r.value as number);
    assert.deepEqual(
      [0, ...rest],
      Array.from({ length: 200 }, (_, i) => i),
    );
    proto.write = original;
    assert.deepEqual(readdirSync(dir), ['train.cache']);
    // Read back from the file (the source is empty now): every element, in order.
    assert.deepEqual(
      await range(0).cache(path).toArray(),
      Array.from({ length: 200 }, (_, i) => i),
    );
  });

  it('fails the pass on the next pull when a write fails, naming the cache file, and keeps no file', async () => {
    const path = join(dir, 'train.cache');
    const orig = original;
    let failed = 0;
    proto.write = function (this: FileHandle, ...args: unknown[]) {
      const position = args[3];
      if (typeof position === 'number' && position > 0 && failed++ === 0) return Promise.reject(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }));
      return (orig as (...a: unknown[]) => unknown).apply(this, args);
    } as Write;
    await assert.rejects(range(200).cache(path).toArray(), (e: Error) => e.name === 'PipelineError' && e.message.includes(`cannot write the cache file ${path}`) && e.message.includes('Nothing was kept'));
    proto.write = original;
    assert.deepEqual(readdirSync(dir), []);
    // The next complete pass writes it.
    assert.deepEqual(await range(3).cache(path).toArray(), [0, 1, 2]);
  });
});
