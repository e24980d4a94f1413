import assert from 'node:assert/strict';
import { decodeExample, encodeExample, type Example, type ExampleInput } from '../../../src/data/internal/readers/example';
import { FormatError } from '../../../src/data/internal/readers/format';
import { frameRecord, tfRecordFormat } from '../../../src/data/internal/readers/tfrecord';
import { chunks, hex, parseAll, python } from './records-helpers';

type Expected = Record<string, { bytes: string[] } | { float: number[] } | { int64: string[] }>;

/** An Example in the reference's JSON terms: bytes as hex, floats as numbers, int64s as decimal strings. */
function plain(example: Example): Expected {
  const out: Expected = {};
  for (const [name, value] of Object.entries(example)) {
    if (value instanceof Float32Array) out[name] = { float: Array.from(value) };
    else if (value instanceof BigInt64Array) out[name] = { int64: Array.from(value, String) };
    else out[name] = { bytes: value.map(hex) };
  }
  return out;
}

describe('records: tf.train.Example', () => {
  let reference: { hex: string; expected: Expected }[];
  before(() => {
    reference = python('example');
  });

  it('decodes Examples laid out by hand per example.proto: packed and unpacked lists, int64 beyond 2^53, an unset kind', () => {
    for (const { hex: bytes, expected } of reference) assert.deepEqual(plain(decodeExample(Buffer.from(bytes, 'hex'))), expected);
    const big = decodeExample(Buffer.from(reference[1].hex, 'hex')).big as BigInt64Array;
    assert.ok(big instanceof BigInt64Array);
    assert.equal(big[0], 2n ** 62n + 3n);
    assert.equal(big[2], -(2n ** 63n));
  });

  it('encodes Examples byte for byte as the reference lays them out (packed lists, keys in order)', () => {
    const input: ExampleInput = {
      label: BigInt64Array.of(7n),
      image: [Uint8Array.from({ length: 768 }, (_, i) => i % 256)],
      score: Float32Array.of(0.5, -2.25, 1e-3),
    };
    assert.equal(hex(encodeExample(input)), reference[0].hex);
    const strings = encodeExample({ big: BigInt64Array.of(2n ** 62n + 3n, -1n, -(2n ** 63n), 2n ** 63n - 1n, 0n), names: ['cat', '', 'café'] });
    assert.deepEqual(plain(decodeExample(strings)), { big: reference[1].expected.big, names: reference[1].expected.names });
  });

  it('decodes TFRecord shards of Examples through the format, and names a record that is not an Example', async () => {
    const records = reference.map((r) => Buffer.from(r.hex, 'hex'));
    const file = Buffer.concat([...records, Buffer.from([0x0a, 0x05, 0x01])].map(frameRecord));
    const format = tfRecordFormat({ decode: 'example' });
    await assert.rejects(parseAll(format, chunks(file, 5), 'ex.tfrecord'), (e: unknown) => {
      assert.ok(e instanceof FormatError);
      const at = records.reduce((n, r) => n + r.length + 16, 0);
      assert.equal(e.position, `record 4 at byte ${at.toLocaleString('en-US')}`);
      assert.match(e.message, /^ex\.tfrecord: record 4 at byte [\d,]+: not a tf\.train\.Example/);
      return true;
    });
    const good = Buffer.concat(records.map(frameRecord));
    const got = await parseAll(format, chunks(good, 5), 'ex.tfrecord');
    assert.deepEqual(
      got.map(plain),
      reference.map((r) => r.expected),
    );
  });

  it('refuses a feature of a type it cannot write', () => {
    assert.throws(() => encodeExample({ x: new Float64Array(2) as unknown as Float32Array }), /feature 'x' must be/);
  });
});
