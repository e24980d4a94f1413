/**
 * The digits example's per-element steps, named exports so Plumber can place them in worker
 * threads. The augmentation is the classic one for MNIST (Simard et al., 2003): a small random
 * affine warp plus an elastic distortion.
 */
import type { Digit } from './data';

const SIDE = 28;
const PIXELS = SIDE * SIDE;
// The MNIST training set's mean and standard deviation.
const MEAN = 0.1307;
const STD = 0.3081;

/** The random generator plumber-data hands each call (`ctx.rng`), seeded per element. */
export interface ElementContext {
  rng: { float(): number };
}

/** A digit as the model sees it: normalised grey levels and its label. */
export interface Example {
  image: Float32Array;
  label: number;
}

/** Bytes to zero-mean, unit-variance floats. */
export function normalize(d: Digit): Example {
  const image = new Float32Array(PIXELS);
  for (let i = 0; i < PIXELS; i++) image[i] = (d.image[i] / 255 - MEAN) / STD;
  return { image, label: d.label };
}

/** A smoothed random displacement field (Gaussian blur of uniform noise, σ = 4). */
function displacement(rng: ElementContext['rng'], alpha: number): Float32Array {
  const noise = new Float32Array(PIXELS);
  for (let i = 0; i < PIXELS; i++) noise[i] = rng.float() * 2 - 1;
  const radius = 8;
  const kernel = new Float32Array(2 * radius + 1);
  let sum = 0;
  for (let k = -radius; k <= radius; k++) sum += kernel[k + radius] = Math.exp(-(k * k) / 32);
  const rows = new Float32Array(PIXELS);
  for (let y = 0; y < SIDE; y++) {
    for (let x = 0; x < SIDE; x++) {
      let v = 0;
      for (let k = -radius; k <= radius; k++) v += kernel[k + radius] * noise[y * SIDE + Math.min(SIDE - 1, Math.max(0, x + k))];
      rows[y * SIDE + x] = v / sum;
    }
  }
  const out = new Float32Array(PIXELS);
  for (let y = 0; y < SIDE; y++) {
    for (let x = 0; x < SIDE; x++) {
      let v = 0;
      for (let k = -radius; k <= radius; k++) v += kernel[k + radius] * rows[Math.min(SIDE - 1, Math.max(0, y + k)) * SIDE + x];
      out[y * SIDE + x] = (alpha * v) / sum;
    }
  }
  return out;
}

/** Bilinear sample of a 28×28 image at (x, y), with the background value outside. */
function sample(img: Float32Array, x: number, y: number, background: number): number {
  const x0 = Math.floor(x);
  const y0 = Math.floor(y);
  const at = (xx: number, yy: number): number => (xx < 0 || yy < 0 || xx >= SIDE || yy >= SIDE ? background : img[yy * SIDE + xx]);
  const wx = x - x0;
  const wy = y - y0;
  const top = at(x0, y0) + (at(x0 + 1, y0) - at(x0, y0)) * wx;
  const bottom = at(x0, y0 + 1) + (at(x0 + 1, y0 + 1) - at(x0, y0 + 1)) * wx;
  return top + (bottom - top) * wy;
}

/** Random rotation (±15°), scale (0.9–1.1) and shift (±2 px), then an elastic distortion (α = 34). */
export function augment(ex: Example, ctx: ElementContext): Example {
  const angle = ((ctx.rng.float() - 0.5) * Math.PI) / 6;
  const scale = 0.9 + 0.2 * ctx.rng.float();
  const dx = (ctx.rng.float() - 0.5) * 4;
  const dy = (ctx.rng.float() - 0.5) * 4;
  const fieldX = displacement(ctx.rng, 34 / SIDE);
  const fieldY = displacement(ctx.rng, 34 / SIDE);
  const cos = Math.cos(angle) / scale;
  const sin = Math.sin(angle) / scale;
  const c = (SIDE - 1) / 2;
  const background = -MEAN / STD;
  const image = new Float32Array(PIXELS);
  for (let y = 0; y < SIDE; y++) {
    for (let x = 0; x < SIDE; x++) {
      const i = y * SIDE + x;
      const u = x - c - dx + fieldX[i] * SIDE;
      const v = y - c - dy + fieldY[i] * SIDE;
      image[i] = sample(ex.image, cos * u + sin * v + c, -sin * u + cos * v + c, background);
    }
  }
  return { image, label: ex.label };
}
