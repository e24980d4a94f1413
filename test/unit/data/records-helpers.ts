/** Helpers for the record formats' tests: feeding a format chunks of chosen sizes, and the Python reference. */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Rng } from '../../../src/data/internal/rng';
import type { StreamFormat } from '../../../src/data/internal/readers/format';

export const PYTHON_TFRECORD = join(__dirname, '../../fixtures/records/tfrecord.py');

/** Runs the Python reference (test/fixtures/records/tfrecord.py) and parses the JSON it prints. */
export function python<T>(...args: string[]): T {
  return JSON.parse(execFileSync('python3', [PYTHON_TFRECORD, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 })) as T;
}

/** `bytes` cut into chunks: all of one size, or seeded random sizes in [1, max]. */
export async function* chunks(bytes: Uint8Array, size: number | { seed: number; max: number }): AsyncGenerator<Uint8Array> {
  const rng = typeof size === 'number' ? null : new Rng(size.seed);
  for (let at = 0; at < bytes.length;) {
    const n = rng === null ? (size as number) : 1 + rng.int((size as { max: number }).max);
    // A fresh copy per chunk, as a file or zlib stream hands out, so views cannot alias a later chunk.
    yield bytes.slice(at, at + n);
    at += n;
  }
}

/** Every element a format parses from `source`, and the parse seconds it reported. */
export async function parseAll<T>(format: StreamFormat<T>, source: AsyncIterable<Uint8Array>, location = '/data/shard'): Promise<T[]> {
  const out: T[] = [];
  for await (const batch of format.parse(source, { location, index: 0 }, { parsed: () => undefined })) out.push(...batch);
  return out;
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
