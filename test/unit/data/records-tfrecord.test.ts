import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32c, crc32cTable, maskCrc } from '../../../src/data/internal/readers/crc32c';
import { Rng } from '../../../src/data/internal/rng';
import { FormatError } from '../../../src/data/internal/readers/format';
import { tfRecordFormat, type TfRecordFormatOptions } from '../../../src/data/internal/readers/tfrecord';
import { tfRecordPackedFormat, unpackRecords, type PackedChunk } from '../../../src/data/internal/readers/records-packed';
import type { StreamFormat } from '../../../src/data/internal/readers/format';
import { deserialize, serialize } from 'node:v8';
import { TfRecordWriter, writeTfRecord } from 'plumber-data';
import { chunks, hex, parseAll, python } from './records-helpers';

/** The byte offset of record `n` (1-based) in a file of these records. */
function offsetOf(records: string[], n: number): number {
  return records.slice(0, n - 1).reduce((at, r) => at + 16 + r.length / 2, 0);
}

async function rejectsWith(promise: Promise<unknown>, location: string, position: string, text: RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof FormatError, `expected a FormatError, got ${String(e)}`);
    assert.equal(e.location, location);
    assert.equal(e.position, position);
    assert.match(e.message, text);
    return true;
  });
}

/**
 * The raw-record format as a worker thread runs it (records packed per chunk), each packed chunk
 * cloned as a message is and rebuilt as the reader's thread does, a few records at a time.
 */
function crossedFormat(options: TfRecordFormatOptions = {}): StreamFormat<Uint8Array> {
  const inner = tfRecordPackedFormat({ ...options, decode: 'bytes' });
  return {
    kind: 'tfrecord',
    streamed: true,
    async *parse(bytes, shard, clock) {
      for await (const packed of inner.parse(bytes, shard, clock))
        for (const p of packed) {
          const u = unpackRecords(deserialize(serialize(p)) as PackedChunk);
          for (let s = 0; s < u.count; s += 3) yield u.take(s, Math.min(u.count, s + 3)) as Uint8Array[];
        }
    },
  };
}

/** Framing is the same on the reader's thread and packed in a worker: every framing test runs on both. */
const FORMATS: Array<{ label: string; make: (options?: TfRecordFormatOptions) => StreamFormat<Uint8Array> }> = [
  { label: "on the reader's thread", make: (o) => tfRecordFormat({ ...o, decode: 'bytes' }) },
  { label: 'packed in a worker thread and rebuilt', make: crossedFormat },
];

