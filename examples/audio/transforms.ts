/**
 * The audio example's per-element steps, named exports so Plumber can place them in worker
 * threads. `logMel` is the expensive, deterministic part (a short-time Fourier transform and a
 * mel filter bank, in plain JavaScript); `specAugment` is cheap and random.
 */
const SAMPLE_RATE = 16_000;
const WINDOW = 400; // 25 ms
const HOP = 160; // 10 ms
const FFT = 512;
export const MELS = 64;

/** The random generator plumber-data hands each call (`ctx.rng`), seeded per element. */
export interface ElementContext {
  rng: { float(): number; int(n: number): number };
}

/** 16-bit PCM WAV bytes to samples in [-1, 1]. */
export function decodeWav(file: { bytes: Uint8Array }): Float32Array {
  const view = new DataView(file.bytes.buffer, file.bytes.byteOffset, file.bytes.byteLength);
  let at = 12;
  while (at + 8 <= view.byteLength) {
    const id = String.fromCharCode(view.getUint8(at), view.getUint8(at + 1), view.getUint8(at + 2), view.getUint8(at + 3));
    const size = view.getUint32(at + 4, true);
    if (id === 'data') {
      const out = new Float32Array(size / 2);
      for (let i = 0; i < out.length; i++) out[i] = view.getInt16(at + 8 + i * 2, true) / 32768;
      return out;
    }
    at += 8 + size;
  }
  throw new Error('This WAV file has no data chunk; regenerate the clips by deleting examples/audio/data.');
}

const hann = Float32Array.from({ length: WINDOW }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (WINDOW - 1)));
const melOf = (hz: number): number => 2595 * Math.log10(1 + hz / 700);
const hzOf = (mel: number): number => 700 * (10 ** (mel / 2595) - 1);
/** The triangular mel filters, one dense row of FFT/2+1 weights per mel band. */
const filters: Float32Array[] = Array.from({ length: MELS }, (_, m) => {
  const edge = (k: number): number => (hzOf((melOf(SAMPLE_RATE / 2) * k) / (MELS + 1)) * FFT) / SAMPLE_RATE;
  const [lo, mid, hi] = [edge(m), edge(m + 1), edge(m + 2)];
  return Float32Array.from({ length: FFT / 2 + 1 }, (_, b) => Math.max(0, Math.min((b - lo) / (mid - lo), (hi - b) / (hi - mid))));
});

/** In-place iterative radix-2 FFT. */
function fft(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j], re[i]];
      [im[i], im[j]] = [im[j], im[i]];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const angle = (-2 * Math.PI) / len;
    for (let i = 0; i < n; i += len) {
      for (let k = 0; k < len / 2; k++) {
        const wr = Math.cos(angle * k);
        const wi = Math.sin(angle * k);
        const a = i + k;
        const b = a + len / 2;
        const xr = re[b] * wr - im[b] * wi;
        const xi = re[b] * wi + im[b] * wr;
        re[b] = re[a] - xr;
        im[b] = im[a] - xi;
        re[a] += xr;
        im[a] += xi;
      }
    }
  }
}

/** Log-mel spectrogram (frames × 64, row-major), normalised to zero mean and unit variance per clip. */
export function logMel(samples: Float32Array): Float32Array {
  const frames = 1 + Math.floor((samples.length - WINDOW) / HOP);
  const out = new Float32Array(frames * MELS);
  const re = new Float64Array(FFT);
  const im = new Float64Array(FFT);
  const power = new Float64Array(FFT / 2 + 1);
  for (let f = 0; f < frames; f++) {
    re.fill(0);
    im.fill(0);
    for (let i = 0; i < WINDOW; i++) re[i] = samples[f * HOP + i] * hann[i];
    fft(re, im);
    for (let b = 0; b <= FFT / 2; b++) power[b] = re[b] * re[b] + im[b] * im[b];
    for (let m = 0; m < MELS; m++) {
      let e = 0;
      for (let b = 0; b <= FFT / 2; b++) e += filters[m][b] * power[b];
      out[f * MELS + m] = Math.log(e + 1e-10);
    }
  }
  let mean = 0;
  for (const v of out) mean += v;
  mean /= out.length;
  let variance = 0;
  for (const v of out) variance += (v - mean) ** 2;
  const std = Math.sqrt(variance / out.length) || 1;
  for (let i = 0; i < out.length; i++) out[i] = (out[i] - mean) / std;
  return out;
}

/** SpecAugment: one random time mask (up to 10 frames) and one random frequency mask (up to 8 bands). */
export function specAugment(mel: Float32Array, ctx: ElementContext): Float32Array {
  const out = mel.slice();
  const frames = out.length / MELS;
  const t = ctx.rng.int(11);
  const t0 = ctx.rng.int(frames - t + 1);
  const f = ctx.rng.int(9);
  const f0 = ctx.rng.int(MELS - f + 1);
  for (let i = t0; i < t0 + t; i++) out.fill(0, i * MELS, (i + 1) * MELS);
  for (let i = 0; i < frames; i++) out.fill(0, i * MELS + f0, i * MELS + f0 + f);
  return out;
}
