import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { from, PipelineError, range } from 'plumber-data';
import { crc32Js } from '../../../src/data/internal/ops/cache';

/** The built library, as a child process loads it (plain node, no tsx). */
const LIBRARY = require.resolve('plumber-data');

/** Elements with numbers that a flipped bit would silently change. */
const ELEMENTS = [0, 1, 2, 3, 4].map((i) => ({ i, v: new Float64Array([i / 3, -i]), s: `n${i}` }));

async function outcome(path: string): Promise<unknown> {
  try {
    return await from([] as unknown[])
      .cache(path)
      .toArray();
  } catch (e) {
    return e;
  }
}

/**
 * Runs `script` in a child node process with `lib` bound to plumber-data. A native abort there (a
 * corrupted length once sized a read of gigabytes) ends the child, not the test run.
 */
function child(script: string): { status: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['-e', `const lib = require(${JSON.stringify(LIBRARY)});\n${script}`], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/**
 * A child script that damages the cache file at `path` in every way `damage` lists (a function of
 * the intact bytes giving one damaged copy per case), reads each back, and prints one line per
 * case: `error <message>`, `same` (all elements intact) or `WRONG <what came back>`.
 */
function damageEachWay(path: string, damage: string): string {
  return `
    const fs = require('node:fs');
    const intact = fs.readFileSync(${JSON.stringify(path)});
    const cases = (${damage})(intact);
    (async () => {
      const expected = JSON.stringify(await lib.from([]).cache(${JSON.stringify(path)}).toArray(), (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v));
      for (const bytes of cases) {
        fs.writeFileSync(${JSON.stringify(path)}, bytes);
        try {
          const got = JSON.stringify(await lib.from([]).cache(${JSON.stringify(path)}).toArray(), (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v));
          console.log(got === expected ? 'same' : 'WRONG ' + got);
        } catch (e) {
          console.log((e instanceof lib.PipelineError ? 'error ' : 'RAW ') + String(e.message).replace(/\\n/g, ' '));
        }
      }
    })();`;
}

describe('plumber-data cache file format', function () {
  this.timeout(120_000);
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-cache-'));
    path = join(dir, 'train.cache');
    await from(ELEMENTS).cache(path).toArray();
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts with a header that names the format and counts the elements', () => {
    const bytes = readFileSync(path);
    assert.equal(bytes.subarray(0, 6).toString('latin1'), 'PLDC2\n');
    assert.equal(bytes.readBigUInt64LE(6), 5n);
    assert.equal(bytes.readBigUInt64LE(14), BigInt(bytes.length));
  });

  it('reads back elements larger than its read buffer, and small ones across buffer refills, in order', async () => {
    const big = join(dir, 'big.cache');
    const els: unknown[] = [];
    for (let i = 0; i < 3; i++) els.push(new Float64Array(400_000).fill(i + 0.5), ...Array.from({ length: 10_000 }, (_, k) => ({ i, k })));
    await from(els).cache(big).toArray();
    const back = await from([] as unknown[])
      .cache(big)
      .toArray();
    assert.equal(back.length, els.length);
    assert.deepEqual(back, els);
  });

  it('turns a corrupted length field into a PipelineError naming the file, never a native abort', () => {
    // 0xfffffff0 written over every 4 bytes after the magic: wherever a length field sits, one case hits it.
    const r = child(damageEachWay(path, `(b) => { const out = []; for (let at = 4; at + 4 <= b.length; at++) { const c = Buffer.from(b); c.writeUInt32LE(0xfffffff0, at); out.push(c); } return out; }`));
    assert.equal(r.signal, null, `the reading process died by ${r.signal}: ${r.stderr.slice(0, 400)}`);
    assert.equal(r.status, 0, r.stderr.slice(0, 400));
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, readFileSync(path).length - 7);
    for (const line of lines) {
      assert.match(line, /^error /, line);
      assert.ok(line.includes(path), line);
    }
    assert.ok(lines.some((l) => /delete it/.test(l)));
  });

  it('refuses a file cut short at any byte, element boundaries included, instead of returning the first elements', async () => {
    const intact = readFileSync(path);
    for (let cut = 6; cut < intact.length; cut++) {
      writeFileSync(path, intact.subarray(0, cut));
      const got = await outcome(path);
      assert.ok(got instanceof PipelineError, `cut at ${cut} of ${intact.length} bytes returned ${JSON.stringify(got)}`);
      assert.match(got.message, /is truncated/);
      assert.ok(got.message.includes(path) && /delete it/.test(got.message), got.message);
    }
  });

  it('detects a bit flipped anywhere in the file: an error naming the file, never a wrong number', () => {
    const r = child(damageEachWay(path, `(b) => { const out = []; for (let bit = 0; bit < b.length * 8; bit++) { const c = Buffer.from(b); c[bit >> 3] ^= 1 << (bit & 7); out.push(c); } return out; }`));
    assert.equal(r.signal, null, `the reading process died by ${r.signal}: ${r.stderr.slice(0, 400)}`);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, readFileSync(path).length * 8);
    const bad = lines.filter((l) => !l.startsWith('error ') || !l.includes(path));
    assert.deepEqual(bad.slice(0, 5), [], `${bad.length} of ${lines.length} flips were not reported as a PipelineError naming the file`);
  });

  it('reports bytes added after the last element', async () => {
    writeFileSync(path, Buffer.concat([readFileSync(path), Buffer.from([1, 2, 3])]));
    const got = await outcome(path);
    assert.ok(got instanceof PipelineError);
    assert.match(got.message, /3 bytes after its last element/);
  });

  it('says a cache file of another format version is plumber-data’s, to delete and rebuild', async () => {
    for (const [version, age] of [
      ['1', 'older'],
      ['9', 'newer'],
    ]) {
      const bytes = readFileSync(path);
      bytes.write(version, 4, 'latin1');
      writeFileSync(path, bytes);
      const got = await outcome(path);
      assert.ok(got instanceof PipelineError);
      assert.match(got.message, new RegExp(`is in cache format ${version}, written by an? ${age} plumber-data; this one reads format 2\\..*delete it`));
    }
  });

  it('never advises deleting a file plumber-data did not write, and leaves it as it was', async () => {
    for (const text of ['root:x:0:0:root:/root:/bin/bash\n', '', 'PLDC but not ours']) {
      writeFileSync(path, text);
      const got = await outcome(path);
      assert.ok(got instanceof PipelineError);
      assert.match(got.message, /is not a plumber-data cache file/);
      assert.doesNotMatch(got.message, /delete/i);
      assert.equal(readFileSync(path, 'utf8'), text);
      // A pass that could write a cache there does not overwrite it either.
      await assert.rejects(range(3).cache(path).toArray(), /is not a plumber-data cache file/);
      assert.equal(readFileSync(path, 'utf8'), text);
    }
    const got = await outcome(dir);
    assert.ok(got instanceof PipelineError);
    assert.match(got.message, /is not a plumber-data cache file \(it is a directory\)/);
    assert.doesNotMatch(got.message, /delete/i);
  });

  it('checksums with CRC-32 (IEEE) in JavaScript exactly as zlib does, for Node versions without zlib.crc32', () => {
    assert.equal(crc32Js(Buffer.from('123456789')), 0xcbf43926);
    const data = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7919) & 0xff));
    assert.equal(crc32Js(data.subarray(300), crc32Js(data.subarray(0, 300))), crc32Js(data));
    const native = (zlib as { crc32?: (d: Uint8Array, v?: number) => number }).crc32;
    if (native !== undefined) assert.equal(crc32Js(data), native(data));
  });
});
