/**
 * Worker fns for bench/data/numberArrays.ts: one per-call cost (a 3×3 box blur's total over a
 * 28×28 image of doubles, as nested plain arrays) timed inside the worker on the element as the
 * fn receives it (`handed`), or on a structured clone of it (`cloned`: what every fn got before
 * plumber-data kept number arrays unboxed). Two copies of the same loop, so each keeps its own
 * type feedback: one sees arrays of doubles only, the other the clone's arrays of boxed numbers.
 */
const CALLS = 40;

/** A 28×28 image of doubles, from an int32 seed (JIT-stable, see WORKLOADS.md). */
export function image(seed: number): number[][] {
  const rows: number[][] = [];
  for (let r = 0; r < 28; r++) {
    const row: number[] = [];
    for (let c = 0; c < 28; c++) row.push((Math.imul(seed + r * 28 + c, 0x9e3779b1) >>> 22) / 1024 + 0.001);
    rows.push(row);
  }
  return rows;
}

function blurHanded(img: number[][]): number {
  let t = 0;
  for (let r = 1; r < 27; r++) {
    const a = img[r - 1]!;
    const b = img[r]!;
    const c = img[r + 1]!;
    for (let k = 1; k < 27; k++) t += (a[k - 1]! + a[k]! + a[k + 1]! + b[k - 1]! + b[k]! + b[k + 1]! + c[k - 1]! + c[k]! + c[k + 1]!) / 9;
  }
  return t;
}

function blurCloned(img: number[][]): number {
  let t = 0;
  for (let r = 1; r < 27; r++) {
    const a = img[r - 1]!;
    const b = img[r]!;
    const c = img[r + 1]!;
    for (let k = 1; k < 27; k++) t += (a[k - 1]! + a[k]! + a[k + 1]! + b[k - 1]! + b[k]! + b[k + 1]! + c[k - 1]! + c[k]! + c[k + 1]!) / 9;
  }
  return t;
}

/** Nanoseconds per call of `f` on `img`, over CALLS calls, and the result (so the work is kept). */
function timed(f: (img: number[][]) => number, img: number[][]): { ns: number; total: number } {
  let total = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < CALLS; i++) total += f(img);
  return { ns: Number(process.hrtime.bigint() - t0) / CALLS, total: total / CALLS };
}

/** Per-call cost on the element as plumber-data hands it to the fn. */
export function handed(img: number[][]): { ns: number; total: number } {
  return timed(blurHanded, img);
}

/** Per-call cost on a structured clone of the element (boxed numbers), as before. */
export function cloned(img: number[][]): { ns: number; total: number } {
  return timed(blurCloned, structuredClone(img));
}