describe('records: TFRecord framing', () => {
  let dir: string;
  let file: string;
  let expected: string[];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'plumber-records-'));
    file = join(dir, 'python.tfrecord');
    expected = python<string[]>('write', file, '51');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('computes CRC-32C and its TFRecord mask on the standard test vector', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc32c(Buffer.from('56789'), crc32c(Buffer.from('1234'))), 0xe3069283);
    assert.equal(maskCrc(0xe3069283), (((0xe3069283 >>> 15) | (0xe3069283 << 17)) + 0xa282ead8) >>> 0);
    assert.equal(crc32cTable(Buffer.from('123456789')), 0xe3069283);
  });

  it('sums short inputs in JavaScript and long ones natively to the same CRC', () => {
    const rng = new Rng(5);
    const bytes = Uint8Array.from({ length: 4096 }, () => rng.int(256));
    for (const n of [0, 1, 7, 8, 9, 127, 128, 129, 1000, 4096]) {
      const part = bytes.subarray(4096 - n);
      assert.equal(crc32c(part), crc32cTable(part), `length ${n}`);
      assert.equal(crc32c(part.subarray(n >> 1), crc32c(part.subarray(0, n >> 1))), crc32c(part), `length ${n} in two parts`);
    }
  });

  for (const { label, make } of FORMATS)
    describe(label, () => {
      it('reads every record Python wrote, from a real 64 KB file stream', async () => {
        const got = await parseAll(make(), createReadStream(file, { highWaterMark: 1 << 16 }), file);
        assert.equal(got.length, expected.length);
        assert.deepEqual(got.map(hex), expected);
      });

      it('reads the same records when the bytes arrive one at a time (records of 0 to 70,000 bytes)', async () => {
        const first = 10; // lengths 0, 1, 11, 12, 13, 100, 70000, 65536, 3 and one more
        const got = await parseAll(make(), chunks(readFileSync(file).subarray(0, offsetOf(expected, first + 1)), 1), file);
        assert.deepEqual(got.map(hex), expected.slice(0, first));
      });

      for (const size of [7, 12, 16, { seed: 3, max: 100 }, { seed: 4, max: 70000 }]) {
        it(`reads the same records when the bytes arrive in chunks of ${JSON.stringify(size)}`, async () => {
          const got = await parseAll(make(), chunks(readFileSync(file), size), file);
          assert.deepEqual(got.map(hex), expected);
        });
      }

      it('names the file, record and byte offset of a record whose data CRC does not match', async () => {
        const bytes = readFileSync(file);
        const at = offsetOf(expected, 4) + 12 + 5; // a byte inside record 4's data
        bytes[at] ^= 0x40;
        await rejectsWith(parseAll(make(), chunks(bytes, 1 << 16), file), file, `record 4 at byte ${offsetOf(expected, 4).toLocaleString('en-US')}`, /corrupt data/);
        // Without verification the altered record comes through, and no record is lost.
        const unverified = await parseAll(make({ verify: false }), chunks(bytes, 1 << 16), file);
        assert.equal(unverified.length, expected.length);
        assert.notEqual(hex(unverified[3]), expected[3]);
      });

      it('names the record and offset of a corrupt length, read in one chunk or byte by byte', async () => {
        const bytes = readFileSync(file);
        const at = offsetOf(expected, 7); // record 7 is the 70,000-byte one
        bytes[at + 1] ^= 0x01;
        const position = `record 7 at byte ${at.toLocaleString('en-US')}`;
        await rejectsWith(parseAll(make(), chunks(bytes, bytes.length), file), file, position, /corrupt length/);
        await rejectsWith(parseAll(make(), chunks(bytes, 1), file), file, position, /corrupt length/);
      });

      it('fails on a file cut inside a record, never yielding fewer records in silence', async () => {
        const bytes = readFileSync(file);
        const last = expected.length;
        for (const cut of [offsetOf(expected, last) + 3, offsetOf(expected, last) + 14, bytes.length - 1]) {
          await rejectsWith(parseAll(make(), chunks(bytes.subarray(0, cut), 4096), file), file, `record ${last} at byte ${offsetOf(expected, last).toLocaleString('en-US')}`, /truncated record/);
        }
      });

      it('rejects bytes that are not TFRecord at the first record', async () => {
        await rejectsWith(parseAll(make(), chunks(Buffer.from('id,name\n1,cat\n2,dog\n'), 64), 'a.csv'), 'a.csv', 'record 1 at byte 0', /corrupt length/);
        // Unverified, the length itself gives such bytes away (or the shard ends inside the "record").
        await rejectsWith(parseAll(make({ verify: false }), chunks(Buffer.from('id,name\n1,cat\n2,dog\n'), 5), 'a.csv'), 'a.csv', 'record 1 at byte 0', /is not a TFRecord frame/);
        await rejectsWith(parseAll(make({ verify: false }), chunks(Buffer.from('id\0\0\0\0\0\0\0\0\0\0\0\0\0'), 5), 'b.csv'), 'b.csv', 'record 1 at byte 0', /truncated record/);
      });
    });

  it('writes files Python reads back with every CRC verified, plain and gzip', async () => {
    const records = expected.map((h) => Buffer.from(h, 'hex'));
    for (const name of ['out.tfrecord', 'out.tfrecord.gz']) {
      const path = join(dir, name);
      assert.equal(await writeTfRecord(path, records), records.length);
      assert.deepEqual(python<string[]>('read', path), expected);
    }
    // gzip's own tool reads the .gz, and the format reads what it inflates.
    const inflated = execFileSync('gzip', ['-dc', join(dir, 'out.tfrecord.gz')], { maxBuffer: 64 << 20 });
    assert.deepEqual((await parseAll(tfRecordFormat(), chunks(inflated, 1 << 16))).map(hex), expected);
  });

  it('writes from an async iterable through the writer class, one frame per record', async () => {
    const path = join(dir, 'async.tfrecord');
    async function* gen(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < 50; i++) yield new Uint8Array(i * 37).fill(i);
    }
    await writeTfRecord(path, gen(), { compression: 'none' });
    const got = await parseAll(tfRecordFormat(), createReadStream(path), path);
    assert.deepEqual(
      got.map((r) => [r.length, r[0]]),
      Array.from({ length: 50 }, (_, i) => [i * 37, i === 0 ? undefined : i]),
    );
    const w = new TfRecordWriter(join(dir, 'closed.tfrecord'));
    await w.write(new Uint8Array([1]));
    await w.close();
    await assert.rejects(w.write(new Uint8Array([2])), /write after close/);
  });

  it('reports a write to a folder that does not exist as an error, not a crash', async () => {
    await assert.rejects(writeTfRecord(join(dir, 'missing', 'x.tfrecord'), [new Uint8Array([1])]), /ENOENT/);
  });
});
