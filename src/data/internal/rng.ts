/**
 * Seeded randomness. Every random decision the library makes (shuffle order, `ctx.rng`) derives
 * from a seed, so a run can be reproduced and tools know which operators are random.
 */

let globalSeed: number | undefined;
/** A per-process seed used when neither an operator nor `setSeed` gives one. */
const processSeed = (Math.random() * 0x7fffffff) | 0;

/** Sets the global seed: shuffles and `ctx.rng` without their own seed derive from it. */
export function setSeed(seed: number): void {
  globalSeed = seed | 0;
}

/** The seed an operator uses when it was given none. */
export function defaultSeed(): number {
  return globalSeed ?? processSeed;
}

/** Mixes integers into a well-spread 32-bit state (murmur3's finaliser). */
export function mix(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ b;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/** A small, fast, seedable generator (mulberry32). */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed | 0;
  }
  /** A uniformly distributed unsigned 32-bit integer. */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** A float in [0, 1). */
  float(): number {
    return this.next() / 4294967296;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n);
  }
}

/** The seed of the generator handed to the fn for one element: unique to (seed, epoch, element index). */
export function elementSeed(seed: number, epoch: number, index: number): number {
  return mix(mix(seed, epoch), index);
}

/** The generator handed to the fn for one element (see `elementSeed`). */
export function elementRng(seed: number, epoch: number, index: number): Rng {
  return new Rng(elementSeed(seed, epoch, index));
}
