/**
 * The streams-transform example's steps. `splitLines` is the async-generator parser people put in a
 * `pipeline()`; `featurize` is the per-review work of the `Featurize` Transform, a named export so
 * that it can also run in a worker thread.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** Hashed-feature dimensions of a review's vector. */
export const DIMENSIONS = 1024;
/** Hash functions of a review's MinHash signature (near-duplicate detection). */
export const SIGNATURE = 768;

/** A review as the model sees it: its star rating, hashed word-bigram counts and a MinHash signature. */
export interface ReviewFeatures {
  id: number;
  stars: number;
  counts: Float32Array;
  signature: Int32Array;
}

/** Text chunks (a gunzip's output) to lines, each line once, the last one even without a newline. */
export async function* splitLines(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of chunks) {
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) if (line) yield line;
  }
  if (rest) yield rest;
}

/** The 32-bit hash of a word (int32 arithmetic only, so it stays fast wherever it runs). */
function wordHash(text: string, from: number, to: number): number {
  let h = 5381;
  for (let i = from; i < to; i++) h = (Math.imul(h, 33) + text.charCodeAt(i)) | 0;
  return h;
}

/** One review line to features: about half a millisecond of integer arithmetic. */
export function featurize(line: string): ReviewFeatures {
  const { id, stars, text } = JSON.parse(line) as { id: number; stars: number; text: string };
  const words: number[] = [];
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 32;
    if (c === 32 || c === 46) {
      if (i > start) words.push(wordHash(text, start, i));
      start = i + 1;
    }
  }
  const counts = new Float32Array(DIMENSIONS);
  const signature = new Int32Array(SIGNATURE).fill(0x7fffffff);
  for (let w = 1; w < words.length; w++) {
    const bigram = (Math.imul(words[w - 1]!, 0x01000193) ^ words[w]!) | 0;
    counts[(bigram >>> 0) % DIMENSIONS]! += 1;
    let h = bigram;
    for (let k = 0; k < SIGNATURE; k++) {
      h = (Math.imul(h ^ (h >>> 16), 0x45d9f3b) + k) | 0;
      if (h < signature[k]!) signature[k] = h;
    }
  }
  return { id, stars, counts, signature };
}

/** The featurisation as a Transform in object mode: one review line in, its features out. */
export class Featurize extends Transform {
  constructor() {
    super({ objectMode: true });
  }
  override _transform(line: string, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      callback(null, featurize(line));
    } catch (e) {
      callback(e as Error);
    }
  }
}
