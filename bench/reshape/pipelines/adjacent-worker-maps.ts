// Two adjacent maps in worker threads (issue 54, fuse): parse makes a record of many small objects
// (a tokenised line, say), featurize turns it into a small typed array. Between them each record
// crosses to the main thread and back: two structured clones of ~256 objects, on the main thread
// too. `fuse: true` on featurize runs it in parse's tasks: one crossing each way.
// Finite (a pass of ELEMENTS), seeded, JIT-stable int32 work (WORKLOADS.md).
import { range } from 'plumber-data';

const ELEMENTS = 6000;
const TOKENS = 256;

/** int32 multiply-xor steps from a small seed: stays optimised in any thread. */
function spin(seed: number, iterations: number): number {
  let h = seed | 0;
  for (let i = 0; i < iterations; i++) h = Math.imul(h ^ i, 0x01000193) | 0;
  return h;
}

export interface Token {
  id: number;
  start: number;
  length: number;
}

/** Element i as a record of TOKENS small objects, about 0.2 ms of work. */
export function parse(i: number): { line: number; tokens: Token[] } {
  const tokens: Token[] = [];
  let h = spin(i, 150_000);
  for (let t = 0; t < TOKENS; t++) {
    h = Math.imul(h ^ t, 0x01000193) | 0;
    tokens.push({ id: h & 0xffff, start: t * 5, length: (h >>> 16) & 7 });
  }
  return { line: i, tokens };
}

/** A 64-bucket hashed bag of the record's tokens, about 0.1 ms of work. */
export function featurize(r: { line: number; tokens: Token[] }): Int32Array {
  const out = new Int32Array(64);
  for (const t of r.tokens) out[t.id & 63] += t.length + 1;
  out[0] ^= spin(r.line, 80_000) & 1;
  return out;
}

export const pipeline = range(ELEMENTS).map(parse, { placement: 'worker', module: __filename, parallelism: 2 }).map(featurize, { placement: 'worker', module: __filename, parallelism: 2 }).batch(32);
