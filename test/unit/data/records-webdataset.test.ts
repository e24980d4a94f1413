import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { FormatError } from '../../../src/data/internal/readers/format';
import { shardOrder, splitKey, webDatasetFormat, type WebDatasetSample } from '../../../src/data/internal/readers/webdataset';
import { Rng } from '../../../src/data/internal/rng';
import { chunks, parseAll } from './records-helpers';

/** Seeded bytes, so a file's content says which file it is. */
function content(seed: number, length: number): Buffer {
  const rng = new Rng(seed);
  return Buffer.from(Array.from({ length }, () => rng.int(256)));
}

/** Bytes as a short comparable string: their length and SHA-256. */
function digest(bytes: Uint8Array): string {
  return `${bytes.length}:${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}`;
}

/** A sample as comparable strings: key, shard and each field's digest. */
function plain(s: WebDatasetSample): Record<string, string> {
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, typeof v === 'string' ? v : digest(v)]));
}

describe('records: WebDataset tar shards', () => {
  let dir: string;
  let src: string;
  /** What the shard holds, sample by sample, in tar order. */
  let expected: Record<string, string>[];

  function write(rel: string, data: Buffer): void {
    mkdirSync(dirname(join(src, rel)), { recursive: true });
    writeFileSync(join(src, rel), data);
  }

  function tar(shard: string, args: string[]): string {
    const path = join(dir, shard);
    execFileSync('tar', [...args, '-f', path, '-C', src, '--sort=name', 'train']);
    return path;
  }

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-wds-'));
    src = join(dir, 'src');
    expected = [];
    // Sizes around tar's 512-byte blocks and the 64 KB read chunks; a multi-dot field; an empty file.
    const sizes = [0, 1, 511, 512, 513, 70000, 1024, 3, 65536, 200];
    const longDir = `train/${'a-long-folder-name-'.repeat(6)}`;
    sizes.forEach((size, i) => {
      const folder = i === 4 ? longDir : 'train';
      const key = `${folder}/${String(i).padStart(4, '0')}`;
      const jpg = content(i, size);
      const cls = Buffer.from(String(i % 3));
      const extra = content(100 + i, 17);
      write(`${key}.jpg`, jpg);
      write(`${key}.cls`, cls);
      write(`${key}.seg.PNG`, extra);
      expected.push({ __key__: key, __url__: '', cls: digest(cls), jpg: digest(jpg), 'seg.png': digest(extra) });
    });
    write('train/README', Buffer.from('no extension: not part of any sample'));
    // tar --sort=name orders members by path, so samples come out sorted by key.
    expected.sort((a, b) => (a.__key__ < b.__key__ ? -1 : 1));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function withUrl(url: string): Record<string, string>[] {
    return expected.map((s) => ({ ...s, __url__: url }));
  }

  for (const format of ['gnu', 'pax']) {
    it(`groups the members of a ${format} shard made by tar into samples by key, in the order stored`, async () => {
      const shard = tar(`shard-${format}.tar`, ['-c', `--format=${format}`]);
      const got = await parseAll(webDatasetFormat(), createReadStream(shard, { highWaterMark: 1 << 16 }), shard);
      assert.deepEqual(got.map(plain), withUrl(shard));
    });
  }

  for (const size of [1, 511, { seed: 9, max: 3000 }]) {
    it(`reads the same samples when the tar arrives in chunks of ${JSON.stringify(size)}`, async () => {
      const shard = tar('chunks.tar', ['-c']);
      const got = await parseAll(webDatasetFormat(), chunks(readFileSync(shard), size), shard);
      assert.deepEqual(got.map(plain), withUrl(shard));
    });
  }

  it('reads a shard made with tar czf once it is inflated', async () => {
    const shard = tar('shard.tar.gz', ['-cz']);
    const got = await parseAll(webDatasetFormat(), createReadStream(shard).pipe(createGunzip()), shard);
    assert.deepEqual(got.map(plain), withUrl(shard));
  });

  it("names the shard and the key when a sample's members are not adjacent", async () => {
    const shard = join(dir, 'scattered.tar');
    execFileSync('tar', ['-cf', shard, '-C', src, 'train/0001.jpg', 'train/0002.jpg', 'train/0001.cls']);
    await assert.rejects(parseAll(webDatasetFormat(), createReadStream(shard), shard), (e: unknown) => {
      assert.ok(e instanceof FormatError);
      assert.equal(e.location, shard);
      assert.equal(e.position, 'byte 2,048'); // after two headers and their one-block files
      assert.match(e.message, /members of sample 'train\/0001' are not adjacent: 'train\/0001\.cls'/);
      return true;
    });
  });

  it('fails on a shard cut inside a header, a member, its padding, or before the end-of-archive blocks, naming the byte offset', async () => {
    // Layout (tar -R): train/ at 0, 0000.cls at 512 (its byte at 1,024), 0000.jpg (empty) at 1,536, 0000.seg.png at 2,048 (data from 2,560).
    const shard = tar('whole.tar', ['-c']);
    const bytes = readFileSync(shard);
    const cases: [number, string, RegExp][] = [
      [300, 'byte 0', /ends 300 bytes into a 512-byte header/],
      [2570, 'byte 2,048', /'train\/0000\.seg\.PNG' should have 17 bytes but the shard ends after 10/],
      [1124, 'byte 1,124', /ends 412 bytes short of the block/],
      [2048, 'byte 2,048', /without tar's end-of-archive blocks/],
    ];
    for (const [cut, position, message] of cases) {
      for (const size of [64, 4096]) {
        await assert.rejects(parseAll(webDatasetFormat(), chunks(bytes.subarray(0, cut), size), shard), (e: unknown) => {
          assert.ok(e instanceof FormatError, String(e));
          assert.equal(e.location, shard);
          assert.equal(e.position, position);
          assert.match(e.message, message);
          return true;
        });
      }
    }
  });

  it('rejects bytes that are not tar, and a damaged header, by checksum', async () => {
    await assert.rejects(parseAll(webDatasetFormat(), chunks(Buffer.alloc(2048, 0x41), 512), 'x.tar'), /^FormatError: x\.tar: byte 0: not a tar header/);
    const shard = tar('damaged.tar', ['-c']);
    const bytes = readFileSync(shard);
    bytes[512 * 3 + 10] ^= 1; // inside 0000.jpg's header, the fourth block
    await assert.rejects(parseAll(webDatasetFormat(), chunks(bytes, 1 << 16), shard), (e: unknown) => e instanceof FormatError && e.position === 'byte 1,536' && /not a tar header/.test(e.message));
  });

  it("splits keys at the base name's first dot, as WebDataset does", () => {
    assert.deepEqual(splitKey('a.b/c/0001.seg.PNG'), { key: 'a.b/c/0001', field: 'seg.png' });
    assert.deepEqual(splitKey('./0001.jpg'), { key: '0001', field: 'jpg' });
    assert.equal(splitKey('train/README'), null);
    assert.equal(splitKey('train/.hidden'), null);
  });

  it('orders shards in a seeded permutation that changes each pass and repeats with the seed', () => {
    const shards = Array.from({ length: 20 }, (_, i) => i);
    const a0 = shardOrder(shards, 42, 0);
    const a1 = shardOrder(shards, 42, 1);
    assert.deepEqual(
      [...a0].sort((x, y) => x - y),
      shards,
    );
    assert.notDeepEqual(a0, shards);
    assert.notDeepEqual(a0, a1);
    assert.deepEqual(shardOrder(shards, 42, 0), a0);
    assert.notDeepEqual(shardOrder(shards, 43, 0), a0);
  });
});
