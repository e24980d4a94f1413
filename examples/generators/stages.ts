/**
 * The generators example's stages, each an `async function*` consuming the one before it: the
 * way people write a pipeline with no library at all.
 */
import { SAMPLES, SEED, hash, augmentRecording, parseRecording, type Example, type Recording } from './transforms';

/** How many recordings the source yields. */
export const RECORDING_COUNT = 3000;

/**
 * The recordings as CSV lines, as a reader of an exported file would yield them: generated from
 * the seed (a sum of two sines per activity plus noise), so nothing large is committed.
 */
export async function* readLines(count: number = RECORDING_COUNT): AsyncGenerator<string> {
  for (let id = 0; id < count; id++) {
    const h = hash(id);
    const label = h % 6;
    const fields: string[] = [String(id), String(label)];
    let noise = (h ^ SEED) | 0;
    for (let n = 0; n < SAMPLES; n++) {
      noise = (Math.imul(noise, 1103515245) + 12345) | 0;
      const v = Math.sin((2 * Math.PI * (label + 1) * n) / 64) + 0.5 * Math.sin((2 * Math.PI * (label + 3) * n) / 16) + ((noise >>> 16) % 1000) / 2000 - 0.25;
      fields.push(v.toFixed(4));
    }
    yield fields.join(',');
  }
}

export async function* parse(lines: AsyncIterable<string>): AsyncGenerator<Recording> {
  for await (const line of lines) yield parseRecording(line);
}

export async function* augment(recordings: AsyncIterable<Recording>): AsyncGenerator<Example> {
  for await (const r of recordings) yield augmentRecording(r);
}

export async function* batch<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let current: T[] = [];
  for await (const item of items) {
    current.push(item);
    if (current.length === size) {
      yield current;
      current = [];
    }
  }
  if (current.length > 0) yield current;
}
