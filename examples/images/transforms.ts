/**
 * The images example's per-element steps. Each is a named export of this module, so Plumber can
 * move any of them to worker threads without touching the pipeline's source.
 */
import { decode as decodeJpeg } from 'jpeg-js';

/** A decoded picture: RGB bytes, row-major, 3 bytes per pixel. */
export interface Rgb {
  width: number;
  height: number;
  data: Uint8Array;
}

/** The random generator plumber-data hands each call (`ctx.rng`), seeded per element. */
export interface ElementContext {
  rng: { float(): number; int(n: number): number };
}

export const SIZE = 224;
// ImageNet channel statistics, the ones every torchvision recipe uses.
const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];

/** JPEG bytes to RGB pixels, in pure JavaScript (jpeg-js): CPU-bound on the calling thread. */
export function decode(file: { bytes: Uint8Array }): Rgb {
  const img = decodeJpeg(file.bytes, { useTArray: true, formatAsRGBA: false });
  return { width: img.width, height: img.height, data: img.data };
}

/** Random-resized-crop box (8–100 % of the area, aspect 3:4 to 4:3) and a coin-flip mirror, as in ImageNet training. */
export function randomCropFlip(img: Rgb, ctx: ElementContext): Rgb {
  const area = img.width * img.height * (0.08 + 0.92 * ctx.rng.float());
  const aspect = Math.exp(Math.log(3 / 4) + (Math.log(4 / 3) - Math.log(3 / 4)) * ctx.rng.float());
  const w = Math.max(1, Math.min(img.width, Math.round(Math.sqrt(area * aspect))));
  const h = Math.max(1, Math.min(img.height, Math.round(Math.sqrt(area / aspect))));
  const x0 = ctx.rng.int(img.width - w + 1);
  const y0 = ctx.rng.int(img.height - h + 1);
  const mirror = ctx.rng.float() < 0.5;
  const out = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) {
    const src = ((y0 + y) * img.width + x0) * 3;
    const dst = y * w * 3;
    if (!mirror) {
      out.set(img.data.subarray(src, src + w * 3), dst);
      continue;
    }
    for (let x = 0; x < w; x++) {
      const s = src + (w - 1 - x) * 3;
      const d = dst + x * 3;
      out[d] = img.data[s];
      out[d + 1] = img.data[s + 1];
      out[d + 2] = img.data[s + 2];
    }
  }
  return { width: w, height: h, data: out };
}

/** Bilinear resize to 224×224. */
export function resize(img: Rgb): Rgb {
  const out = new Uint8Array(SIZE * SIZE * 3);
  const sx = img.width / SIZE;
  const sy = img.height / SIZE;
  for (let y = 0; y < SIZE; y++) {
    const fy = Math.max(0, (y + 0.5) * sy - 0.5);
    const y1 = Math.min(img.height - 1, Math.floor(fy));
    const y2 = Math.min(img.height - 1, y1 + 1);
    const wy = fy - y1;
    for (let x = 0; x < SIZE; x++) {
      const fx = Math.max(0, (x + 0.5) * sx - 0.5);
      const x1 = Math.min(img.width - 1, Math.floor(fx));
      const x2 = Math.min(img.width - 1, x1 + 1);
      const wx = fx - x1;
      const a = (y1 * img.width + x1) * 3;
      const b = (y1 * img.width + x2) * 3;
      const c = (y2 * img.width + x1) * 3;
      const d = (y2 * img.width + x2) * 3;
      const o = (y * SIZE + x) * 3;
      for (let k = 0; k < 3; k++) {
        const top = img.data[a + k] + (img.data[b + k] - img.data[a + k]) * wx;
        const bottom = img.data[c + k] + (img.data[d + k] - img.data[c + k]) * wx;
        out[o + k] = top + (bottom - top) * wy + 0.5;
      }
    }
  }
  return { width: SIZE, height: SIZE, data: out };
}

/** RGB bytes to a channel-first Float32Array (3×224×224) normalised with the ImageNet mean and deviation. */
export function normalize(img: Rgb): Float32Array {
  const plane = img.width * img.height;
  const out = new Float32Array(plane * 3);
  for (let i = 0; i < plane; i++) {
    for (let k = 0; k < 3; k++) out[k * plane + i] = (img.data[i * 3 + k] / 255 - MEAN[k]) / STD[k];
  }
  return out;
}
