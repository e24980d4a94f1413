import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, constants, copyFileSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { range } from 'plumber-data';

/** The built library, as a child process loads it (plain node, no tsx). */
const LIBRARY = require.resolve('plumber-data');

/**
 * Starts a real process writing `path` through cache(path), waits until it has written part of the
 * pass, kills it with SIGKILL (nothing of it can clean up) and returns its pid once it is gone.
 */
async function killWriterHalfway(path: string): Promise<number> {
  const script = `
    const lib = require(${JSON.stringify(LIBRARY)});
    setInterval(() => {}, 1000); // stays alive while it waits to be killed
    (async () => {
      for await (const x of lib.range(1000).cache(${JSON.stringify(path)})) if (x === 500) { console.log('half'); await new Promise(() => {}); }
    })();`;
  const p = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(p.stdout, 'data')) as [Buffer];
  assert.equal(line.toString().trim(), 'half');
  const exited = once(p, 'exit');
  p.kill('SIGKILL');
  const [, signal] = (await exited) as [number | null, string | null];
  assert.equal(signal, 'SIGKILL');
  return p.pid as number;
}

describe('plumber-data cache temp files', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-cache-tmp-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('removes the temp file of a writer killed with SIGKILL on the next run, and writes the cache', async () => {
    const path = join(dir, 'train.cache');
    const pid = await killWriterHalfway(path);
    const stale = readdirSync(dir);
    assert.equal(stale.length, 1, `after the kill: ${stale.join(', ')}`);
    assert.ok(stale[0].startsWith('train.cache.') && stale[0].endsWith('.tmp') && stale[0].includes(`.${pid}.`), stale[0]);

    assert.deepEqual(await range(4).cache(path).toArray(), [0, 1, 2, 3]);
    assert.deepEqual(readdirSync(dir), ['train.cache']);
    assert.deepEqual(await range(0).cache(path).toArray(), [0, 1, 2, 3]);
  });

  it('keeps the temp file of a process that is still alive, and a file by that name it did not write', async () => {
    const path = join(dir, 'train.cache');
    const dead = await killWriterHalfway(path);
    const [stale] = readdirSync(dir);
    // The same name for a live process (this test's parent), and a dead writer's name on a file of someone else's.
    const live = stale.replace(`.${dead}.`, `.${process.ppid}.`);
    copyFileSync(join(dir, stale), join(dir, live));
    const notOurs = stale.replace(/\.[0-9a-f]+\.tmp$/, '.abcdef.tmp');
    writeFileSync(join(dir, notOurs), 'notes someone keeps here');

    assert.deepEqual(await range(3).cache(path).toArray(), [0, 1, 2]);
    assert.deepEqual(readdirSync(dir).sort(), ['train.cache', live, notOurs].sort());
  });

  it('hands on the first element of a pass without waiting for the look for stale temp files', async () => {
    const path = join(dir, 'train.cache');
    // A dead writer's temp file that is a FIFO: opening it to check its header waits until
    // something opens it for writing, so the look for stale files waits until this test lets it.
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    const host = hostname().replace(/[^A-Za-z0-9-]/g, '_') || 'host';
    const fifo = join(dir, `train.cache.${host}.${dead}.abcdef.tmp`);
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
    const it = range(3).cache(path)[Symbol.asyncIterator]();
    assert.deepEqual(await it.next(), { value: 0, done: false });
    // Let the look go on: open the FIFO for writing (once it is open for reading) and close it.
    for (;;) {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
        break;
      } catch (e) {
        if ((e as { code?: string }).code !== 'ENXIO') throw e;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    assert.deepEqual([(await it.next()).value, (await it.next()).value, (await it.next()).done], [1, 2, true]);
    // The cache is in place; the FIFO, which reads as no file of a cache, is left where it was.
    assert.deepEqual(readdirSync(dir).sort(), ['train.cache', `train.cache.${host}.${dead}.abcdef.tmp`].sort());
  });
});
