/**
 * bench:epoch's finite pipelines, with JIT-stable synthetic work (int32 arithmetic, see
 * /work/shared/WORKLOADS.md) standing in for a decode and an augmentation. Sizes shrink with
 * EPOCH_BENCH_QUICK=1 (the smoke test). Each says how many root elements one epoch holds
 * (`EPOCHS[name]`), which the measuring process uses to cut its run into epochs.
 */
import { range } from 'plumber-data';

const QUICK = process.env['EPOCH_BENCH_QUICK'] === '1';
/** Elements one pass of each pipeline holds. */
export function elementsOf(quick: boolean): number {
  return quick ? 300 : 1500;
}
const N = elementsOf(QUICK);
/** Rounds of the int32 loop per decode: about 1 ms here. */
const DECODE_ROUNDS = QUICK ? 150_000 : 600_000;
const AUGMENT_ROUNDS = QUICK ? 60_000 : 250_000;

function spin(seed: number, rounds: number): number {
  let h = seed | 0;
  for (let i = 0; i < rounds; i++) h = (Math.imul(h, 31) + i) | 0;
  return h;
}

/** `floats` numbers derived from the element and its decode's hash. */
function fill(h: number, floats: number): Float64Array {
  const out = new Float64Array(floats);
  for (let k = 0; k < floats; k++) out[k] = ((h + k * 7919) | 0) / 65536;
  return out;
}

/** A decode of about 1 ms to 32 numbers (256 bytes). */
function decodeSmall(i: number): Float64Array {
  return fill(spin(i + 1, DECODE_ROUNDS), 32);
}

/** A decode of about 1 ms to 8,192 numbers (64 kB). */
function decodeBig(i: number): Float64Array {
  return fill(spin(i + 1, DECODE_ROUNDS), 8192);
}

/** A random augmentation (a flip), with work of its own: the cache goes above it. */
function augment(x: Float64Array): Float64Array {
  const flip = Math.random() < 0.5;
  const h = spin(x.length, AUGMENT_ROUNDS);
  const out = flip ? x.slice().reverse() : x.slice();
  out[0] = (out[0] ?? 0) + (h & 1);
  return out;
}

/** Root elements (batches of 10) one epoch of each pipeline holds. */
export function epochsOf(quick: boolean): Record<'shuffleFill' | 'memoryCache' | 'diskCache', number> {
  const n = elementsOf(quick) / 10;
  return { shuffleFill: n, memoryCache: n, diskCache: n };
}

/** A shuffle of half the data right after the decode: the first batch waits for the buffer to fill. */
export const shuffleFill = range(N)
  .map(decodeSmall)
  .shuffle(N / 2, { seed: 7 })
  .batch(10);

/** Three epochs of a small decoded dataset with a random augmentation after it: a cache in memory, above the augmentation, pays after the first. */
export const memoryCache = range(N).map(decodeSmall).repeat(3).map(augment).batch(10);

/** Three epochs of 64 kB elements with a random augmentation after them: the cache goes above the augmentation, on disk when the budget is small. */
export const diskCache = range(N).map(decodeBig).repeat(3).map(augment).batch(10);
