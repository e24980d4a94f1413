/**
 * The generators example's per-record work: parsing a CSV line of accelerometer samples, and the
 * augmentation (a random shift and gain, seeded by the record's id, then a 256-bin magnitude
 * spectrum by a direct DFT). Named exports of their own module, as helpers usually are.
 */

/** Samples per recording. */
export const SAMPLES = 512;
/** Frequency bins of the spectrum. */
export const BINS = 256;
/** The seed of the example's data and augmentation; change it for other recordings. */
export const SEED = 49;

/** A recording: its id, activity label and samples. */
export interface Recording {
  id: number;
  label: number;
  signal: Float32Array;
}

/** What the model is fed: the spectrum of the augmented signal and the label. */
export interface Example {
  id: number;
  label: number;
  spectrum: Float32Array;
}

/** A deterministic 32-bit hash (int32 arithmetic only). */
export function hash(n: number): number {
  let h = (n ^ Math.imul(SEED, 0x9e3779b1)) | 0;
  for (let i = 0; i < 3; i++) h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) | 0;
  return h >>> 0;
}

/** One CSV line `id,label,s0,s1,…` to a recording. */
export function parseRecording(line: string): Recording {
  const fields = line.split(',');
  const signal = new Float32Array(SAMPLES);
  for (let i = 0; i < SAMPLES; i++) signal[i] = Number(fields[i + 2]);
  return { id: Number(fields[0]), label: Number(fields[1]), signal };
}

const COS = new Float64Array(SAMPLES * BINS);
const SIN = new Float64Array(SAMPLES * BINS);
for (let k = 0; k < BINS; k++) {
  for (let n = 0; n < SAMPLES; n++) {
    COS[k * SAMPLES + n] = Math.cos((2 * Math.PI * k * n) / SAMPLES);
    SIN[k * SAMPLES + n] = Math.sin((2 * Math.PI * k * n) / SAMPLES);
  }
}

/** Shifts the signal by up to ±32 samples and scales it by 0.8–1.2, then takes its magnitude spectrum. */
export function augmentRecording(r: Recording): Example {
  const h = hash(r.id + 1_000_003);
  const shift = (h % 65) - 32;
  const gain = 0.8 + ((h >>> 8) % 401) / 1000;
  const x = new Float64Array(SAMPLES);
  for (let n = 0; n < SAMPLES; n++) x[n] = gain * r.signal[(n + shift + SAMPLES) % SAMPLES]!;
  const spectrum = new Float32Array(BINS);
  for (let k = 0; k < BINS; k++) {
    let re = 0;
    let im = 0;
    const row = k * SAMPLES;
    for (let n = 0; n < SAMPLES; n++) {
      re += x[n]! * COS[row + n]!;
      im -= x[n]! * SIN[row + n]!;
    }
    spectrum[k] = Math.sqrt(re * re + im * im);
  }
  return { id: r.id, label: r.label, spectrum };
}
