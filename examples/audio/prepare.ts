/**
 * The audio example's data: one-second, 16 kHz keyword-like clips (a few gliding tones under an
 * envelope, plus room noise) written as 16-bit PCM WAV files, generated on first use from a fixed
 * seed, in the shape of the Speech Commands dataset.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// plumber-data's seeded generator (mulberry32): the same seed gives the same data on every machine.
import { Rng } from 'plumber-data';

export const CLIP_DIR = join(__dirname, 'data', 'wav');
export const CLIP_COUNT = 256;
export const SAMPLE_RATE = 16_000;

/** Clip `n` as a complete WAV file. */
export function synthesize(n: number): Buffer {
  const seeded = new Rng(7000 + n);
  const rand = (): number => seeded.float();
  const samples = SAMPLE_RATE;
  const tones = Array.from({ length: 2 + Math.floor(rand() * 3) }, () => ({
    f0: 150 + rand() * 900,
    glide: (rand() - 0.5) * 600,
    start: rand() * 0.4,
    length: 0.2 + rand() * 0.4,
    gain: 0.1 + rand() * 0.25,
  }));
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(SAMPLE_RATE, 24);
  wav.writeUInt32LE(SAMPLE_RATE * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples * 2, 40);
  const phase = tones.map(() => 0);
  for (let i = 0; i < samples; i++) {
    const t = i / SAMPLE_RATE;
    let v = (rand() - 0.5) * 0.02;
    tones.forEach((tone, k) => {
      const u = (t - tone.start) / tone.length;
      phase[k] += (2 * Math.PI * (tone.f0 + tone.glide * t)) / SAMPLE_RATE;
      if (u > 0 && u < 1) v += tone.gain * Math.sin(Math.PI * u) * Math.sin(phase[k]);
    });
    wav.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(v * 32767))), 44 + i * 2);
  }
  return wav;
}

/** Makes sure the clips exist, writing them the first time (about a second). Safe when several processes race. */
export function ensureClips(): string {
  if (existsSync(CLIP_DIR)) {
    if (readdirSync(CLIP_DIR).length === CLIP_COUNT) return CLIP_DIR;
    rmSync(CLIP_DIR, { recursive: true, force: true });
  }
  const tmp = `${CLIP_DIR}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  for (let n = 0; n < CLIP_COUNT; n++) writeFileSync(join(tmp, `clip-${String(n).padStart(4, '0')}.wav`), synthesize(n));
  try {
    renameSync(tmp, CLIP_DIR);
  } catch {
    // Another process renamed its identical copy into place first.
    rmSync(tmp, { recursive: true, force: true });
  }
  return CLIP_DIR;
}

if (require.main === module) ensureClips();
